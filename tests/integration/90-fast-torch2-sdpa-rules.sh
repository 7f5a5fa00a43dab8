#!/usr/bin/env bash
# Issue 16 part 3: the one SDPA chooser (daemon/profiler/python/xmem_gpu/sdpa.py) picks the
# backend a GPU of the given capability picks: flash / efficient / cudnn / math by sm, dtype,
# head dim, mask, causal shape, GQA, training, and the sdpa_kernel / enable_*_sdp flags.
# Issue 34: the GPU's dropout (xmem_gpu/dropout.py): native_dropout's bool mask, in order.
# Unit-style, on meta tensors, in well under a second once torch is imported.
source "$(dirname "$0")/90-fast-torch2-common.bash"
"$VPY" "$XMEM_SRC/tests/unit/xmem_gpu/test_sdpa.py" -v 2>&1 | tail -n 30
"$VPY" "$XMEM_SRC/tests/unit/xmem_gpu/test_dropout.py" -v 2>&1 | tail -n 30
echo "all checks passed"
