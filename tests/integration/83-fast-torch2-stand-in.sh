#!/usr/bin/env bash
# Issue 34 part 3: fast mode finishes a script whose Python branches read floating-point GPU
# scalars that decide nothing allocated (transformers' Adafactor `max(eps, RMS)`, a check of
# clip_grad_norm_'s total, `torch.isfinite(loss)`, GradScaler): each stands in as 0.0, the
# trace carries one warning naming the script line, and the trace agrees with the exact
# capture's. A branch on a whole activation (`(h > 0).any()`) is still refused (exit 3).
source "$(dirname "$0")/90-fast-torch2-common.bash"
script=$WORKLOADS/torch2/value_branches.py
run() { # NAME EXPECTED-STATUS PROFILER ARGS...
    local name=$1 want=$2 profiler=$3 rc=0
    shift 3
    "$profiler" --python "$VPY" --out "$TMP/$name.trace" --steps 3 --timeout 120 \
        -- python "$script" "$@" >"$TMP/$name.out" 2>&1 || rc=$?
    [ "$rc" = "$want" ] || { echo "FAILED: $name exited $rc, want $want:"; tail -5 "$TMP/$name.out"; exit 1; }
}
run adafactor 0 "$FAST" --no-norm-check
run fast 0 "$FAST"
run activation 3 "$FAST" --activation-branch
run exact 0 "$XMEM_BUILD/bin/xmem-profile"
grep -q 'unsupported: bool() of a GPU tensor.*value_branches.py:' "$TMP/activation.out" ||
    { echo "FAILED: the activation branch was not refused with its line:"; tail -3 "$TMP/activation.out"; exit 1; }
# The line named is where the branch is: transformers' own for Adafactor alone.
for t in adafactor:transformers/optimization.py fast:value_branches.py; do
    grep -q "^M warning_stand_in .* at [^ ]*${t#*:}:[0-9]*, .*stood in as 0.0" "$TMP/${t%%:*}.trace" ||
        { echo "FAILED: ${t%%:*} trace has no stand-in warning naming ${t#*:}"; exit 1; }
    t=${t%%:*}
    [ "$(grep -c '^M warning_stand_in' "$TMP/$t.trace")" = 1 ] || { echo "FAILED: $t: more than one warning"; exit 1; }
done
for t in fast exact; do
    "$XMEM_BUILD/bin/xmem-sim" --json "$TMP/$t.trace" >"$TMP/$t.json"
done
"$VPY" - "$TMP/fast.json" "$TMP/exact.json" <<'PY'
import json, sys
fast, exact = (json.load(open(p)) for p in sys.argv[1:])
key = "reserved_bytes.all.peak"
gap = abs(fast[key] - exact[key]) / exact[key]
print(f"reserved peak: fast {fast[key]} B, exact {exact[key]} B ({100 * gap:.3f} %)")
sys.exit(1 if gap > 0.01 else 0)
PY
echo "all checks passed"
