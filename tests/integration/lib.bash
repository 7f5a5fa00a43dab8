# Helpers sourced by integration scripts that check commands' exit status and output
# (the sim and estimate areas: 10-17, 30-estimate-common.bash), built on lib/assert.bash.
# The sourcing script sets $tmp (a scratch directory). These scripts keep going: each failed
# check prints what it saw and is counted (keep_going), and the script ends with finish.
. "$(dirname "${BASH_SOURCE[0]}")/lib/assert.bash"
keep_going

# expect RC PATTERN CMD...: runs CMD, checks the exit status and that the output (stdout and
# stderr, kept apart in $tmp/out and $tmp/err for expect_error) matches the extended regex.
expect() {
    local want_rc=$1 pattern=$2
    shift 2
    echo "+ $*"
    "$@" >"$tmp/out" 2>"$tmp/err"
    RUN_RC=$?
    RUN_OUT=$(cat "$tmp/out" "$tmp/err")
    expect_rc "$want_rc" "$*"
    expect_out "$pattern" "$*"
}

# expect_error PATTERN CMD...: exit 2 and exactly one stderr line, starting "xmem: ".
expect_error() {
    expect 2 "$@"
    expect_true "$*: one line on stderr" [ "$(wc -l <"$tmp/err")" = 1 ]
    expect_true "$*: stderr starts 'xmem: '" grep -q '^xmem: ' "$tmp/err"
}
