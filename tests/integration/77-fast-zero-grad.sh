#!/usr/bin/env bash
# Issue 17 class 2: the fast capture's phase marks do not depend on allocations. 1.13's
# zero_grad(set_to_none=False) allocates nothing; its `P zero_grad` must be in the trace
# once per step all the same (it used to be written only before a phase's first event and
# vanished), because the analysis needs it for the 2.x set_to_none=True rewrite.
source "$(dirname "$0")/70-fast-common.bash"
steps=3
fast_capture "$TMP/fast.trace" --steps $steps -- $PY "$WORKLOADS/issue_classes.py" --zero-grad-keep --steps 5
marks=$(grep -c '^P zero_grad$' "$TMP/fast.trace")
[ "$marks" = "$steps" ] || { echo "FAILED: $marks zero_grad marks in the fast trace, want one per step ($steps)"; exit 1; }
echo "ok: one zero_grad mark per step ($marks)"
# The mark comes inside its iteration, after the I line, as the exact capture writes it.
$PY "$WORKLOADS/check_trace.py" "$TMP/fast.trace" --steps $steps --phases-in-order >/dev/null ||
    { echo "FAILED: check_trace.py rejects the fast trace"; exit 1; }
# The job ran torch 1.13, the target estimates default to (the job's own): ask for 2.x.
"$ESTIMATE" ${XMEM_CATALOG:+--catalog "$XMEM_CATALOG"} --json --gpu H100-80GB --torch 2.1 \
    --trace-in "$TMP/fast.trace" >"$TMP/estimate.json" 2>"$TMP/estimate.err" ||
    { cat "$TMP/estimate.err"; echo "FAILED: xmem-estimate on the fast trace"; exit 1; }
rewritten=$($PY -c "import json; print(json.load(open('$TMP/estimate.json'))['corrections'])")
case $rewritten in
    *"'zero_grad_rewritten': True"*) echo "ok: the 2.x set_to_none=True rewrite applied" ;;
    *) echo "FAILED: zero_grad not rewritten for 2.x: $rewritten"; exit 1 ;;
esac
echo "all checks passed"
