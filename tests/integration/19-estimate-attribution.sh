#!/usr/bin/env bash
# Where the memory goes at the peak (issue 30): a model with one layer whose activations
# dwarf the rest (tests/workloads/huge_layer.py), estimated in fast mode. That layer is the
# first module of the ranking, with exactly the bytes the analysed trace holds live under it at the allocated peak; the
# module and op rankings each add up to the breakdown at the same peak; the text names it.
source "$(dirname "$0")/80-torch2-common.bash"
B=${XMEM_BUILD:?}/bin
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# An estimate on a loaded machine may take minutes: far more than run's default limit.
RUN_TIMEOUT=900

cp "${XMEM_SRC:?}/tests/workloads/huge_layer.py" "$TMP/train.py"
cd "$TMP" || exit 1
run_to "$TMP/e.json" env PATH="$venv/bin:$PATH" "$B/xmem-estimate" --mode fast --gpu A100-40GB \
    --json --analysed-trace "$TMP/a.xtrace" -- python train.py
expect_rc 0 "the estimate failed"
run env PATH="$venv/bin:$PATH" "$B/xmem-estimate" --gpu A100-40GB --trace-in "$TMP/a.xtrace"
expect_rc 0 "the text estimate failed"
printf '%s\n' "$RUN_OUT" >"$TMP/e.txt"

# The analysed trace's live requested bytes per module at the allocated peak, replayed here
# from the trace alone (module: the context's text before its first '|').
expect_true "the rankings disagree with the trace" /usr/bin/python3 - "$TMP/e.json" "$TMP/a.xtrace" <<'PY'
import json
import sys

j = json.load(open(sys.argv[1]))
strings, live, by_module, best, at_best = {}, {}, {}, -1, {}
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "S":
        strings[f[1]] = line.rstrip("\n").split(" ", 2)[2]
    elif f[0] == "A" and f[3] == "g":
        module = strings.get(f[5], "").split("|")[0]
        live[f[1]] = (int(f[2]), module)
        by_module[module] = by_module.get(module, 0) + int(f[2])
        total = sum(b for b, _ in live.values())
        if total > best:
            best, at_best = total, dict(by_module)
    elif f[0] == "F" and f[1] in live:
        b, module = live.pop(f[1])
        by_module[module] -= b


def fail(why):
    print("FAIL:", why)
    sys.exit(1)


ranking = j["peak_by_module"]["top"]
modules = [s for s in ranking if not s["name"].startswith("(")]
if not modules or modules[0]["name"] != "huge":
    fail(f"the huge layer is not the first module: {ranking}")
if modules[0]["bytes"] != at_best.get("huge"):
    fail(f"huge holds {modules[0]['bytes']} B in the ranking, {at_best.get('huge')} B in the trace")
if modules[0]["bytes"] % (256 * 16384 * 4):
    fail(f"huge's {modules[0]['bytes']} B are not whole 16 MiB activations")
live_total = sum(j["breakdown"][k] for k in
                 ("weights", "gradients", "optimizer_state", "activations", "inputs", "workspaces", "other"))
for key in ("peak_by_module", "peak_by_op"):
    r = j[key]
    if sum(s["bytes"] for s in r["top"]) + r["rest_bytes"] != live_total:
        fail(f"{key} adds up to something else than the breakdown's {live_total} B")
print(f"ok: huge first among modules with {modules[0]['bytes']} B, the trace's own figure")
PY
expect_true "the text has no ranking by module" grep -q '^live at the peak, by module:' "$TMP/e.txt"
expect_true "the text ranking does not name huge" grep -Eq '^  huge +[0-9.]+ MiB' "$TMP/e.txt"
expect_true "the text has no ranking by op" grep -q '^live at the peak, by op:' "$TMP/e.txt"
pass "the text names what holds the memory at the peak"
finish
