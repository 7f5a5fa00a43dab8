#!/usr/bin/env bash
# Issue 34 part 3: fast mode finishes a script whose Python branches read floating-point GPU
# scalars that decide nothing allocated (transformers' Adafactor `max(eps, RMS)`, a check of
# clip_grad_norm_'s total, `torch.isfinite(loss)`, GradScaler): each stands in as 0.0, the
# trace carries one warning naming the script line, and the trace agrees with the exact
# capture's. A branch on a whole activation (`(h > 0).any()`) is still refused (exit 3).
source "$(dirname "$0")/90-fast-torch2-common.bash"
script=$WORKLOADS/torch2/value_branches.py
# profile_as NAME EXPECTED-STATUS PROFILER ARGS...: the script under PROFILER into NAME.trace,
# its output (stdout and stderr) kept in NAME.out.
profile_as() {
    local name=$1 want=$2 profiler=$3
    shift 3
    run "$profiler" --python "$VPY" --out "$TMP/$name.trace" --steps 3 --timeout 120 -- python "$script" "$@"
    printf '%s\n' "$RUN_OUT" >"$TMP/$name.out"
    expect_rc "$want" "$name"
}
profile_as adafactor 0 "$FAST" --no-norm-check
profile_as fast 0 "$FAST"
profile_as activation 3 "$FAST" --activation-branch
profile_as exact 0 "$XMEM_BUILD/bin/xmem-profile"
expect_true "the activation branch was not refused with its line" \
    grep -q 'unsupported: bool() of a GPU tensor.*value_branches.py:' "$TMP/activation.out"
# The line named is where the branch is: transformers' own for Adafactor alone.
for t in adafactor:transformers/optimization.py fast:value_branches.py; do
    expect_true "${t%%:*} trace has no stand-in warning naming ${t#*:}" \
        grep -q "^M warning_stand_in .* at [^ ]*${t#*:}:[0-9]*, .*stood in as 0.0" "$TMP/${t%%:*}.trace"
    t=${t%%:*}
    expect_true "$t: more than one warning" [ "$(grep -c '^M warning_stand_in' "$TMP/$t.trace")" = 1 ]
done
for t in fast exact; do
    "$XMEM_BUILD/bin/xmem-sim" --json "$TMP/$t.trace" >"$TMP/$t.json"
done
expect_true "fast and exact reserved peaks more than 1 % apart" "$VPY" - "$TMP/fast.json" "$TMP/exact.json" <<'PY'
import json, sys
fast, exact = (json.load(open(p)) for p in sys.argv[1:])
key = "reserved_bytes.all.peak"
gap = abs(fast[key] - exact[key]) / exact[key]
print(f"reserved peak: fast {fast[key]} B, exact {exact[key]} B ({100 * gap:.3f} %)")
sys.exit(1 if gap > 0.01 else 0)
PY
echo "all checks passed"
