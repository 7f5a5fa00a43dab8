# Helpers sourced by integration scripts that check commands' exit status and output
# (10-sim-cli.sh, 30-estimate-common.bash), built on lib/assert.bash. Not a test.
# The sourcing script sets $tmp (a scratch directory); each failed check prints what it saw
# and is counted (miss), and the script ends with finish.
. "$(dirname "${BASH_SOURCE[0]}")/lib/assert.bash"

# expect RC PATTERN CMD...: runs CMD, checks the exit status and that the output matches.
expect() {
    local want_rc=$1 pattern=$2
    shift 2
    echo "+ $*"
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" != "$want_rc" ] || ! cat "$tmp/out" "$tmp/err" | grep -qE -- "$pattern"; then
        miss "exit $rc (want $want_rc), output lacks /$pattern/:"
        tail -n 20 "$tmp/out" "$tmp/err"
    fi
}

# expect_error PATTERN CMD...: exit 2 and exactly one stderr line, starting "xmem: ".
expect_error() {
    expect 2 "$@"
    if [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -q '^xmem: ' "$tmp/err"; then
        miss "expected one 'xmem:' line on stderr, got:"
        cat "$tmp/err"
    fi
}
