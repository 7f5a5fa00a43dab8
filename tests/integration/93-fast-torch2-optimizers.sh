#!/usr/bin/env bash
# Issue 16 part 3: on the fake GPU, torch 2.x optimizers take the paths they take on a GPU.
# AdamW by default (foreach) allocates a parameter-sized list of intermediates every step
# (_foreach_sqrt of the second moments); fused=True runs _fused_adamw_ in place and allocates
# only its state (moments, device step counters), so its step allocates nothing after the
# first and its peak is lower. A model whose parameters dominate makes the step the peak.
source "$(dirname "$0")/90-fast-torch2-common.bash"
args=(--seq 16 --batch 1 --hidden 256 --vocab 4096 --layers 2)
for kind in fused foreach; do
    "$FAST" --python "$VPY" --out "$TMP/$kind.trace" --steps 3 --timeout 120 \
        -- python "$WORKLOADS/attention.py" "${args[@]}" --optimizer-kind $kind >"$TMP/out" 2>&1 || fail "$kind capture"
    "$VPY" "$WORKLOADS/trace_stats.py" "$TMP/$kind.trace" >"$TMP/$kind.json"
    "$VPY" "$WORKLOADS/check_trace.py" "$TMP/$kind.trace" --steps 3 >"$TMP/$kind.summary"
done
expect_true "fused and foreach optimizers' state and peaks" \
    "$VPY" - "$TMP"/fused.json "$TMP"/foreach.json "$TMP"/fused.summary "$TMP"/foreach.summary <<'PY'
import json, sys
fused, foreach, fs, es = (json.load(open(p)) for p in sys.argv[1:])
params = fs["per_iteration"]["0"]["phase_alloc_bytes"]["setup"]
step = lambda s, i: s["per_iteration"][str(i)]["phase_alloc_bytes"].get("optimizer", 0)
fails = []
if step(es, 2) < 0.99 * params:
    fails.append(f"foreach step 2 allocated {step(es, 2)} B, less than the parameters' {params} B")
if step(fs, 2) != 0:
    fails.append(f"fused step 2 allocated {step(fs, 2)} B (in place: want 0)")
if not any("_foreach_" in op for op in foreach["ops"]):
    fails.append("the default AdamW did not take the foreach path")
if fused["peak"] >= foreach["peak"]:
    fails.append(f"fused peak {fused['peak']} not below foreach peak {foreach['peak']}")
print(f"params {params} B; step 2: foreach {step(es, 2)} B, fused {step(fs, 2)} B; "
      f"peak: foreach {foreach['peak']} B, fused {fused['peak']} B")
for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
PY
echo "all checks passed"
