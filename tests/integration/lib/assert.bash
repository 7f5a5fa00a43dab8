# assert.bash — the one assertion library of the integration tests. Every helper file
# (lib.bash, the *-common.bash files, 40-daemon.d/lib.sh, lab/lab.sh and lab/testlib.sh)
# sources it, so a check reads and fails the same way in every area:
#   run CMD...              runs CMD with a timeout: RUN_OUT = stdout+stderr, RUN_RC = status
#   run_to FILE CMD...      runs CMD like run, its stdout into FILE (a JSON report): RUN_OUT =
#                           its stderr
#   run_ok CMD...           runs CMD, prints its output; fails the test unless it exits 0
#   expect_rc RC WHAT       the last run's status is RC
#   expect_out RE WHAT      the last run's output matches the extended regex RE
#   expect_no_out RE WHAT   ... and does not
#   expect_eq GOT WANT WHAT two values are equal
#   expect_true WHAT CMD... CMD succeeds: a test ([ ... ]), a grep of a file, a checker
#   expect_false WHAT CMD.. CMD fails (nothing left behind, no line that must not be there)
#   expect_json FILE EXPR WHAT      the Python expression EXPR holds over the JSON object `j`
#                           in FILE (json FILE EXPR prints such an expression)
#   expect_field OF KEY WANT WHAT   field KEY of OF is WANT: field_of reads it; by default OF is
#                           a JSON file and KEY a dotted path, the Slurm lab reads a job's field
#   agree WHAT EXACT GOT TOLERANCE  GOT is within TOLERANCE (a fraction) of EXACT
#   dump_dom PAGE OUT       the DOM headless Chromium builds from the HTML file PAGE, into OUT
#   pass WHAT               counts a check that held
#   fail WHAT               "FAIL: WHAT", the last run's output, the tail of every watched log,
#                           and the test ends (exit 1)
#   miss WHAT               "FAIL: WHAT" and the tails, counted; the test goes on to finish
#   keep_going              from here on a failed expect_* is a miss, not a fail: the test
#                           runs every check and ends with finish; a check the rest needs
#                           ends it there: expect_rc 0 "the estimate" || finish
#   finish                  exit 1 if any check missed, else a count of what passed, exit 0
#   log_watch PATH...       logs whose tails a failure prints (a glob is expanded at failure:
#                           the daemon's log, slurmctld's and slurmd's)
# Not a test: run-all.sh runs the scripts tests/integration/TESTS names.
[ -n "${XMEM_ASSERT_LOADED:-}" ] && return 0
XMEM_ASSERT_LOADED=1
T_NAME=${T_NAME:-$(basename "$0" .sh)}
T_PASS=0
fails=0
T_LOGS=()
T_NOT_HELD=fail
RUN_OUT=

log_watch() { T_LOGS+=("$@"); }

# log_tails: the last 25 lines of every watched log that has any, on stderr.
log_tails() {
    local pattern f
    for pattern in "${T_LOGS[@]}"; do
        for f in $pattern; do
            [ -s "$f" ] || continue
            echo "---- $f (last 25 lines)" >&2
            tail -n 25 "$f" >&2
        done
    done
}

# failure_report WHAT: what a failed check prints, on stderr (shown when stdout is not).
failure_report() {
    echo "FAIL: [$T_NAME] $*" >&2
    [ -n "$RUN_OUT" ] && { echo "---- last command output:" >&2; echo "$RUN_OUT" >&2; }
    log_tails
}

fail() {
    failure_report "$@"
    exit 1
}

miss() {
    failure_report "$@"
    fails=$((fails + 1))
}

keep_going() { T_NOT_HELD=miss; }

# not_held WHAT: an expect_* check did not hold: the test ends (fail), or under keep_going
# the miss is counted and the check returns 1 (a keep_going script does not `set -e`).
not_held() {
    "$T_NOT_HELD" "$@"
    return 1
}

pass() {
    T_PASS=$((T_PASS + 1))
    echo "ok $T_PASS - $*"
}

finish() {
    if [ "$fails" -ne 0 ]; then
        echo "$T_NAME: $fails check(s) failed"
        exit 1
    fi
    echo "$T_NAME: $T_PASS checks passed"
    exit 0
}

# run and run_to take any status, under `set -e` too: the checks that follow judge it.
run() {
    RUN_RC=0
    RUN_OUT=$(timeout "${RUN_TIMEOUT:-120}" "$@" 2>&1) || RUN_RC=$?
    echo "\$ $* -> $RUN_RC" >&2
}

run_to() {
    local out=$1
    shift
    RUN_RC=0
    RUN_OUT=$(timeout "${RUN_TIMEOUT:-120}" "$@" 2>&1 >"$out") || RUN_RC=$?
    echo "\$ $* >$out -> $RUN_RC" >&2
}

run_ok() {
    echo "+ $*" >&2
    RUN_RC=0
    RUN_OUT=$("$@" 2>&1) || RUN_RC=$?
    [ "$RUN_RC" -eq 0 ] || fail "exit $RUN_RC: $*"
    echo "$RUN_OUT"
    RUN_OUT=
}

# expect_true WHAT CMD...: the primitive of every expect_*: a check that held is counted
# (finish says how many), one that did not is not_held.
expect_true() {
    local what=$1
    shift
    if "$@"; then
        T_PASS=$((T_PASS + 1))
    else
        not_held "$what"
    fi
}

expect_false() {
    local what=$1
    shift
    if "$@"; then
        not_held "$what"
    else
        T_PASS=$((T_PASS + 1))
    fi
}

expect_rc() { expect_true "$2: exit status $RUN_RC, expected $1" [ "$RUN_RC" = "$1" ]; }
expect_out() { expect_true "$2: output lacks /$1/" grep -qE -- "$1" <<<"$RUN_OUT"; }
expect_no_out() { expect_false "$2: output has /$1/" grep -qE -- "$1" <<<"$RUN_OUT"; }
expect_eq() { expect_true "$3: expected '$2', got '$1'" [ "$1" = "$2" ]; }

# json FILE EXPR: prints the Python expression EXPR over the JSON object `j` in FILE.
json() {
    /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

expect_json() { expect_true "$3 ($2) in $1" [ "$(json "$1" "bool($2)")" = True ]; }

# field_of FILE KEY: KEY (a.b.c) of the JSON object in FILE. A helper file may redefine it.
field_of() {
    /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[k]
print(d)' "$1" "$2"
}

expect_field() {
    local got
    got=$(field_of "$1" "$2")
    expect_true "$4: $1 $2='$got', expected '$3'" [ "$got" = "$3" ]
}

# within TOLERANCE EXACT GOT: true when GOT is within TOLERANCE (a fraction) of EXACT.
within() {
    /usr/bin/python3 -c "import sys; e, g = $2, $3; sys.exit(0 if abs(g - e) <= $1 * e else 1)"
}

agree() {
    expect_true "$1: exact $2, fast $3 (more than $4 apart)" within "$4" "$2" "$3" &&
        echo "ok: $1: exact $2, fast $3"
}

# dump_dom PAGE OUT: the DOM headless Chromium builds from the local HTML file PAGE (its
# scripts run, no network), into OUT; the test fails when Chromium does.
dump_dom() {
    local profile
    profile=$(mktemp -d)
    timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$profile" --dump-dom "file://$1" >"$2" 2>"$2.err" || {
        rm -rf "$profile"
        fail "chromium: $(tail -n 3 "$2.err")"
    }
    rm -rf "$profile"
}
