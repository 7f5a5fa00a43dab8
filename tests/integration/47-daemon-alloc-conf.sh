#!/usr/bin/env bash
# A job's allocator settings travel with its request: PYTORCH_ALLOC_CONF (the name PyTorch
# 2.9+ reads first) set on the client side reaches the estimator's environment through xmemd
# (daemon/contract/request_env.h), and with the real xmem-estimate it changes the estimate:
# expandable segments reserve less than the native allocator for the same job.
. "$(dirname "$0")/40-daemon.d/lib.sh"
start_munged
ensure_user xmemt1
mkdir -m 0755 "$T/w"
echo 'pass' >"$T/w/train.py"
chown -R xmemt1 "$T/w"

# A stand-in estimator reporting the allocator settings it was started with.
cat >"$T/prof.sh" <<'PROF'
#!/bin/sh
cat <<JSON
{"peak_bytes": 1073741824, "limit_bytes": 1288490189, "fits": true, "gpu": "A100-40GB",
 "torch": "2.1", "mode": "fast", "profile_seconds": 0, "analyze_seconds": 0.01,
 "breakdown": {"alloc_conf": "${PYTORCH_ALLOC_CONF:-unset}", "cuda_alloc_conf": "${PYTORCH_CUDA_ALLOC_CONF:-unset}"}}
JSON
PROF
chmod 0755 "$T/prof.sh"
write_config
start_xmemd

# The estimates' own deadline is 300 s.
RUN_TIMEOUT=330
# estimate_as OUT [VAR=VALUE...] -- ARGV: an estimate by the test user with that environment;
# its reply is what a failed check prints.
estimate_as() {
    local out=$1; shift
    local envs=()
    while [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    log_watch "$out"
    run_to "$out" runuser -u xmemt1 -- env -u PYTORCH_ALLOC_CONF -u PYTORCH_CUDA_ALLOC_CONF \
        "${envs[@]}" "$L" estimate "$SOCK" --cwd "$T/w" --deadline 300000 -- "$@"
    expect_rc 0 "estimate ${envs[*]}"
}
breakdown() { sql "SELECT breakdown FROM requests WHERE id=$(kv "$1" id)"; }

log "the estimator sees the job's PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF"
estimate_as "$T/s0" -- python3 train.py
expect_true "unset: $(breakdown "$T/s0")" grep -q '"alloc_conf":"unset"' <<<"$(breakdown "$T/s0")"
estimate_as "$T/s1" PYTORCH_ALLOC_CONF=expandable_segments:True -- python3 train.py
expect_eq "$(kv "$T/s1" cached)" 0 "another allocator setting is another estimate"
expect_true "PYTORCH_ALLOC_CONF did not reach the estimator: $(breakdown "$T/s1")" \
    grep -q '"alloc_conf":"expandable_segments:True"' <<<"$(breakdown "$T/s1")"
estimate_as "$T/s2" PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- python3 train.py
expect_true "PYTORCH_CUDA_ALLOC_CONF did not reach the estimator: $(breakdown "$T/s2")" \
    grep -q '"cuda_alloc_conf":"expandable_segments:True"' <<<"$(breakdown "$T/s2")"
stop_xmemd

# The same request through the real estimator: the simulator must apply the setting.
use_real_estimator xmemt1
# Scratch buffers of growing sizes: the native allocator gives each one above 10 MiB its own
# segment (a freed smaller one cannot hold the next), expandable segments grow one range.
cat >"$T/w/linear.py" <<'PY'
import torch
model = torch.nn.Linear(1024, 768).to("cuda")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    for mib in (10, 12, 14, 16, 18):
        scratch = torch.empty(mib << 20, dtype=torch.uint8, device="cuda")
        del scratch
    model(torch.randn(16, 1024, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
PY
chown xmemt1 "$T/w/linear.py"
# Expandable segments are a torch 2.x allocator (torch 1.13 itself refuses the option, and so
# does the estimate for a 1.13 job): the job runs the project venv's torch, first on its PATH.
venv=${XMEM_VENV:-$XMEM_SRC/.venv}
runuser -u xmemt1 -- "$venv/bin/python" -c 'import torch' 2>/dev/null || {
    echo "test user xmemt1 cannot import torch from $venv (make deps; the checkout must be readable by other users)"
    exit 77
}
job_path=PATH=$venv/bin:/usr/bin:/bin
start_xmemd
log "the real estimate with and without expandable segments (torch 2.x from $venv)"
estimate_as "$T/r0" "$job_path" -- python3 linear.py
estimate_as "$T/r1" "$job_path" PYTORCH_ALLOC_CONF=expandable_segments:True -- python3 linear.py
native=$(kv "$T/r0" peak); expandable=$(kv "$T/r1" peak)
echo "peak: native $native, expandable segments $expandable"
lowered="PYTORCH_ALLOC_CONF=expandable_segments:True did not lower the estimate ($native -> $expandable)"
expect_true "$lowered" [ "$expandable" -gt 0 ]
expect_true "$lowered" [ "$expandable" -lt "$native" ]
stop_xmemd
finish
