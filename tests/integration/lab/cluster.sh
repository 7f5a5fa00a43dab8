# cluster.sh — the lab as a small cluster on this machine (XMEM_LAB_CLUSTER=1, sourced by
# lab.sh): the login side (this network namespace: munged, slurmctld, xmemd, the tests'
# sbatch) and three nodes, each a network namespace of its own with its own slurmd: cpu1
# (partition cpu, where xmemd's profile jobs run) and gpu1, gpu2 (partition debug, the lab's
# fake GPUs each). A bridge joins them, so every node talks to the controller over a network,
# as on a site; the filesystem, MUNGE's socket and xmemd's stay shared, as a site's shared
# filesystem would make them. Namespaces and veths take milliseconds: the lab still starts
# in seconds. Everything made is recorded under $LAB/run and removed by cluster_down.

CLUSTER_BRIDGE=xmemlab0
CLUSTER_NET=10.77.0
CLUSTER_LOGIN_ADDR=$CLUSTER_NET.1
# Node name → its address's last byte. The order is the start order.
CLUSTER_NODES=(cpu1 gpu1 gpu2)
declare -A CLUSTER_HOST=([cpu1]=11 [gpu1]=12 [gpu2]=13)

cluster_ns() { echo "xmemlab-$1"; }

# Brings up the bridge and one namespace with a veth per node; idempotent after a crash
# (a previous lab's leftovers are removed first: the names are fixed, like the ports).
cluster_net_up() {
    local n ns
    cluster_net_down
    touch "$LAB/run/cluster" # lab_down's mark: XMEM_LAB_CLUSTER may be set for lab_up alone
    ip link add "$CLUSTER_BRIDGE" type bridge || lab_die "cannot create bridge $CLUSTER_BRIDGE (needs iproute2 and CAP_NET_ADMIN)"
    ip addr add "$CLUSTER_LOGIN_ADDR/24" dev "$CLUSTER_BRIDGE"
    ip link set "$CLUSTER_BRIDGE" up
    for n in "${CLUSTER_NODES[@]}"; do
        ns=$(cluster_ns "$n")
        ip netns add "$ns" || lab_die "cannot create network namespace $ns"
        ip link add "xl-$n" type veth peer name eth0 netns "$ns"
        ip link set "xl-$n" master "$CLUSTER_BRIDGE" up
        ip -n "$ns" addr add "$CLUSTER_NET.${CLUSTER_HOST[$n]}/24" dev eth0
        ip -n "$ns" link set eth0 up
        ip -n "$ns" link set lo up
    done
}

# Removes the namespaces (their veths go with them) and the bridge; silent when absent.
cluster_net_down() {
    local n
    for n in "${CLUSTER_NODES[@]}"; do
        ip netns del "$(cluster_ns "$n")" 2>/dev/null
        ip link del "xl-$n" 2>/dev/null
    done
    ip link del "$CLUSTER_BRIDGE" 2>/dev/null
    return 0
}

# The cluster's lines of slurm.conf in place of the one-node lab's: the controller on the
# bridge, three nodes with the hardware `slurmd -C` reports (CPUs, cores), two partitions.
# $1: the node's hardware words, $2: the GPU nodes' Gres=.
cluster_conf() {
    local hw=$1 gres=$2 conf=$LAB/etc/slurm.conf
    sed -i -e '/^NodeName=/d' -e '/^PartitionName=/d' \
        -e "s|^SlurmctldHost=\([^(]*\)(.*|SlurmctldHost=\1($CLUSTER_LOGIN_ADDR)|" \
        -e "s|^SlurmdPidFile=.*|SlurmdPidFile=$LAB/run/slurmd.%n.pid|" "$conf"
    {
        echo "NodeName=cpu1 NodeAddr=$CLUSTER_NET.${CLUSTER_HOST[cpu1]} $hw State=UNKNOWN"
        echo "NodeName=gpu1 NodeAddr=$CLUSTER_NET.${CLUSTER_HOST[gpu1]} $hw Gres=$gres State=UNKNOWN"
        echo "NodeName=gpu2 NodeAddr=$CLUSTER_NET.${CLUSTER_HOST[gpu2]} $hw Gres=$gres State=UNKNOWN"
        # Profile jobs are short and bounded; the partition's MaxTime is what a site sets.
        echo "PartitionName=cpu Nodes=cpu1 MaxTime=30 State=UP"
        echo "PartitionName=debug Nodes=gpu1,gpu2 Default=YES MaxTime=INFINITE State=UP"
    } >>"$conf"
    # gres.conf names the GPU nodes: cpu1 has none.
    sed -i -e 's/^Name=/NodeName=gpu[1-2] Name=/' "$LAB/etc/gres.conf"
}

# Starts one slurmd per node inside its namespace, in the foreground of a process whose pid
# is recorded (nsenter execs slurmd: the pid is slurmd's), so lab_down stops each by pid.
# All three append to the one-node lab's slurmd.log, which the tests read (57, 58).
cluster_start_slurmds() {
    local n
    for n in "${CLUSTER_NODES[@]}"; do
        mkdir -p "$LAB/spool/slurmd.$n"
        (
            setsid nsenter --net="/run/netns/$(cluster_ns "$n")" slurmd -D -N "$n" \
                -f "$SLURM_CONF" -L "$LAB/log/slurmd.log" \
                >>"$LAB/log/slurmd.$n.out" 2>&1 </dev/null {LAB_LOCK_FD}>&- &
            echo $! >"$LAB/run/slurmd.$n.pid.lab"
        )
    done
}

cluster_stop_slurmds() {
    local n
    for n in "${CLUSTER_NODES[@]}"; do lab_stop_pidfile "$LAB/run/slurmd.$n.pid.lab"; done
}

# Every slurmd alive and every node idle.
cluster_ready() {
    local n idle
    for n in "${CLUSTER_NODES[@]}"; do lab_pid_alive "$LAB/run/slurmd.$n.pid.lab" || return 1; done
    idle=$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | awk '$2 == "idle"' | sort -u | wc -l)
    [ "$idle" = "${#CLUSTER_NODES[@]}" ]
}
