#!/usr/bin/env bash
# Runs the integration tests that TESTS names, area by area, each in its own process with a
# timeout and under the lab lock (/tmp/xmem-lab.lock: the Slurm lab's fixed ports, and
# machines shared by several checkouts). `run-all.sh AREA...` runs only those areas.
# A script exits 0 (pass), 77 (skip, with a reason on stdout) or anything else (fail); its
# failed checks print "FAIL:" and the tails of the logs it watched (lib/assert.bash).
# Environment for the scripts: XMEM_BUILD (build tree), XMEM_SRC (source tree).
set -u
here=$(cd "$(dirname "$0")" && pwd)
export XMEM_SRC=$(cd "$here/../.." && pwd)
export XMEM_BUILD=${XMEM_BUILD:-$XMEM_SRC/build}
timeout_s=${XMEM_TEST_TIMEOUT:-900}
lock=/tmp/xmem-lab.lock

# listed: "AREA SCRIPT" for every script TESTS names, in its order.
listed() {
    awk '/^\[/ { area = substr($1, 2, length($1) - 2); next }
         /^[[:space:]]*(#|$)/ { next }
         { print area, $1 }' "$here/TESTS"
}

# scripts: every numbered test script here; numbers have two digits or more.
scripts() {
    (cd "$here" && ls | grep -E '^[0-9]{2,}-.*\.sh$' | sort)
}

# check_list: every NN-*.sh is named once, and every name is a script here; else exit 2.
check_list() {
    local wrong
    wrong=$( {
        listed | awk '{ print $2 }' | sort | uniq -d | sed 's/^/named twice in TESTS: /'
        comm -23 <(scripts) <(listed | awk '{ print $2 }' | sort) |
            sed 's/^/not in TESTS: /'
        comm -13 <(scripts) <(listed | awk '{ print $2 }' | sort -u) |
            sed 's/^/in TESTS but missing: /'
    })
    [ -z "$wrong" ] && return 0
    echo "$wrong" | sed 's/^/run-all: /' >&2
    exit 2
}

check_list
areas=" $* "
pass=0 fail=0 skip=0 failed=()
while read -r area script; do
    [ $# -eq 0 ] || [[ $areas == *" $area "* ]] || continue
    name=$(basename "$script" .sh)
    log=$(mktemp /tmp/xmem-it-$name.XXXXXX)
    start=$(date +%s)
    flock "$lock" timeout --kill-after=10 "$timeout_s" bash "$here/$script" >"$log" 2>&1 </dev/null
    rc=$?
    secs=$(( $(date +%s) - start ))
    case $rc in
    0) pass=$((pass + 1)); echo "ok   [$area] $name (${secs}s)" ;;
    77) skip=$((skip + 1)); echo "skip [$area] $name: $(tail -n 1 "$log")" ;;
    *) fail=$((fail + 1)); failed+=("$name"); echo "FAIL [$area] $name (exit $rc, ${secs}s); last lines:"
       tail -n 40 "$log" | sed 's/^/    /' ;;
    esac
    rm -f "$log"
done < <(listed)
echo "integration: $pass passed, $fail failed, $skip skipped${failed[*]:+ (failed: ${failed[*]})}"
[ "$fail" -eq 0 ]
