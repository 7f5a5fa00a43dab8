# What the benches of issue targets share (targets.sh, multigpu.sh): a run measured by
# /usr/bin/time, the one line that says why a run failed, and a row of figure, target and
# ratio. bench_start NAME first: $venv (the bench's), then $tmp.

# bench_start NAME: the venv first on PATH (or one line and exit), models from configs
# only, and $tmp, the scratch directory, removed at exit.
bench_start() {
    [ -x "$venv/bin/python" ] || { echo "xmem: bench/$1.sh: no venv at $venv (make deps)" >&2; exit 1; }
    export PATH=$venv/bin:$PATH HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
    tmp=$(mktemp -d "/tmp/xmem-bench-$1.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
}

# measure NAME COMMAND...: COMMAND under /usr/bin/time; "seconds max_rss_kib" (the largest
# process's) in $tmp/NAME.time, stdout in $tmp/NAME.out; returns the command's status.
measure() {
    local name=$1
    shift
    /usr/bin/time -o "$tmp/$name.time" -f "%e %M %U %S" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
}

# why NAME: the one line that says why a run failed.
why() { grep -m1 '^xmem:' "$tmp/$1.err" || tail -n 1 "$tmp/$1.err"; }
seconds() { cut -d' ' -f1 "$tmp/$1.time"; }
cpu_seconds() { awk '{printf "%.2f", $3 + $4}' "$tmp/$1.time"; }
rss_gib() { awk '{printf "%.2f", $2 / 1048576}' "$tmp/$1.time"; }

# row WHAT FIGURE UNIT TARGET: one line, figure / target as the ratio.
row() {
    awk -v w="$1" -v f="$2" -v u="$3" -v t="$4" 'BEGIN {
        printf "%-52s %10.2f %-4s %8.2f %6.2f  %s\n", w, f, u, t, f / t, (f <= t ? "ok" : "OVER") }'
}
fail_row() { printf '%-52s %10s %-4s %8s %6s  FAILED: %s\n' "$1" - "" "$2" - "$3"; }
