#!/usr/bin/env bash
# Issue 17 class 7: an ATen op with no Meta kernel in this torch (reflection_pad2d_backward in
# 1.13) is named as a missing shape-only kernel with what to do, not as "data-dependent output
# shape or a custom op"; nonzero is still data-dependent. Both exit 3 (auto falls back).
source "$(dirname "$0")/70-fast-common.bash"
out=$TMP/out
rc=0
"$FAST" --out "$TMP/pad.trace" --timeout 300 -- $PY "$WORKLOADS/reflection_pad.py" >"$out" 2>&1 || rc=$?
if [ "$rc" != 3 ] || ! grep -q '^xmem: fast mode: unsupported: aten::reflection_pad2d_backward.* has no Meta (shape-only) kernel in this torch.*please report it.*--mode exact' "$out"; then
    if $PY -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("1.") else 1)'; then
        expect_eq "$rc" 3 "missing kernel: exit status"
        fail "no line naming the missing shape-only kernel"
    fi
    echo "skip: this torch has a Meta kernel for reflection_pad2d_backward (rc $rc)"; exit 77
fi
expect_false "a missing kernel called data-dependent" grep -q 'data-dependent' "$out"
echo "ok: reflection_pad2d_backward named as a missing shape-only kernel"
echo "all checks passed"
