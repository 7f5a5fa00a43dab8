#!/usr/bin/env bash
# Issue 35: `xmemd --check-config` lists every problem of a file, one "FILE:LINE: key: problem;
# fix" line each, on the malformed configs the daemon tests use; and the shipped unit's
# ExecReload, run as etc/xmemd.service writes it, refuses a broken file before any signal: the
# reload fails, xmemd keeps running with the config it had, and never hears of the file.
. "$(dirname "$0")/40-daemon.d/lib.sh"
one_user_setup
write_config "max_concurrent: 2" "max_per_user: 2"
cp "$T/xmem.yaml" "$T/good.yaml"

# check FILE: runs --check-config on FILE; RUN_RC its status, $T/problems its lines.
check() {
    run "$B/xmemd" --config "$1" --check-config
    printf '%s\n' "$RUN_OUT" | grep -v '^$' >"$T/problems"
}
# expect_problems FILE N: N lines, each FILE:LINE: then the problem, "; " and a fix.
expect_problems() {
    expect_true "--check-config passed $1" [ "$RUN_RC" != 0 ]
    expect_eq "$(wc -l <"$T/problems")" "$2" "problems listed for $1: $(cat "$T/problems")"
    local bad
    bad=$(grep -Ev "^$1:[0-9]+: [^;]+; .+" "$T/problems")
    expect_eq "$bad" "" "lines without FILE:LINE or a fix"
}

log "--check-config on the daemon tests' malformed configs"
# 40-daemon-basics: an unknown key (a typo).
printf 'socket: %s\nmax_concurent: 3\n' "$SOCK" >"$T/typo.yaml"
check "$T/typo.yaml"
expect_problems "$T/typo.yaml" 1
expect_true "typo: $(cat "$T/problems")" grep -q "^$T/typo.yaml:2: max_concurent: unknown key; " "$T/problems"
# 45-daemon-signals: a word where a number goes.
sed "s/^max_concurrent: 2$/max_concurrent: lots/" "$T/good.yaml" >"$T/lots.yaml"
check "$T/lots.yaml"
expect_problems "$T/lots.yaml" 1
expect_true "lots: $(cat "$T/problems")" grep -q ":[0-9]*: max_concurrent: invalid integer: lots; write a whole number" "$T/problems"
# 64-daemon-user-text-bounds: an empty file, and an estimator that is not installed.
: >"$T/empty.yaml"
check "$T/empty.yaml"
expect_problems "$T/empty.yaml" 1
sed "s|^estimator: .*|estimator: [$T/no-such-estimator, --json]|" "$T/good.yaml" >"$T/noest.yaml"
check "$T/noest.yaml"
expect_problems "$T/noest.yaml" 1
expect_true "estimator: $(cat "$T/problems")" grep -q "no-such-estimator is not an executable file" "$T/problems"
# The unit tests' kinds (tests/unit/daemon/test_config.cpp) in one file: each is listed.
cat "$T/good.yaml" - >"$T/many.yaml" <<'YAML'
steps: 1001
allow_root: maybe
log: journal
limits:
  nice: 20
  walls: 3
cache: {ttl_seconds: x}
metrics_listen: nowhere
policy:
  mode: slice
  default: {gpu: 'A 100'}
  partitions:
    p: {colour: red}
YAML
check "$T/many.yaml"
expect_problems "$T/many.yaml" 10
printf '\n{"policy": {"mode": "shard"\n' >"$T/syntax.yaml"
check "$T/syntax.yaml"
expect_problems "$T/syntax.yaml" 1
check "$T/good.yaml"
expect_rc 0 "--check-config on a good file: $RUN_OUT"

log "the unit's ExecReload, as etc/xmemd.service writes it"
unit=$SRC/etc/xmemd.service
start_config=$(sed -n 's/^ExecStart=.* --config \([^ ]*\).*/\1/p' "$unit")
expect_true "no --config in ExecStart" [ -n "$start_config" ]
mapfile -t reload < <(sed -n 's/^ExecReload=//p' "$unit")
expect_true "ExecReload does not run --check-config: ${reload[*]}" \
    grep -q -- "xmemd --config $start_config --check-config" <<<"${reload[0]}"
# reload_unit: each ExecReload line in order, as systemd runs them (the first that fails ends
# the reload and fails it; a "-" prefix ignores a failure), with the unit's xmemd, config and
# $MAINPID mapped to this test's. RUN_RC: the reload's status, RUN_OUT: what it printed.
reload_unit() {
    local line words rc=0 out="" config=$T/xmem.yaml
    for line in "${reload[@]}"; do
        line=${line//"$start_config"/$config}
        line=${line//\$MAINPID/$XMEMD_PID}
        read -ra words <<<"${line#-}"
        [ "${words[0]##*/}" = xmemd ] && words[0]=$B/xmemd # wherever the unit installs it
        out+=$("${words[@]}" 2>&1) || rc=$?
        [ "$rc" != 0 ] && [ "${line:0:1}" = - ] && rc=0
        [ "$rc" != 0 ] && break
    done
    RUN_RC=$rc RUN_OUT=$out
}
# est OUT: the test user's estimate, its reply in OUT
est() { run_to "$1" runuser -u xmemt1 -- "$L" estimate "$SOCK" --cwd "$T/w" -- python3 train.py; }

start_xmemd
est "$T/a"
expect_rc 0 "first estimate"
cp "$T/many.yaml" "$T/xmem.yaml"
reload_unit
expect_true "the reload of a broken file succeeded" [ "$RUN_RC" != 0 ]
expect_true "the reload's problems: $RUN_OUT" grep -q "^$T/xmem.yaml:[0-9]*: limits.walls: unknown key; " <<<"$RUN_OUT"
sleep 0.5
expect_true "xmemd stopped after a refused reload" kill -0 "$XMEMD_PID"
expect_false "the broken file reached xmemd (SIGHUP)" grep -q "SIGHUP" "$T/xmemd.log"
expect_eq "$(status_field max_concurrent)" 2 "the old config in force"
est "$T/b"
expect_rc 0 "estimate after the refused reload"
expect_eq "$(kv "$T/b" cached)" 1 "the cache kept (the config unchanged)"

log "a sound, changed file reloads"
sed 's/^max_per_user: 2$/max_per_user: 1/' "$T/good.yaml" >"$T/xmem.yaml"
reload_unit
expect_rc 0 "reload of a good file: $RUN_OUT"
sleep 0.5
expect_true "reload not logged" grep -q "SIGHUP: reloaded $T/xmem.yaml (changed; cache cleared)" "$T/xmemd.log"
expect_eq "$(status_field max_per_user)" 1 "the new config in force"
stop_xmemd
finish
