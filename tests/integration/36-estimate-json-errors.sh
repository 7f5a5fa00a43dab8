#!/usr/bin/env bash
# Issue 17 class 10: --json prints exactly one JSON object on stdout, on failure too
# ({"error", "outcome"}, docs/estimate.md), even when the job prints; --gpu A100 is
# ambiguous (A100-40GB or A100-80GB) and --torch 2.99 unknown: both refused, naming the
# candidates; uncalibrated catalog terms are listed in the estimate.
set -u
. "$(dirname "$0")/30-estimate-common.bash"
[ -x "$bin/xmem-estimate" ] || { echo "xmem-estimate not built in $XMEM_BUILD"; exit 77; }
write_small_trace "$tmp/small.xtrace"

# one_error OUTCOME PATTERN ARGS...: exit 2, stdout one JSON object with that outcome whose
# error matches PATTERN.
one_error() {
    local outcome=$1 pattern=$2
    shift 2
    run_to "$tmp/err.json" "$bin/xmem-estimate" --json "$@"
    expect_rc 2 "xmem-estimate --json $*"
    expect_json "$tmp/err.json" "set(j) == {'error', 'outcome'} and j['outcome'] == '$outcome'" "one error object, outcome $outcome"
    expect_json "$tmp/err.json" "__import__('re').search(r'''$pattern''', j['error'])" "error says /$pattern/"
}
one_error usage 'unknown option' --colour --trace-in "$tmp/small.xtrace"
one_error usage 'unknown PyTorch release \(known: 1\.13, 2\.0' --torch 2.99 --trace-in "$tmp/small.xtrace"
one_error target 'ambiguous, it could be A100-40GB, A100-80GB' --gpu A100 --trace-in "$tmp/small.xtrace"
one_error target 'not in the catalog' --gpu B999 --trace-in "$tmp/small.xtrace"
one_error bad_trace 'xmem: ' --trace-in /dev/null
# A unique alias stays valid.
run_to "$tmp/h100.json" "$bin/xmem-estimate" --json --gpu H100 --trace-in "$tmp/small.xtrace"
expect_rc 0 "--gpu H100 (one full name) accepted"
expect_json "$tmp/h100.json" "j['gpu'] == 'H100-80GB'" "H100 means H100-80GB"
expect_json "$tmp/h100.json" "'context_mib' in j['uncalibrated_catalog_terms']" "H100's guessed context is marked"
# A job that prints and then fails: stdout is still exactly one JSON object.
if [ -x "$bin/xmem-profile" ]; then
    printf 'print("hello from the job")\nraise SystemExit(3)\n' >"$tmp/noisy.py"
    one_error profile_failed 'xmem: ' -- /usr/bin/python3 "$tmp/noisy.py"
fi
finish
