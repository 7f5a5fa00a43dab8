#!/usr/bin/env bash
# Issue 33, item 4: an answer for a job that does not fit its GPU says what the job needs.
# A wide MLP with Adam (about 13 GiB) on the catalog's smallest GPU: the simulated allocator
# runs out, and the estimate still gives the peak the job needs (replayed without the GPU's
# limit: the reserved peak the largest GPU's estimate has), names the smallest catalog GPU
# whose own estimate fits, prints no limit, and wraps its long lines between words.
set -u
. "$(dirname "$0")/30-estimate-common.bash"
[ -x "$bin/xmem-estimate" ] || { echo "xmem-estimate not built in $XMEM_BUILD"; exit 77; }
[ -x "$bin/xmem-profile-fast" ] || { echo "xmem-profile-fast not built: nothing holds a 13 GiB job"; exit 77; }
catalog=$XMEM_SRC/etc/gpus.yaml
cat >"$tmp/wide.py" <<'PY'
import torch
from torch import nn
model = nn.Sequential(*[nn.Linear(8192, 8192) for _ in range(12)]).cuda()
opt = torch.optim.Adam(model.parameters())
for _ in range(3):
    model(torch.randn(256, 8192, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()
PY
run_to "$tmp/profile.json" "$bin/xmem-estimate" --mode fast --json --gpu H200 \
    --keep-trace "$tmp/wide.trace" -- /usr/bin/python3 "$tmp/wide.py"
expect_rc 0 "the fast profile of the wide MLP" || finish
# gpus_by_size: the catalog's GPU names, smallest memory first.
gpus_by_size() {
    /usr/bin/python3 -c 'import re, sys
gpus = re.findall(r"- name: (\S+)\n(?:.*\n)*?    total_memory_mib: (\d+)", open(sys.argv[1]).read())
print(" ".join(n for n, m in sorted(gpus, key=lambda g: int(g[1]))))' "$catalog"
}
read -r -a gpus <<<"$(gpus_by_size)"
smallest=${gpus[0]} largest=${gpus[${#gpus[@]}-1]}
want=""
for gpu in "${gpus[@]}"; do
    run_to "$tmp/$gpu.json" "$bin/xmem-estimate" --json --gpu "$gpu" --trace-in "$tmp/wide.trace"
    expect_rc 0 "the estimate on $gpu"
    [ -z "$want" ] && [ "$(json "$tmp/$gpu.json" "j['fits']")" = True ] && want=$gpu
done
expect_json "$tmp/$largest.json" "j['fits'] and not j['oom']" "the wide MLP fits $largest"
expect_true "no GPU fits, or the smallest does: the test needs one between" \
    [ -n "$want" -a "$want" != "$smallest" ]
small=$tmp/$smallest.json
check_consistent "$small"
expect_json "$small" "j['oom'] and not j['fits']" "the simulated allocator ran out on $smallest"
expect_json "$small" "j['smallest_fitting_gpu'] == '$want'" "the smallest GPU whose estimate fits ($want)"
expect_json "$tmp/$want.json" "j['smallest_fitting_gpu'] is None" "a job that fits names no other GPU"
# What the job needs is the uncapped replay: the largest GPU's, less its own catalog terms.
for key in reserved_peak_bytes allocated_peak_bytes; do
    expect_true "$key on $smallest is not $largest's" \
        [ "$(json "$small" "j['$key']")" = "$(json "$tmp/$largest.json" "j['$key']")" ]
done
expect_json "$small" "j['peak_bytes'] == j['context_bytes'] + j['reserved_peak_bytes'] + j['outside_allocator_bytes']" \
    "the peak is what the job needs on $smallest"
expect_json "$small" "j['peak_bytes'] > j['gpu_total_bytes']" "the needed peak is above $smallest's memory"

# The text: no limit, the GPU that fits, and every word of the OOM message whole.
run_to "$tmp/text.out" "$bin/xmem-estimate" --gpu "$smallest" --trace-in "$tmp/wide.trace"
expect_rc 0 "the text estimate on $smallest"
log_watch "$tmp/text.out"
expect_false "a limit printed for a job that does not fit" grep -q 'recommended limit' "$tmp/text.out"
expect_true "the GPU that fits is not named" grep -q "^smallest GPU of the catalog that fits: $want " "$tmp/text.out"
expect_true "a line of more than 100 columns with a space in it" \
    awk 'length($0) > 100 && / [^ ]/ {bad=1} END {exit bad}' "$tmp/text.out"
# The message's words, in order, as the text shows them when its lines are joined.
words=$(json "$small" "' '.join(j['oom_message'].split())")
joined=$(tr '\n' ' ' <"$tmp/text.out" | tr -s ' ')
expect_true "the OOM message is cut or changed in the text" grep -qF -- "$words" <<<"$joined"
finish
