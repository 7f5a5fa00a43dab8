#!/usr/bin/env bash
# Issue 26, L2: a kept preamble line that makes a GPU-hiding variable read-only
# (`readonly CUDA_VISIBLE_DEVICES=0`, `declare -rx XMEM_PROFILING=0`) must not leave it set
# for the estimator: xmemd drops the preamble's values of the forced variables and sets them
# again when it starts the estimator, after the preamble's shell is gone. Sent by a second
# user with a raw client, so no classifier of the plugin's stands in the way.
. "$(dirname "$0")/40-daemon.d/lib.sh"
command -v python3 >/dev/null || { echo "python3 missing"; exit 77; }
start_munged
ensure_user xmemt1
mkdir -m 0700 "$T/w" && echo "print(1)" >"$T/w/train.py" && chown -R xmemt1 "$T/w"
# The estimator writes down the environment it was started in, then answers.
cat >"$T/prof.sh" <<'PROF'
#!/bin/sh
env >estimator.env
echo '{"peak_bytes": 1, "limit_bytes": 2, "fits": true, "gpu": "A100-40GB", "torch": "2.1",
 "mode": "fast", "profile_seconds": 0, "analyze_seconds": 0, "breakdown": {}}'
PROF
chmod 0755 "$T/prof.sh"
write_config
start_xmemd

preamble='export XMEM_T_PREAMBLE=ran
readonly CUDA_VISIBLE_DEVICES=0
declare -rx XMEM_PROFILING=0
declare -rx HIP_VISIBLE_DEVICES=0 ROCR_VISIBLE_DEVICES=0
readonly NVIDIA_VISIBLE_DEVICES=all; export NVIDIA_VISIBLE_DEVICES'
out=$(runuser -u xmemt1 -- env RAW_CWD="$T/w" RAW_PREAMBLE="$preamble" \
    python3 "$SRC/tests/integration/40-daemon.d/rawclient.py" "$SOCK" preamble)
expect_eq "$out" estimated "the estimate with read-only GPU variables in its preamble"
env_file=$T/w/estimator.env
[ -f "$env_file" ] || fail "the estimator did not run"
value() { sed -n "s/^$1=//p" "$env_file"; }
expect_eq "$(value XMEM_T_PREAMBLE)" ran "the preamble ran and its exports reached the estimator"
for name in CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES; do
    expect_eq "$(grep -c "^$name=" "$env_file")" 1 "$name set once"
    expect_eq "$(value $name)" "" "$name in the estimator's environment"
done
expect_eq "$(value NVIDIA_VISIBLE_DEVICES)" void "NVIDIA_VISIBLE_DEVICES in the estimator's environment"
expect_eq "$(value XMEM_PROFILING)" 1 "XMEM_PROFILING in the estimator's environment"
stop_xmemd
echo "ok: read-only GPU variables in a preamble do not reach the estimator"
