#!/bin/sh
# fake-profiler.sh — a deterministic stand-in for xmem-estimate in the lab, so policy tests
# control the estimate exactly. It accepts any arguments (xmemd passes the entrypoint) and
# reads its knobs from them, so every distinct answer is a distinct cache key in xmemd:
#   --fake-limit-mb=N   limit (default 12288)     --fake-peak-mb=N   peak (default limit*9/10)
#   --fake-sleep=S      sleep S seconds first (a slow or hung profile)
#   --fake-fail         exit 3 with a message (a crashing training script)
limit=12288 peak= sleep=0
for a in "$@"; do
    case $a in
    --fake-limit-mb=*) limit=${a#*=} ;;
    --fake-peak-mb=*) peak=${a#*=} ;;
    --fake-sleep=*) sleep=${a#*=} ;;
    --fake-fail) echo "fake-profiler: training script failed (--fake-fail)" >&2; exit 3 ;;
    esac
done
[ -n "$peak" ] || peak=$((limit * 9 / 10))
[ "$sleep" = 0 ] || sleep "$sleep"
fits=true
[ "$limit" -le 40960 ] || fits=false
printf '{"peak_bytes":%s,"limit_bytes":%s,"fits":%s,"gpu":"A100-40GB","torch":"2.6","mode":"exact","profile_seconds":0.1,"analyze_seconds":0.01,"breakdown":{}}\n' \
    "$((peak * 1048576))" "$((limit * 1048576))" "$fits"
