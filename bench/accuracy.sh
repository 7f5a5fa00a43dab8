#!/usr/bin/env bash
# make bench-accuracy: xmem's estimates against GPU memory measured by others on an A100
# 40 GB (GPUMemNet, ../shared/groundtruth beside the repository). Rebuilds a fixed subset
# of the MLP and CNN runs (bench/accuracy/records.csv, chosen by bench/accuracy/select.py)
# plus the real-model set at batch 32, runs `xmem estimate` on each, and prints per record
# and overall: median relative error, share of runs measured above the recommended limit,
# median limit slack.
# About 10 minutes on the two-core machine (577 s on 2026-12-04, load about 1.3: 120 large
# CNNs in fast mode, about 1 s each, and the real-model set's exact captures with both
# torches, VGG-16's the longest at 50-80 s), longer on a loaded one.
# Results are kept in $XMEM_ACCURACY_OUT (default
# /tmp/xmem-accuracy) so a rerun only redoes what is missing; remove it to start over.
# XMEM_ACCURACY_LIMIT=N runs only the first N records; XMEM_ACCURACY_REAL=0 skips the
# real-model set, XMEM_ACCURACY_REAL_MODELS=resnet,mobilenet picks some of it,
# XMEM_ACCURACY_REAL_BATCHES=32,64,128 its batch sizes (default 32) and
# XMEM_ACCURACY_REAL_MODE=fast its capture (default exact; fast runs on fake tensors, seconds
# per model, so all 15 runs fit in a few minutes).
# Side by side on the real-model set (bench/accuracy/peers.py): xmem with the torch 2.x
# capture (the interpreter XMEM_ACCURACY_TORCH2, default $XMEM_VENV/bin/python; none: skipped),
# PyTorch's MemTracker under FakeTensorMode and accelerate's estimate-memory figure, each with
# its error, next to today's torch 1.13 capture, in one table. In fast mode they add about
# 20 s per real-model run (2026-12-03: the whole bench at batch 32/64/128, 18 runs, 656 s).
# Then the Hugging Face development set (bench/accuracy/hf.py; ../shared/groundtruth/
# xmem-artifact): 67 distinct runs on RTX 3060 / 4060, each profiled in fast mode with the
# runs' own torch 2.6.0 + transformers 4.51.3 from $XMEM_VENV_HF26 (make bench-accuracy
# installs tests/venv/hf26.lock there; XMEM_ACCURACY_HF_PYTHON names another interpreter):
# 291 s for all 67 at load 2.5-6 on the two-core machine (2026-12-04; 389 s at load 6-9),
# 4-13 s per run.
# Results are kept in $XMEM_ACCURACY_HF_OUT (default /tmp/xmem-accuracy-hf).
# XMEM_ACCURACY_HF=0 skips it, XMEM_ACCURACY_HF_LIMIT=N runs the first N runs of each model
# (1: eight runs, one per model), XMEM_ACCURACY_HF_MODELS=opt-125m,T5-small picks models.
# XMEM_ACCURACY_HF_ZERO_GRAD=0 runs every job with that --zero-grad instead of the set's
# inferred column: a diagnostic of the inference (docs/bench.md).
# --quick: the first 40 records and resnet + mobilenet of the real-model set, in fast mode
# (about 2 minutes; docs/bench.md has the measured times), and one run per Hugging Face model
# (8 runs, 57 s at load 6). --hf-only: the Hugging Face set alone.
set -euo pipefail
quick=0 gpumemnet=1
for a in "$@"; do
    case $a in
    --quick) quick=1 ;;
    --hf-only) gpumemnet=0 ;;
    *) echo "xmem: bench-accuracy: unknown option $a (use --quick or --hf-only)" >&2; exit 2 ;;
    esac
done
if [ $quick = 1 ]; then
    : "${XMEM_ACCURACY_LIMIT:=40}" "${XMEM_ACCURACY_REAL_MODE:=fast}" "${XMEM_ACCURACY_HF_LIMIT:=1}"
    export XMEM_ACCURACY_REAL_MODELS=${XMEM_ACCURACY_REAL_MODELS:-resnet,mobilenet}
fi
here=$(cd "$(dirname "$0")" && pwd)
build=${XMEM_BUILD:-$here/../build}
gt=${XMEM_GROUNDTRUTH:-$here/../../shared/groundtruth/gpumemnet}
if [ ! -x "$build/bin/xmem-estimate" ] || [ ! -x "$build/bin/xmem-profile" ]; then
    echo "xmem: bench-accuracy: $build/bin/xmem-estimate or xmem-profile missing; run make first" >&2
    exit 1
fi
if [ $gpumemnet = 1 ] && [ ! -d "$gt" ]; then
    echo "xmem: bench-accuracy: ground truth $gt not found; set XMEM_GROUNDTRUTH" >&2
    exit 1
fi
args=(--build "$build" --groundtruth "$gt" --out "${XMEM_ACCURACY_OUT:-/tmp/xmem-accuracy}"
      --limit "${XMEM_ACCURACY_LIMIT:-0}")
[ "${XMEM_ACCURACY_REAL:-1}" = 1 ] && args+=(--real --real-batches "${XMEM_ACCURACY_REAL_BATCHES:-32}"
                                              --real-mode "${XMEM_ACCURACY_REAL_MODE:-exact}")
torch2=${XMEM_ACCURACY_TORCH2-${XMEM_VENV:+$XMEM_VENV/bin/python}}
if [ -n "$torch2" ] && [ -x "$torch2" ]; then
    args+=(--torch2-python "$torch2")
elif [ $gpumemnet = 1 ]; then
    echo "xmem: bench-accuracy: no torch 2.x interpreter (set XMEM_VENV or XMEM_ACCURACY_TORCH2); torch 2.x column and peers skipped" >&2
fi
status=0
[ $gpumemnet = 1 ] && { /usr/bin/python3 "$here/accuracy/run.py" "${args[@]}" || status=$?; }
[ "${XMEM_ACCURACY_HF:-1}" = 1 ] || exit $status
# /usr/bin/python3, as for run.py: a Python whose `select` is not built in would import
# bench/accuracy/select.py in its place.
hf_gt=${XMEM_GROUNDTRUTH_HF:-$here/../../shared/groundtruth/xmem-artifact}
hf_python=${XMEM_ACCURACY_HF_PYTHON:-${XMEM_VENV_HF26:+$XMEM_VENV_HF26/bin/python}}
if [ ! -d "$hf_gt" ]; then
    echo "xmem: bench-accuracy: Hugging Face set $hf_gt not found (XMEM_GROUNDTRUTH_HF); skipped" >&2
    exit 1
elif [ -z "$hf_python" ] || [ ! -x "$hf_python" ]; then
    echo "xmem: bench-accuracy: no torch 2.6.0 + transformers 4.51.3 interpreter (make bench-accuracy installs" \
        "one; or set XMEM_VENV_HF26 / XMEM_ACCURACY_HF_PYTHON); Hugging Face set skipped" >&2
    exit 1
fi
[ $gpumemnet = 1 ] && echo
/usr/bin/python3 "$here/accuracy/hf.py" --build "$build" --groundtruth "$hf_gt" --python "$hf_python" \
    --out "${XMEM_ACCURACY_HF_OUT:-/tmp/xmem-accuracy-hf}" --limit "${XMEM_ACCURACY_HF_LIMIT:-0}" \
    --models "${XMEM_ACCURACY_HF_MODELS:-}" ${XMEM_ACCURACY_HF_ZERO_GRAD:+--zero-grad "$XMEM_ACCURACY_HF_ZERO_GRAD"} \
    || status=$?
exit $status
