#!/usr/bin/env bash
# Issue 17 class 8: the exact capture's own memory is bounded. A job whose processes pass
# --max-rss is stopped with one line naming the RSS, the limit and fast mode, exit 5, no
# trace and no process left; under a limit it fits, the same job is captured as before.
source "$(dirname "$0")/20-capture-common.bash"
job=("$WORKLOADS/issue_classes.py" --steps 4)

# Importing torch alone takes more than 64 MiB of RSS: the limit must stop the job early.
rc=0
start=$(date +%s)
"$PROFILE" --out "$TMP/small.trace" --max-rss 64 -- python3 "${job[@]}" >"$TMP/out" 2>"$TMP/err" || rc=$?
took=$(( $(date +%s) - start ))
cat "$TMP/err"
expect_true "exit $rc under --max-rss 64, want 5" [ "$rc" -eq 5 ]
expect_true "the line does not name the RSS, the limit and fast mode" \
    grep -Eq '^xmem: issue_classes.py: the exact capture reached [0-9]+ MiB of memory \(RSS\), over its limit of 64 MiB, after 0 of 3 optimizer steps; stopped \(.*xmem estimate --mode fast' "$TMP/err"
expect_true "more than one line on stderr" [ "$(grep -c . "$TMP/err")" -eq 1 ]
expect_true "a trace was left after the stop" [ ! -e "$TMP/small.trace" ]
expect_true "stopping took $took s" [ "$took" -lt 20 ]
expect_false "the job still runs" pgrep -f "issue_classes.py --steps 4"
echo "ok: stopped at the limit with exit 5 in $took s"

# xmem estimate passes --max-rss to the exact capture; in auto mode, after fast mode refused
# the job (fp16 autocast on torch 1.13), the stop says that neither capture can run it here.
rc=0
"$XMEM_BUILD/bin/xmem-estimate" ${XMEM_CATALOG:+--catalog "$XMEM_CATALOG"} --gpu H100-80GB --max-rss 64 \
    -- python3 "$WORKLOADS/issue_classes.py" --autocast fp16 --steps 4 >"$TMP/out" 2>"$TMP/err" || rc=$?
cat "$TMP/err"
expect_true "xmem estimate succeeded under --max-rss 64" [ "$rc" -ne 0 ]
expect_true "xmem estimate does not pass the capture's line on" \
    grep -q '^xmem: issue_classes.py: the exact capture reached .* over its limit of 64 MiB' "$TMP/err"
expect_true "xmem estimate does not say why neither capture ran" \
    grep -q '^xmem: estimate: fast mode cannot run this job (above) and the exact capture needs more memory' "$TMP/err"
echo "ok: xmem estimate --max-rss reaches the exact capture and says what is left"

# A job that runs out of its address space (MemoryError: xmemd's sandbox sets that limit) is
# another limit: the capture says so on its status line, xmem-profile exits 6 and xmem
# estimate passes 6 on (docs/profile-status.md), in either mode; xmemd reads it from there.
cat >"$TMP/no_memory.py" <<'PY'
import torch
m = torch.nn.Linear(4, 4).cuda()
o = torch.optim.Adam(m.parameters())
m(torch.randn(2, 4, device="cuda")).sum().backward()
o.step()
raise MemoryError("out of address space")
PY
for mode in exact auto; do
    rc=0
    "$XMEM_BUILD/bin/xmem-estimate" ${XMEM_CATALOG:+--catalog "$XMEM_CATALOG"} --json --mode $mode \
        -- python3 "$TMP/no_memory.py" >"$TMP/out" 2>"$TMP/err" || rc=$?
    expect_eq "$rc" 6 "xmem estimate --mode $mode: exit status after MemoryError"
    expect_true "--json outcome" grep -q '"outcome": "profile_failed"' "$TMP/out"
done
echo "ok: MemoryError exits 6 from xmem-profile through xmem estimate"

# Bad values are usage errors.
rc=0
"$PROFILE" --out "$TMP/x" --max-rss -1 -- python3 x.py 2>"$TMP/err" || rc=$?
expect_eq "$rc" 2 "--max-rss -1: exit status"
expect_true "--max-rss -1 accepted" grep -q '^xmem: --max-rss: invalid value: -1' "$TMP/err"

# The default limit (80 % of what is free) and a generous one let the same job through.
capture "$TMP/default.trace" -- python3 "${job[@]}" >/dev/null
capture "$TMP/roomy.trace" --max-rss 8192 -- python3 "${job[@]}" >/dev/null
expect_true "no trace under the default limit" [ -s "$TMP/default.trace" ]
expect_true "no trace under --max-rss 8192" [ -s "$TMP/roomy.trace" ]
echo "ok: captured under the default limit and under --max-rss 8192"

# Freed host memory returns (issue 33, item 7): the capture's malloc settings keep the job's
# RSS near its live tensors where glibc's defaults leave freed holes resident (about 1.5 x).
run "$PROFILE" -v --steps 1 --out "$TMP/fragments.trace" -- python3 "$WORKLOADS/host_fragments.py"
expect_rc 0 "host_fragments.py under the capture"
read -r grew live < <(sed -n 's/^host RSS grew \([0-9]*\) MiB for \([0-9]*\) MiB of live tensors$/\1 \2/p' <<<"$RUN_OUT")
expect_true "no RSS line from host_fragments.py" [ -n "${live:-}" ]
expect_true "RSS grew ${grew:-?} MiB for ${live:-?} MiB of live tensors: freed memory kept" \
    [ "${grew:-999999}" -le $(( ${live:-0} + ${live:-0} / 10 )) ]
echo "ok: RSS grew $grew MiB for $live MiB of live tensors"

# A caller's own malloc settings are the job's.
printf 'import os, sys, torch\nprint(os.environ.get("MALLOC_MMAP_THRESHOLD_"), file=sys.stderr)\ntorch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1).step()\n' >"$TMP/env.py"
MALLOC_MMAP_THRESHOLD_=262144 run "$PROFILE" -v --steps 1 --out "$TMP/env.trace" -- python3 "$TMP/env.py"
expect_rc 0 "a job with the caller's MALLOC_MMAP_THRESHOLD_"
expect_out '^262144$' "the caller's MALLOC_MMAP_THRESHOLD_ was replaced"
echo "all checks passed"
