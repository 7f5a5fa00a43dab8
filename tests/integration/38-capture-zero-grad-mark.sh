#!/usr/bin/env bash
# Issue 17 class 2, exact half: the exact capture's phase marks do not depend on allocations.
# On torch 2.x, zero_grad(set_to_none=False) allocates nothing (1.13's record_function handle
# was a tensor, which kept the phase alive there); the recorder wrote a mark only before a
# phase's first event, so `P zero_grad` vanished and the analysis skipped the 2.x
# set_to_none=True rewrite it keys on. Checked: with the old recorder this trace has 0 marks.
source "$(dirname "$0")/85-capture-torch2-common.bash"
steps=3
capture "$TMP/exact.trace" "$XMEM_SRC/tests/workloads/issue_classes.py" --zero-grad-keep --steps 5 >/dev/null
expect_true "the job did not keep its gradients" [ "$(meta "$TMP/exact.trace" zero_grad_set_to_none)" = 0 ]
marks=$(grep -c '^P zero_grad$' "$TMP/exact.trace" || true)
expect_true "$marks zero_grad marks in the exact trace, want one per step ($steps)" [ "$marks" = "$steps" ]
echo "ok: one zero_grad mark per step ($marks)"
# Each mark comes inside its iteration, and the trace does not end with an empty iteration.
$PY "$XMEM_SRC/tests/workloads/check_trace.py" "$TMP/exact.trace" --steps $steps --phases-in-order >/dev/null ||
    fail "check_trace.py rejects the exact trace"
last=$(grep -E '^[IAF] ' "$TMP/exact.trace" | tail -1)
case $last in I*) fail "the trace ends with an empty iteration ($last)" ;; esac
"$ESTIMATE" ${XMEM_CATALOG:+--catalog "$XMEM_CATALOG"} --json --gpu H100-80GB --trace-in "$TMP/exact.trace" \
    >"$TMP/estimate.json" 2>"$TMP/estimate.err" || fail "xmem-estimate: $(cat "$TMP/estimate.err")"
expect_true "zero_grad not rewritten for 2.x: $(json "$TMP/estimate.json" "j['corrections']")" \
    [ "$(json "$TMP/estimate.json" "j['corrections']['zero_grad_rewritten']")" = True ]
echo "ok: the 2.x set_to_none=True rewrite applied"
echo "all checks passed"
