#!/usr/bin/env bash
# Issue 29: a DDP job on 2 ranks in fast mode, from torchrun's command line. xmem-estimate
# reads the world size from `torchrun --nproc-per-node 2`, profiles rank 0 and rank 1 with the
# xmem process group, and lists both ranks. The trace holds DistributedDataParallel's
# gradient buckets as torch's Reducer allocates them on a GPU rank: one bucket of every
# gradient in step 1, then, when step 2 begins, the buckets bucket_cap_mb implies, in the
# order the gradients became ready (ranks_check.py computes them from the parameter shapes);
# with gradient_as_bucket_view the gradients are views into them.
source "$(dirname "$0")/90-fast-torch2-common.bash"
EST=$XMEM_BUILD/bin/xmem-estimate
export PATH=$VENV/bin:$PATH
DDP=$WORKLOADS/torch2/ddp.py
CHECK=$WORKLOADS/torch2/ranks_check.py
keep_going
set +e

run_to "$TMP/ddp.json" "$EST" --json --mode fast --gpu H100-80GB --steps 3 \
    --keep-trace "$TMP/ddp.trace" -- torchrun --nproc-per-node 2 "$DDP" --model resnet50 --steps 3
expect_rc 0 "DDP ResNet-50 under torchrun --nproc-per-node 2"
expect_field "$TMP/ddp.json" world_size 2 "the world size read from torchrun"
expect_field "$TMP/ddp.json" launcher torchrun "the launcher named"
expect_json "$TMP/ddp.json" "[r['rank'] for r in j['ranks']] == [0, 1]" "both ranks listed"
expect_json "$TMP/ddp.json" "j['limit_bytes'] == max(r['limit_bytes'] for r in j['ranks'])" \
    "the highest rank sets the limit"
expect_true "rank 0's trace: DDP's default buckets (25 MiB, first 1 MiB)" \
    "$VPY" "$CHECK" ddp "$TMP/ddp.trace" --model resnet50
expect_true "rank 1's trace: the same buckets" \
    "$VPY" "$CHECK" ddp "$TMP/ddp.trace.rank1" --model resnet50

# bucket_cap_mb and gradient_as_bucket_view, at --world-size 2 without a launcher.
run_to "$TMP/view.json" "$EST" --json --mode fast --gpu H100-80GB --steps 3 --world-size 2 \
    --keep-trace "$TMP/view.trace" -- python "$DDP" --model resnet50 --steps 3 \
    --bucket-cap-mb 10 --gradient-as-bucket-view
expect_rc 0 "DDP ResNet-50, --world-size 2, bucket_cap_mb=10, gradient_as_bucket_view"
expect_true "10 MiB buckets, gradients as views into them" \
    "$VPY" "$CHECK" ddp "$TMP/view.trace" --model resnet50 --bucket-cap-mb 10 --view
expect_true "without the views the same trace fails the check (the check can fail)" \
    bash -c '! "$0" "$1" ddp "$2" --model resnet50 --bucket-cap-mb 10 >/dev/null' \
    "$VPY" "$CHECK" "$TMP/view.trace"
expect_true "gradient_as_bucket_view holds less than separate gradients" \
    "$VPY" -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); sys.exit(not b["allocated_peak_bytes"] < a["allocated_peak_bytes"])' \
    "$TMP/ddp.json" "$TMP/view.json"
finish
