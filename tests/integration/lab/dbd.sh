# dbd.sh — the lab's Slurm accounting (XMEM_LAB_ACCOUNTING=1, sourced by lab.sh): a MariaDB
# server and slurmdbd from the Debian packages (slurmdbd, mariadb-server), both private to
# the lab's scratch directory, on loopback only, stopped by their pids. MariaDB runs as the
# package's unprivileged `mysql` user; slurmdbd runs as the lab's SlurmUser (root), which
# Slurm requires of it. Nothing the packages install as a system service is used.

LAB_DB_PORT=16830
LAB_DBD_PORT=16819
LAB_DB_PASS=xmem-lab # loopback only, a scratch database: a secret here protects nothing

lab_dbd_available() { [ -x /usr/sbin/slurmdbd ] && [ -x /usr/sbin/mariadbd ] && command -v mariadb-install-db >/dev/null; }

# The client as root over the server's own socket (unix_socket authentication).
lab_sql() { mariadb --no-defaults --socket="$LAB/db/mysqld.sock" -u root -N -B -e "$1"; }

lab_start_mariadb() {
    install -d -o mysql -g mysql -m 0700 "$LAB/db" "$LAB/db/data"
    install -o mysql -g mysql -m 0640 /dev/null "$LAB/log/mariadb.log" # its own, as mysql
    mariadb-install-db --no-defaults --user=mysql --datadir="$LAB/db/data" \
        --auth-root-authentication-method=socket --skip-test-db >"$LAB/log/mariadb-install.log" 2>&1 ||
        lab_die "mariadb-install-db failed: $(tail -n 3 "$LAB/log/mariadb-install.log")"
    (
        setsid /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$LAB/db/data" \
            --socket="$LAB/db/mysqld.sock" --pid-file="$LAB/db/mysqld.pid" \
            --bind-address=127.0.0.1 --port=$LAB_DB_PORT --log-error="$LAB/log/mariadb.log" \
            --innodb-buffer-pool-size=16M --skip-name-resolve </dev/null >/dev/null 2>&1 {LAB_LOCK_FD}>&- &
    )
    lab_wait_for 60 lab_sql "SELECT 1" || lab_die "MariaDB did not answer on $LAB/db/mysqld.sock"
    lab_sql "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY '$LAB_DB_PASS';
             GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" ||
        lab_die "cannot create slurmdbd's database user"
}

lab_write_dbd_conf() {
    # slurmdbd refuses a config others can read (it holds the database password).
    (
        umask 077
        cat >"$LAB/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$LAB/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$LAB_DBD_PORT
SlurmUser=root
LogFile=$LAB/log/slurmdbd.log
PidFile=$LAB/run/slurmdbd.pid
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$LAB_DB_PORT
StorageUser=slurm
StoragePass=$LAB_DB_PASS
StorageLoc=slurm_acct_db
EOF
    )
}

# The accounting.conf slurm.conf includes: slurmdbd when accounting is on, none otherwise.
lab_write_accounting() {
    if [ "${XMEM_LAB_ACCOUNTING:-0}" != 1 ]; then
        echo "AccountingStorageType=accounting_storage/none" >"$LAB/etc/accounting.conf"
        return 0
    fi
    cat >"$LAB/etc/accounting.conf" <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$LAB_DBD_PORT
# The munged that signs for slurmdbd connections (AuthInfo does not apply to them).
AccountingStoragePass=$LAB/munge/munge.socket
EOF
}

# Starts MariaDB and slurmdbd, then registers the cluster, an account and the lab's users
# (root, and xmemt1 where it exists) so that slurmctld can start and jobs get an account.
lab_start_dbd() {
    local u users=root
    [ "${XMEM_LAB_ACCOUNTING:-0}" = 1 ] || return 0
    lab_dbd_available || lab_die "XMEM_LAB_ACCOUNTING=1 needs slurmdbd and mariadb-server (make deps)"
    lab_start_mariadb
    lab_write_dbd_conf
    # slurmdbd reads slurmdbd.conf next to $SLURM_CONF (it has no option for its path).
    slurmdbd {LAB_LOCK_FD}>&- || lab_die "slurmdbd did not start"
    lab_wait_for 60 timeout 10 sacctmgr -i add cluster xmemlab ||
        lab_die "slurmdbd did not register the cluster"
    timeout 10 sacctmgr -i add account xmemlab Cluster=xmemlab >/dev/null ||
        lab_die "sacctmgr add account failed"
    id xmemt1 >/dev/null 2>&1 && users=root,xmemt1
    for u in ${users//,/ }; do
        timeout 10 sacctmgr -i add user "$u" DefaultAccount=xmemlab >/dev/null ||
            lab_die "sacctmgr add user $u failed"
    done
}

lab_stop_dbd() {
    [ -s "$LAB/run/slurmdbd.pid" ] || [ -s "$LAB/db/mysqld.pid" ] || return 0
    lab_stop_pidfile "$LAB/run/slurmdbd.pid"
    lab_stop_pidfile "$LAB/db/mysqld.pid"
}
