# Helpers sourced by integration scripts that check commands' exit status and output
# (10-sim-cli.sh, 30-estimate-common.bash). Not a test: run-all.sh runs only NN-*.sh.
# The sourcing script sets $tmp (a scratch directory) and fails=0; each failed check prints
# what it saw and adds one to $fails.

# expect RC PATTERN CMD...: runs CMD, checks the exit status and that the output matches.
expect() {
    local want_rc=$1 pattern=$2
    shift 2
    echo "+ $*"
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" != "$want_rc" ] || ! cat "$tmp/out" "$tmp/err" | grep -qE -- "$pattern"; then
        echo "FAIL: exit $rc (want $want_rc), output lacks /$pattern/:"; tail -n 20 "$tmp/out" "$tmp/err"
        fails=$((fails + 1))
    fi
}

# expect_error PATTERN CMD...: exit 2 and exactly one stderr line, starting "xmem: ".
expect_error() {
    expect 2 "$@"
    if [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -q '^xmem: ' "$tmp/err"; then
        echo "FAIL: expected one 'xmem:' line on stderr, got:"; cat "$tmp/err"
        fails=$((fails + 1))
    fi
}
