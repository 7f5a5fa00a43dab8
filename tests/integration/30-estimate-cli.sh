#!/usr/bin/env bash
# xmem estimate's command line without a profiler: help, every usage error as one "xmem:"
# line with exit 2, --trace-in on a hand-written trace (human, JSON, timeline), the catalog
# search order and a broken catalog.
set -u
. "$(dirname "$0")/30-estimate-common.bash"
[ -x "$bin/xmem-estimate" ] || { echo "xmem-estimate not built in $XMEM_BUILD"; exit 77; }
write_small_trace "$tmp/small.xtrace"

expect 0 'usage: xmem estimate' "$bin/xmem-estimate" --help
expect_error 'no training command' "$bin/xmem-estimate"
expect_error '--colour: unknown option' "$bin/xmem-estimate" --colour -- python3 x.py
expect_error '--steps: expected a whole number' "$bin/xmem-estimate" --steps zero -- python3 x.py
expect_error '--gpu B300: not in the catalog' "$bin/xmem-estimate" --gpu B300 --trace-in "$tmp/small.xtrace"
expect_error 'torch' "$bin/xmem-estimate" --torch 0.4 --trace-in "$tmp/small.xtrace"
expect_error "PYTORCH_CUDA_ALLOC_CONF" "$bin/xmem-estimate" --alloc-conf max_split_size_mb:x --trace-in "$tmp/small.xtrace"
# PYTORCH_ALLOC_CONF is torch's from 2.9 on; before it reads only PYTORCH_CUDA_ALLOC_CONF.
PYTORCH_ALLOC_CONF=max_split_size_mb:x expect 0 'recommended limit' "$bin/xmem-estimate" --torch 2.6 --trace-in "$tmp/small.xtrace"
PYTORCH_ALLOC_CONF=max_split_size_mb:x expect_error 'max_split_size_mb' "$bin/xmem-estimate" --torch 2.9 --trace-in "$tmp/small.xtrace"
PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:x expect_error 'max_split_size_mb' "$bin/xmem-estimate" --torch 2.6 --trace-in "$tmp/small.xtrace"
expect_error 'cannot open' "$bin/xmem-estimate" --trace-in "$tmp/missing.xtrace"
printf '#xmem-trace 1\nA 1 10 g 0 0\n' >"$tmp/truncated.xtrace"
expect_error 'truncated|missing|Z' "$bin/xmem-estimate" --trace-in "$tmp/truncated.xtrace"
expect_error '--catalog /nonexistent.yaml: no such file' "$bin/xmem-estimate" --catalog /nonexistent.yaml --trace-in "$tmp/small.xtrace"
printf 'gpus:\n  - name: X\n    colour: red\n' >"$tmp/bad.yaml"
expect_error 'bad.yaml:3: colour: unknown key' "$bin/xmem-estimate" --catalog "$tmp/bad.yaml" --trace-in "$tmp/small.xtrace"
XMEM_CATALOG="$tmp/bad.yaml" expect_error 'bad.yaml:3' "$bin/xmem-estimate" --trace-in "$tmp/small.xtrace"

# Human output names the peak, the limit, the fit and every breakdown line.
expect 0 'recommended limit' "$bin/xmem-estimate" --gpu A100-40GB --torch 2.1 --trace-in "$tmp/small.xtrace"
for word in 'peak GPU memory' 'fits: yes' weights gradients optimizer_state activations workspaces \
            'allocator cache' 'CUDA context'; do
    expect_true "human output names '$word'" grep -q "$word" "$tmp/out"
done

# JSON, with the timeline page written beside it.
run_to "$tmp/a100.json" "$bin/xmem-estimate" --gpu A100-40GB --torch 2.1 --json --timeline "$tmp/t.html" \
    --trace-in "$tmp/small.xtrace"
expect_rc 0 "--json run"
check_consistent "$tmp/a100.json"
expect_json "$tmp/a100.json" "j['steps'] == 2 and j['iterations'] == 2" "two steps, under both names"
expect_json "$tmp/a100.json" "j['corrections']['cublas_workspaces'] == 2" "forward and backward cuBLAS handles"
expect_json "$tmp/a100.json" "j['breakdown']['optimizer_state'] == 2 * 4194304 + 2 * 4096" "Adam moments at the peak"
expect_true "timeline page has the plot" grep -q '<svg' "$tmp/t.html"
expect_true "timeline page has the step marks" grep -q 'step 2' "$tmp/t.html"

# Hopper's 32 MiB cuBLAS workspace shows up in the workspace term; a small GPU does not fit.
"$bin/xmem-estimate" --gpu H100-80GB --torch 2.1 --json --trace-in "$tmp/small.xtrace" >"$tmp/h100.json"
expect_json "$tmp/h100.json" "j['breakdown']['workspaces'] >= 2 * 32 * 2**20" "two 32 MiB workspaces on Hopper"
printf 'gpus:\n  - name: Tiny\n    total_memory_mib: 600\n    compute_capability: "8.0"\n    context_mib: 580\n    cublas_workspace_kib: 8320\n    cublaslt_workspace_kib: 1024\n    cudnn_context_mib: 100\n    sources: {total_memory_mib: "made up for the test", compute_capability: "made up for the test", context_mib: "made up for the test", cublas_workspace_kib: "made up for the test", cublaslt_workspace_kib: "made up for the test", cudnn_context_mib: "made up for the test"}\n' >"$tmp/tiny.yaml"
"$bin/xmem-estimate" --catalog "$tmp/tiny.yaml" --gpu tiny --json --trace-in "$tmp/small.xtrace" >"$tmp/tiny.json"
check_consistent "$tmp/tiny.json"
expect_json "$tmp/tiny.json" "j['fits'] is False" "a 600 MiB GPU with a 580 MiB context does not fit"
finish
