#!/bin/sh
# fake-profiler.sh — a deterministic stand-in for xmem-estimate in the lab, so policy tests
# control the estimate exactly. It accepts any arguments (xmemd passes the entrypoint) and
# reads its knobs from them, so every distinct answer is a distinct cache key in xmemd:
#   --fake-limit-mb=N   limit (default 12288)     --fake-peak-mb=N   peak (default limit*9/10)
#   --fake-sleep=S      sleep S seconds first (a slow or hung profile)
#   --fake-fail         exit 3 with a message (a crashing training script)
#   --fake-report=FILE  write the environment it runs in to FILE (which python, the venv,
#                       the user, the directory): what a batch script's preamble left
#   --fake-torch        add the torch version that python imports to the report
# Like xmem-estimate it takes --world-size N (xmemd passes it past one rank): the answer then
# lists N ranks, each with the limit, and the report says world_size=N (1 when not given).
limit=12288 peak= sleep=0 report= torch= world=1 next=
for a in "$@"; do
    [ "$next" = world ] && { world=$a next=; continue; }
    case $a in
    --world-size) next=world ;;
    --world-size=*) world=${a#*=} ;;
    --fake-limit-mb=*) limit=${a#*=} ;;
    --fake-peak-mb=*) peak=${a#*=} ;;
    --fake-sleep=*) sleep=${a#*=} ;;
    --fake-report=*) report=${a#*=} ;;
    --fake-torch) torch=1 ;;
    --fake-fail) echo "fake-profiler: training script failed (--fake-fail)" >&2; exit 3 ;;
    esac
done
[ -n "$peak" ] || peak=$((limit * 9 / 10))
if [ -n "$report" ]; then
    {
        echo "python=$(command -v python)"
        echo "prefix=$(python -c 'import sys; print(sys.prefix)' 2>&1)"
        echo "virtual_env=${VIRTUAL_ENV:-}"
        echo "hf_home=${HF_HOME:-}"
        echo "user=$(id -un)"
        echo "pwd=$(pwd)"
        echo "cuda=${CUDA_VISIBLE_DEVICES-unset}"
        echo "modules=${LOADEDMODULES:-}"
        echo "world_size=$world"
        [ -z "$torch" ] || echo "torch=$(python -c 'import torch; print(torch.__version__)' 2>&1 | tail -n 1)"
    } >"$report"
fi
[ "$sleep" = 0 ] || sleep "$sleep"
fits=true
[ "$limit" -le 40960 ] || fits=false
ranks= r=0
while [ "$r" -lt "$world" ]; do
    ranks="$ranks${ranks:+,}{\"rank\":$r,\"peak_bytes\":$((peak * 1048576)),\"limit_bytes\":$((limit * 1048576))}"
    r=$((r + 1))
done
printf '{"peak_bytes":%s,"limit_bytes":%s,"fits":%s,"gpu":"A100-40GB","torch":"2.6","mode":"exact","profile_seconds":0.1,"analyze_seconds":0.01,"breakdown":{},"world_size":%s,"ranks":[%s]}\n' \
    "$((peak * 1048576))" "$((limit * 1048576))" "$fits" "$world" "$ranks"
