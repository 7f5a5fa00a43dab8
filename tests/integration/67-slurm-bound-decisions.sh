#!/usr/bin/env bash
# A decision is bound to the job it was made for (issue 15, findings 10 and 11): the SHA-256
# of its batch script, the SHA-256 of its working directory, of the variables that decide
# what it runs (PATH, VIRTUAL_ENV, ...) and its GPU request are in the signed payload, and job_submit.lua compares them with the job it is attached to. An unprivileged user holding a genuine
# decision (signed by xmemd's uid for them) for tiny.sbatch cannot apply it to big.sbatch,
# nor to another GPU request; a payload field given twice cannot override the first; a
# typed request (--gres=gpu:a100:1) keeps its type. Each refused job keeps its request.
# Against the real xmemd (7-9): a client that names big.sbatch but profiles tiny.py is
# refused (script_mismatch), a --wrap decision is bound to its own command, and a decision
# made in directory A does not fit a job whose --chdir is B, where big.py differs (10-11),
# nor a job submitted with another VIRTUAL_ENV (12); srun and salloc still pack (13).
T_NAME=67-slurm-bound-decisions
. "$(dirname "$0")/lab/testlib.sh"
t_require_lab
command -v gcc >/dev/null || t_skip "gcc not installed"
[ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"
LAB_GPU_TYPE=a100 XMEM_LAB_PROFILER=fake lab_up shard
expect_true "the lab started without xmemd" [ "$LAB_XMEMD" = 1 ]
cd "$LAB/jobs" || fail "no jobs dir"
lab_forge_client
U=nobody
UID_U=$(id -u $U)

printf '#!/bin/bash\n#SBATCH --gres=gpu:1\npython3 tiny.py\n' >tiny.sbatch
printf '#!/bin/bash\n#SBATCH --gres=gpu:1\npython3 big.py --layers 96\n' >big.sbatch
chmod a+r tiny.sbatch big.sbatch
tiny=$(sha256sum <tiny.sbatch | cut -d' ' -f1)
# The jobs directory as sbatch sends it without --chdir (getcwd: no symlinks), and its digest.
J=$(pwd -P)
jobs_dir=$(printf %s "$J" | sha256sum | cut -d' ' -f1)
# The environment a forged job of U's has, over PATH alone: the payload lists the names it
# binds (envnames), and the controller hashes those (signer.h, request_env_text).
path=$(runuser -u $U -- printenv PATH)
job_env=$(printf 'PATH=%d:%s\n' "${#path}" "$path" | sha256sum | cut -d' ' -f1)
later=$(($(date +%s) + 600))
# decision SCRIPT_SHA GRES [EXTRA]: what xmemd signs for uid U in $J (4 GiB limit → shard:2).
decision() {
    cred root "xmem-decision v1 uid=$UID_U request=9 peak=3221225472 limit=4294967296 gpu=A100-40GB script=$1 dir=$jobs_dir gres=$2 envnames=PATH env=$job_env ${3:-}expires=$later"
}

# expect_decision_refused WHY_REGEX REQUEST WHAT
expect_decision_refused() {
    expect_field "$JOB" TresPerNode "$2" "$3"
    expect_true "$3: controller log lacks 'decision ignored: $1'" \
        grep -qE "xmem: uid $UID_U: decision ignored: $1; job keeps its original request" "$LAB/log/slurmctld.log"
    expect_out "xmem: the estimate could not be verified" "$3: user message"
}

# 1. Positive control: the decision for tiny.sbatch, on tiny.sbatch (sbatch sends the file's
#    bytes unchanged: the controller's digest of job_desc.script is the file's).
forged_sbatch $U "$(decision "$tiny" gpu:1)" tiny.sbatch
expect_field "$JOB" TresPerNode gres:shard:2 "decision on its own script"
pass "a decision for tiny.sbatch is applied to tiny.sbatch (shard:2)"

# 2. The same decision attached to big.sbatch.
forged_sbatch $U "$(decision "$tiny" gpu:1)" big.sbatch
expect_decision_refused "decision was made for another batch script \(sha256 ${tiny:0:12}, this job's [0-9a-f]{12}\)" \
    "$(lab_whole_gres)" "tiny's decision on big.sbatch"
pass "a decision for tiny.sbatch attached to big.sbatch is refused; the job keeps its whole GPU"

# 3. A decision for a --wrap job (no script file) attached to big.sbatch.
forged_sbatch $U "$(decision - gpu:1)" big.sbatch
expect_decision_refused "decision was made for another batch script \(sha256 -, this job's [0-9a-f]{12}\)" \
    "$(lab_whole_gres)" "--wrap decision on big.sbatch"
pass "a decision made without a script is refused for a batch script"

# 4. Another GPU request than the decision's.
forged_sbatch $U "$(decision "$tiny" gpu:a100:1)" tiny.sbatch
expect_decision_refused "decision was made for the GPU request gpu:a100:1, this job asks for gpu:1" \
    "$(lab_whole_gres)" "decision for another GPU request"
pass "a decision for another GPU request is refused"

# 5. A later field cannot override an earlier one (an unescaped GPU name once could).
forged_sbatch $U "$(decision "$tiny" gpu:1 "limit=1 ")" tiny.sbatch
expect_decision_refused "decision field 'limit' given twice" "$(lab_whole_gres)" "repeated field"
forged_sbatch $U "$(decision "$tiny" gpu:1 "whole=0 ")" tiny.sbatch
expect_decision_refused "unknown decision field 'whole'" "$(lab_whole_gres)" "unknown field"
pass "a payload field given twice, or unknown, refuses the decision"

# 5b. A decision without the directory (an older xmemd) is refused: they upgrade together.
#     (Test 40 checks that xmemd signs dir and env.)
forged_sbatch $U "$(cred root "xmem-decision v1 uid=$UID_U request=9 peak=3221225472 limit=4294967296 gpu=A100-40GB script=$tiny gres=gpu:1 envnames=PATH env=$job_env expires=$later")" tiny.sbatch
expect_decision_refused "incomplete decision: .*" "$(lab_whole_gres)" "decision without dir"
pass "a decision that names no working directory is refused"

# 6. A typed request keeps its type: a share has none, so the job keeps its whole GPU.
forged_sbatch $U "$(decision "$tiny" gpu:a100:1)" --gres=gpu:a100:1 tiny.sbatch
expect_field "$JOB" TresPerNode gres:gpu:a100:1 "typed request"
grep -q "xmem: uid $UID_U: a share cannot keep the GPU type a100: the job keeps its whole GPU" \
    "$LAB/log/slurmctld.log" || fail "typed request: controller log lacks the reason"
expect_out "xmem: a share cannot keep the GPU type a100" "typed request: user message"
pass "--gres=gpu:a100:1 keeps its type (whole GPU, with the reason)"

# ---- Against the real xmemd, through its socket, as the unprivileged user (the fake
# profiler sizes a job from its --fake-limit-mb argument).
cat >ask.py <<'PY'
import json, os, socket, struct, sys
# The environment this user's sbatch would export, as the plugin sends it (xmemd keeps its
# list of variables), with the request's own values over it.
req = json.loads(sys.argv[2])
req["env"] = {**os.environ, **req.get("env", {})}
body = json.dumps(req).encode()
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(60)
s.connect(sys.argv[1])
s.sendall(struct.pack(">IHHII", 0x584D454D, 1, 1, len(body), 0) + body)
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
    if len(data) >= 16 and len(data) >= 16 + struct.unpack(">IHHII", data[:16])[3]:
        break
r = json.loads(data[16:])
print(r.get("outcome_name", "?"))
print(r.get("decision", ""))
print(r.get("message", ""))
PY
chmod a+r ask.py
for f in tiny big a b; do echo 'print(1)' >$f.py; done
chmod a+r ./*.py
printf '#!/bin/bash\n#SBATCH --gres=gpu:1\nexport OMP_NUM_THREADS=2\npython3 big.py --fake-limit-mb=30000\n' >big2.sbatch
chmod a+r big2.sbatch
# ask BODY_JSON: ASK_OUTCOME, ASK_DECISION, ASK_MESSAGE from xmemd, asked as U.
ask() {
    local out
    out=$(cd "$J" && runuser -u $U -- timeout 90 python3 ask.py "$LAB/run/xmemd.sock" "$1" 2>&1)
    ASK_OUTCOME=$(sed -n 1p <<<"$out") ASK_DECISION=$(sed -n 2p <<<"$out") ASK_MESSAGE=$(sed -n 3p <<<"$out")
    echo "ask $1 -> $ASK_OUTCOME: $ASK_MESSAGE" >&2
}

# 7. big2.sbatch's path with tiny.py's argv: refused, nothing signed, nothing profiled.
ask '{"argv":["python3","tiny.py","--fake-limit-mb=2048"],"cwd":"'"$J"'","script":"'"$J"'/big2.sbatch","gres":"gpu:1","preamble":[{"line":3,"text":"export OMP_NUM_THREADS=2"}]}'
expect_true "big2.sbatch with tiny.py's argv: outcome $ASK_OUTCOME ($ASK_MESSAGE)" \
    [ "$ASK_OUTCOME" = script_mismatch ]
expect_true "big2.sbatch with tiny.py's argv: a decision was signed" [ -z "$ASK_DECISION" ]
expect_true "mismatch message: $ASK_MESSAGE" \
    grep -q "but $J/big2.sbatch runs 'python3 big.py --fake-limit-mb=30000' (line 4)" <<<"$ASK_MESSAGE"
# The right argv, but the preamble dropped: the profile would not run as the job does.
ask '{"argv":["python3","big.py","--fake-limit-mb=30000"],"cwd":"'"$J"'","script":"'"$J"'/big2.sbatch","gres":"gpu:1"}'
expect_true "big2.sbatch without its preamble: outcome $ASK_OUTCOME" [ "$ASK_OUTCOME" = script_mismatch ]
# Control: what big2.sbatch runs is estimated and signed, and fits big2.sbatch.
ask '{"argv":["python3","big.py","--fake-limit-mb=30000"],"cwd":"'"$J"'","script":"'"$J"'/big2.sbatch","gres":"gpu:1","preamble":[{"line":3,"text":"export OMP_NUM_THREADS=2"}]}'
expect_true "big2.sbatch's own entrypoint: outcome $ASK_OUTCOME ($ASK_MESSAGE)" [ "$ASK_OUTCOME" = estimated ]
forged_sbatch $U "$ASK_DECISION" big2.sbatch
got=$(lab_field "$JOB" TresPerNode)
case $got in gres:shard:*) ;; *) fail "big2.sbatch's own decision: job has $got, expected a shard" ;; esac
pass "xmemd refuses big2.sbatch's path with tiny.py's argv (script_mismatch); its own entrypoint is signed and applied ($got)"

# 8. A --wrap decision is bound to its command: replayed on another --wrap command, ignored.
wrap_a='python3 a.py --fake-limit-mb=4096'
ask '{"argv":["python3","a.py","--fake-limit-mb=4096"],"cwd":"'"$J"'","wrap":"'"$wrap_a"'","gres":"gpu:1"}'
expect_true "--wrap estimate: outcome $ASK_OUTCOME ($ASK_MESSAGE)" [ "$ASK_OUTCOME" = estimated ]
forged_sbatch $U "$ASK_DECISION" --gres=gpu:1 --wrap "python3 b.py --fake-limit-mb=4096"
expect_decision_refused "decision was made for another batch script \(sha256 [0-9a-f]{12}, this job's [0-9a-f]{12}\)" \
    "$(lab_whole_gres)" "a --wrap decision on another --wrap command"
ask '{"argv":["python3","a.py","--fake-limit-mb=4096"],"cwd":"'"$J"'","wrap":"'"$wrap_a"'","gres":"gpu:1"}'
forged_sbatch $U "$ASK_DECISION" --gres=gpu:1 --wrap "$wrap_a"
expect_field "$JOB" TresPerNode gres:shard:2 "a --wrap decision on its own command"
# A --wrap request whose argv is not its command's is refused like a script's.
ask '{"argv":["python3","b.py"],"cwd":"'"$J"'","wrap":"'"$wrap_a"'","gres":"gpu:1"}'
expect_true "--wrap with another argv: outcome $ASK_OUTCOME" [ "$ASK_OUTCOME" = script_mismatch ]
pass "a --wrap decision is refused on another --wrap command and applied on its own (shard:2)"

# 9. The real plugin: a --wrap job is estimated by xmemd and packed by the controller, so the
#    plugin, xmemd and job_submit.lua agree on sbatch's --wrap bytes.
submit_as $U sbatch --xmem --hold -o /dev/null --gres=gpu:1 --wrap "python3 b.py --fake-limit-mb=4096"
expect_field "$JOB" TresPerNode gres:shard:2 "sbatch --xmem --wrap"
run scontrol write batch_script "$JOB" "$J/wrap-script.out"
want=$(printf '#!/bin/sh\n# This script was created by sbatch --wrap.\n\npython3 b.py --fake-limit-mb=4096\n' | sha256sum)
expect_true "sbatch's --wrap script is not the one xmemd builds: $(od -c "$J/wrap-script.out" | head -5)" \
    [ "$(sha256sum <"$J/wrap-script.out")" = "$want" ]
pass "sbatch --xmem --wrap through the real plugin and xmemd is packed (shard:2)"
# 10. The working directory: a decision made in A, attached to a job run in B (--chdir),
#     where big.py is another file, is ignored; the same script in A still packs.
mkdir -p wa wb
echo 'print("tiny")' >wa/big.py
printf 'print("big")\n' >wb/big.py
chmod a+rx wa wb && chmod a+r wa/big.py wb/big.py
printf '#!/bin/bash\n#SBATCH --gres=gpu:1\npython3 big.py --fake-limit-mb=4096\n' >run.sbatch
chmod a+r run.sbatch
ask '{"argv":["python3","big.py","--fake-limit-mb=4096"],"cwd":"'"$J/wa"'","script":"'"$J"'/run.sbatch","gres":"gpu:1"}'
expect_true "run.sbatch in wa: outcome $ASK_OUTCOME ($ASK_MESSAGE)" [ "$ASK_OUTCOME" = estimated ]
wa=$(printf %s "$J/wa" | sha256sum | cut -d' ' -f1)
forged_sbatch $U "$ASK_DECISION" --chdir="$J/wb" run.sbatch
expect_decision_refused "decision was made in another working directory than this job's $J/wb \(sha256 ${wa:0:12}, this job's [0-9a-f]{12}\)" \
    "$(lab_whole_gres)" "a decision made in wa on a job run in wb"
expect_field "$JOB" WorkDir "$J/wb" "the refused job's directory"
ask '{"argv":["python3","big.py","--fake-limit-mb=4096"],"cwd":"'"$J/wa"'","script":"'"$J"'/run.sbatch","gres":"gpu:1"}'
forged_sbatch $U "$ASK_DECISION" --chdir="$J/wa" run.sbatch
expect_field "$JOB" TresPerNode gres:shard:2 "a decision made in wa on a job run in wa"
pass "a decision made in wa is ignored for --chdir=wb (the job keeps its whole GPU) and applied in wa (shard:2)"

# 11. The real plugin with --chdir: it sends the directory sbatch sets as work_dir.
submit_as $U sbatch --xmem --hold -o /dev/null --gres=gpu:1 --chdir="$J/wb" run.sbatch
expect_field "$JOB" TresPerNode gres:shard:2 "sbatch --xmem --chdir"
pass "sbatch --xmem --chdir=wb through the real plugin and xmemd is packed (shard:2)"
# A relative --chdir: sbatch makes it absolute against its cwd, and so must the plugin.
for rel in wb ./wb; do
    submit_as $U sbatch --xmem --hold -o /dev/null --gres=gpu:1 --chdir=$rel run.sbatch
    expect_field "$JOB" TresPerNode gres:shard:2 "sbatch --xmem --chdir=$rel"
    echo "--chdir=$rel: WorkDir=$(lab_field "$JOB" WorkDir)" >&2
done
# From a directory entered through a symlink, sbatch bases a relative --chdir on $PWD
# (get_current_dir_name), not on getcwd: the plugin must send that same spelling.
ln -sfn "$J" link
RUN_OUT=$(cd "$J/link" && runuser -u $U -- env SLURM_CONF="$SLURM_CONF" PATH=/usr/bin:/bin \
    sbatch --xmem --hold -o /dev/null --gres=gpu:1 --chdir=wb "$J/run.sbatch" 2>&1)
JOB=$(lab_jobid "$RUN_OUT")
expect_true "sbatch from the symlinked directory submitted nothing" [ -n "$JOB" ]
expect_field "$JOB" WorkDir "$J/link/wb" "--chdir=wb from $J/link"
expect_field "$JOB" TresPerNode gres:shard:2 "sbatch --xmem --chdir=wb from $J/link"
pass "sbatch --xmem with a relative --chdir (wb, ./wb, and wb under a symlinked \$PWD) is packed (shard:2)"

# 12. The environment: a decision made with VIRTUAL_ENV=/venvs/a, attached to a job
#     submitted with VIRTUAL_ENV=/venvs/b, is ignored; with /venvs/a it packs.
run_a='{"argv":["python3","big.py","--fake-limit-mb=4096"],"cwd":"'"$J/wa"'","script":"'"$J"'/run.sbatch","gres":"gpu:1","env":{"VIRTUAL_ENV":"/venvs/a"}}'
ask "$run_a"
expect_true "run.sbatch with /venvs/a: outcome $ASK_OUTCOME ($ASK_MESSAGE)" [ "$ASK_OUTCOME" = estimated ]
VIRTUAL_ENV=/venvs/b forged_sbatch $U "$ASK_DECISION" --chdir="$J/wa" run.sbatch
expect_decision_refused "decision was made with other values of PATH, PYTHONPATH, .*VIRTUAL_ENV, .* than this job's \(sha256 [0-9a-f]{12}, this job's [0-9a-f]{12}\)" \
    "$(lab_whole_gres)" "a decision made with /venvs/a on a job submitted with /venvs/b"
ask "$run_a"
VIRTUAL_ENV=/venvs/a forged_sbatch $U "$ASK_DECISION" --chdir="$J/wa" run.sbatch
expect_field "$JOB" TresPerNode gres:shard:2 "a decision made with /venvs/a on a job with /venvs/a"
pass "a decision made with VIRTUAL_ENV=/venvs/a is ignored for a job with /venvs/b (whole GPU) and applied with /venvs/a (shard:2)"

# 13. srun and salloc outside a job are bound to their directory too (getcwd, as the plugin
#     sends it); their environment is not (slurmctld gives Lua none for them): both pack.
log_count() { grep -cE "xmem: uid $UID_U: $1" "$LAB/log/slurmctld.log" || true; }
ignored=$(log_count "decision ignored") packed=$(log_count "estimate=3686M .*-> shard:2")
for c in srun salloc; do
    out=$(cd "$J/wa" && runuser -u $U -- env SLURM_CONF="$SLURM_CONF" PATH=/usr/bin:/bin \
        timeout 60 $c --gres=gpu:1 --xmem python3 big.py --fake-limit-mb=4096 2>&1) ||
        fail "$c --xmem failed: $out"
done
expect_true "srun/salloc: a decision was ignored" [ "$(log_count "decision ignored")" = "$ignored" ]
expect_true "srun/salloc: expected two more packed jobs in the controller log" \
    [ "$(log_count "estimate=3686M .*-> shard:2")" = $((packed + 2)) ]
pass "srun and salloc --xmem decisions from $J/wa are applied (shard:2)"

finish
