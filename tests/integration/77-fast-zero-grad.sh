#!/usr/bin/env bash
# Issue 17 class 2: the fast capture's phase marks do not depend on allocations. 1.13's
# zero_grad(set_to_none=False) allocates nothing; its `P zero_grad` must be in the trace
# once per step all the same (it used to be written only before a phase's first event and
# vanished), because the analysis needs it for the 2.x set_to_none=True rewrite.
source "$(dirname "$0")/70-fast-common.bash"
steps=3
fast_capture "$TMP/fast.trace" --steps $steps -- $PY "$WORKLOADS/issue_classes.py" --zero-grad-keep --steps 5
marks=$(grep -c '^P zero_grad$' "$TMP/fast.trace")
expect_true "$marks zero_grad marks in the fast trace, want one per step ($steps)" [ "$marks" = "$steps" ]
echo "ok: one zero_grad mark per step ($marks)"
# The mark comes inside its iteration, after the I line, as the exact capture writes it.
expect_true "check_trace.py rejects the fast trace" \
    $PY "$WORKLOADS/check_trace.py" "$TMP/fast.trace" --steps $steps --phases-in-order >/dev/null
# The trace is torch 1.13's; the rewrite is for a 2.x target, which --torch names (the
# estimate's default is the trace's own torch, whose zero_grad keeps the gradients).
rewritten=$(estimate_field "$TMP/fast.trace" corrections --torch 2.6)
expect_true "zero_grad not rewritten for 2.x: $rewritten" grep -qF "'zero_grad_rewritten': True" <<<"$rewritten"
echo "ok: the 2.x set_to_none=True rewrite applied"
echo "all checks passed"
