# Shared by the estimate tests (TESTS, area estimate): logged commands with checked exit
# status (lib.bash), checks of the estimate's JSON (expect_json), and a small hand-written
# trace that needs no profiler. Failed checks are counted (keep_going); a test ends with finish.
bin=$XMEM_BUILD/bin
# Jobs run Debian's torch 1.13: `python3` resolves on the job's PATH, so /usr/bin comes first.
export PATH="/usr/bin:$PATH"
# A profiled estimate takes minutes on a busy machine: run and run_to wait as long as
# run-all.sh waits for the whole test.
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
tmp=$(mktemp -d /tmp/xmem-it3x.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

# check_consistent FILE: the keys and relations every estimate must satisfy.
check_consistent() {
    local f=$1
    for key in peak_bytes limit_bytes reserved_peak_bytes allocated_peak_bytes context_bytes fits \
               breakdown gpu torch iterations profile_seconds analyze_seconds mode coverage; do
        expect_json "$f" "'$key' in j" "JSON key $key present"
    done
    expect_json "$f" "j['mode'] in ('exact', 'fast')" "mode names the capture"
    expect_json "$f" "j['peak_bytes'] >= j['reserved_peak_bytes'] + j['context_bytes']" "peak >= reserved + context"
    expect_json "$f" "j['limit_bytes'] >= j['peak_bytes']" "limit >= peak"
    expect_json "$f" "j['fits'] == (not j['oom'] and j['peak_bytes'] <= j['gpu_total_bytes'])" "fits agrees with the GPU size"
    expect_json "$f" "sum(j['breakdown'].values()) == j['peak_bytes']" "breakdown adds up to the peak"
    expect_json "$f" "j['allocated_peak_bytes'] <= j['reserved_peak_bytes']" "allocated <= reserved"
}

# A two-iteration Linear + Adam capture as xmem-profile writes it (torch 1.13 semantics).
write_small_trace() {
    cat >"$1" <<'TRACE'
#xmem-trace 1
M torch 1.13.1
M capture exact
M zero_grad_set_to_none 0
M amp off
P setup
S 1 |aten::to>aten::empty_strided
A 1 4194304 g 0 1
A 2 4096 g 0 1
I 1
P zero_grad
P data
S 2 |enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__>aten::cat
A 3 1048576 h 0 2
A 4 1048576 g 0 1
P forward
S 3 fc|aten::linear>aten::addmm
A 5 1048576 g 0 3
S 4 CrossEntropyLoss|aten::cross_entropy_loss>aten::nll_loss_forward
A 6 4 g 0 4
P backward
S 5 |autograd::engine::evaluate_function: AddmmBackward0>aten::mm
A 7 4194304 g 0 5
A 8 4096 g 0 5
F 6
F 5
P optimizer
S 6 |Optimizer.step#Adam.step>aten::zeros_like
A 9 4194304 g 0 6
A 10 4194304 g 0 6
A 11 4096 g 0 6
A 12 4096 g 0 6
S 7 |Optimizer.step#Adam.step>aten::sqrt
A 13 4194304 g 0 7
F 13
I 2
P zero_grad
P data
F 3
F 4
A 14 1048576 h 0 2
A 15 1048576 g 0 1
P forward
A 16 1048576 g 0 3
A 17 4 g 0 4
P backward
A 18 4194304 g 0 5
A 19 4096 g 0 5
F 18
F 19
F 17
F 16
P optimizer
A 20 4194304 g 0 7
F 20
Z 20 10 18890752
TRACE
}
