#!/usr/bin/env bash
# Issue 29: FSDP's policies in fast mode, rank 1 of 2, on fsdp.py's small decoder
# (ranks_check.py computes what each rank holds from the parameter shapes).
# FSDP2 with MixedPrecisionPolicy(bf16 parameters, fp32 reduction): every all-gather
# buffer half the fp32 one, the fp32 shards (weights, gradients, AdamW's state) unchanged,
# each layer reduce-scattered from an fp32 input. FSDP2 on a model built on the host: it
# moves the parameters to the GPU (fast mode once left its host-meta parameters on meta, as
# deferred init, and failed). FSDP2 with CPUOffloadPolicy: the shards, their gradients and
# AdamW's state on the host, nothing of them on the GPU (weights, gradients and optimizer
# state ~0; live bytes when a backward ends, the buffers alone), every shard copied to the
# GPU in each forward before its all-gather (fast mode once kept the shards on the device,
# as meta tensors, and FSDP2 refused them). FSDP1 at 2 ranks:
# FULL_SHARD and SHARD_GRAD_OP keep 1/2 of the weights, gradients and AdamW's state,
# NO_SHARD the whole model; SHARD_GRAD_OP keeps every layer's unsharded parameters from
# the forward to the backward (fast mode once failed there: FSDP1 asked a meta storage for
# a data pointer); MixedPrecision keeps FULL_SHARD's fp32 shards and gathers every flat
# parameter in bf16, half FULL_SHARD's bytes.
source "$(dirname "$0")/101-fast-torch2-ranks-common.bash"
keep_going
set +e

fsdp_rank1 2 mp --mp bf16
expect_rc 0 "FSDP2 with MixedPrecisionPolicy(bf16, fp32 reduce)"
expect_true "bf16 all-gathers, fp32 shards and fp32 reduce-scatter inputs" \
    "$VPY" "$CHECK" fsdp "$TMP/mp.trace" "$TMP/mp.json" --world 2 --mp bf16
expect_false "the fp32 all-gathers are not what the bf16 policy allocates" \
    "$VPY" "$CHECK" fsdp "$TMP/mp.trace" "$TMP/mp.json" --world 2

fsdp_rank1 2 host --host-init
expect_rc 0 "FSDP2 on a model built on the host"
expect_true "host-built model: shards and all-gather buffers as when built on the GPU" \
    "$VPY" "$CHECK" fsdp "$TMP/host.trace" "$TMP/host.json" --world 2

fsdp_rank1 2 offload --offload --host-init
expect_rc 0 "FSDP2 with CPUOffloadPolicy"
expect_true "offloaded: no shard state on the GPU; each forward copies every shard in" \
    "$VPY" "$CHECK" fsdp "$TMP/offload.trace" "$TMP/offload.json" --world 2 --offload

mkdir -p "$TMP/fsdp1"
for s in full grad-op none; do
    fsdp_rank1 2 "fsdp1/$s" --fsdp1 --sharding "$s"
    expect_rc 0 "FSDP1 $s at 2 ranks"
done
fsdp_rank1 2 fsdp1/mp --fsdp1 --mp bf16
expect_rc 0 "FSDP1 MixedPrecision(bf16, fp32 reduce) at 2 ranks"
# What fast mode cannot model is refused in one line that names it and the fix.
fsdp_rank1 2 fsdp1-offload --fsdp1 --offload
expect_rc 3 "FSDP1 CPUOffload refused"
expect_true "the refusal names FSDP1's CPUOffload and the fix" \
    grep -q "unsupported: FSDP1's CPUOffload(offload_params=True): .*profile the job without it" "$TMP/err"
expect_true "a rank's refusal names no exact capture, which refuses several ranks" \
    grep -q "; a job of several ranks has fast mode only: change what is named, or estimate it as one process (--world-size 1)" "$TMP/err"
fsdp_rank1 2 fsdp1-host --fsdp1 --host-init
expect_rc 3 "FSDP1 of a model built on the host refused"
expect_true "the refusal names a host-built module under FSDP1 and the fix" \
    grep -q "unsupported: FSDP1 (FullyShardedDataParallel) of a module built on the host: .*build the model on the GPU" "$TMP/err"

expect_true "FSDP1: weights, gradients, AdamW's state per strategy; SHARD_GRAD_OP's kept layers; bf16 gathers" \
    "$VPY" "$CHECK" fsdp1 "$TMP/fsdp1" --world 2
finish
