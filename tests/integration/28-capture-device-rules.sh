#!/usr/bin/env bash
# Every device-tag rule of docs/capture.md, one distinct storage size each
# (tests/workloads/device_rules.py): the trace must tag each as a GPU run would place it.
source "$(dirname "$0")/20-capture-common.bash"

capture "$TMP/rules.trace" --steps 1 --threads 1 -- python3 "$WORKLOADS/device_rules.py"
expect_true "--threads 1 not applied" grep -q '^M threads 1$' "$TMP/rules.trace"
run_ok $CHECK "$TMP/rules.trace" --steps 1 >/dev/null

# expect_tags BYTES TAGS: the tags of all allocations of BYTES bytes, in order, are TAGS.
expect_tags() {
    local got
    got=$(awk -v b="$1" '$1=="A" && $3==b {printf "%s", $4}' "$TMP/rules.trace")
    expect_true "$1-byte storages tagged '$got', expected '$2' ($3)" [ "$got" = "$2" ]
    echo "ok: $3"
}
expect_tags 44 hgh ".cuda() copies a host tensor; identity on the device; .cpu() copies back"
expect_tags 52 hh "pin_memory is host memory"
expect_tags 68 g "device='cuda' factory"
expect_tags 20 g "device=0 factory"
expect_tags 76 hg ".to(0): a bare ordinal is a CUDA device"
expect_tags 92 g "new_tensor of a device tensor"
expect_tags 116 h "torch.tensor without a device"
expect_tags 124 g "torch.tensor(device='cuda:0')"
expect_tags 148 hhh "ops on host tensors stay on the host"
expect_tags 164 gg "an op with a device operand runs on the device"
expect_tags 136 g "empty_like follows its input"
expect_tags 62 g "a dtype change stays on the device"
expect_tags 172 hhg "torch.save of a host tensor; torch.load reads on the host, map_location='cuda:0' copies to the device"
