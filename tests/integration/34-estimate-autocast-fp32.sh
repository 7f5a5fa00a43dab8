#!/usr/bin/env bash
# Issue 17 class 1: torch.autocast("cuda", dtype=torch.float32) casts nothing on a GPU, so
# its estimate is the plain fp32 run's, byte for byte, in both capture modes (it used to be
# estimated as bf16 with `amp fp16`, and fast mode refused it). The same holds for
# torch.cuda.amp.autocast(dtype=torch.float32); fp16 autocast still says amp.
set -u
. "$(dirname "$0")/30-estimate-common.bash"
[ -x "$bin/xmem-estimate" ] || { echo "xmem-estimate not built in $XMEM_BUILD"; exit 77; }
[ -x "$bin/xmem-profile" ] || { echo "xmem-profile not built yet: nothing to profile with"; exit 77; }
job=(/usr/bin/python3 "$XMEM_SRC/tests/workloads/issue_classes.py")

# estimate NAME MODE ARGS...: the JSON estimate of the job with ARGS into $tmp/NAME.json.
estimate() {
    local name=$1 mode=$2
    shift 2
    run_to "$tmp/$name.json" "$bin/xmem-estimate" --mode "$mode" --json -- "${job[@]}" "$@"
    expect_rc 0 "$name: the estimate" || return 1
    check_consistent "$tmp/$name.json"
}

# same_numbers A B: A and B agree on every allocation number.
same_numbers() {
    for key in allocated_peak_bytes reserved_peak_bytes; do
        local a b
        a=$(json "$tmp/$1.json" "j['$key']")
        b=$(json "$tmp/$2.json" "j['$key']")
        expect_eq "$b" "$a" "$key: $1 and $2 (fp32 autocast must change nothing)"
    done
    local ca cb
    ca=$(json "$tmp/$1.json" "sorted(j['category_peak_bytes'].items())")
    cb=$(json "$tmp/$2.json" "sorted(j['category_peak_bytes'].items())")
    expect_eq "$cb" "$ca" "categories: $1 and $2"
}

modes=(exact)
[ -x "$bin/xmem-profile-fast" ] && modes+=(fast)
for mode in "${modes[@]}"; do
    estimate "$mode-plain" "$mode" --autocast none || continue
    estimate "$mode-fp32" "$mode" --autocast fp32 || continue
    estimate "$mode-fp32-cuda-amp" "$mode" --autocast fp32 --cuda-amp || continue
    for run in fp32 fp32-cuda-amp; do
        expect_json "$tmp/$mode-$run.json" "j['amp'] == 'off'" "$mode $run: fp32 autocast says amp off"
        same_numbers "$mode-plain" "$mode-$run"
    done
    echo "$mode: allocated peak $(json "$tmp/$mode-plain.json" "j['allocated_peak_bytes']") B with and without fp32 autocast"
done
# The reduced-precision case is untouched: fp16 autocast still lowers the activations.
if estimate exact-fp16 exact --autocast fp16; then
    expect_json "$tmp/exact-fp16.json" "j['amp'] == 'fp16'" "fp16 autocast says amp fp16"
fi
finish
