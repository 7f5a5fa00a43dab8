# async.bash — what the asynchronous-estimate tests (120-123, docs/async.md) share: a lab where
# sbatch waits 2 s for an estimate, with the fake profiler made slow.
export XMEM_LAB_BUDGET=2 XMEM_LAB_PROFILER=fake

# admin_comment JOB: root's record of the job (the mark while it is held).
admin_comment() { timeout 10 scontrol show job -o "$1" | sed -n 's/.* AdminComment=\(.*\) Comment=.*/\1/p' | sed 's/ *$//'; }

# slow_script FILE LIMIT_MB SLEEP_S: a one-GPU job whose profile takes SLEEP_S seconds (the
# entrypoint beside it, train.py, is only read by xmemd and run by the job).
slow_script() {
    [ -f "$(dirname "$1")/train.py" ] || echo 'pass' >"$(dirname "$1")/train.py"
    job_script "$1" "$2 --fake-sleep=$3" 'echo "ran with ${CUDA_VISIBLE_DEVICES-no GPU}"'
}

# expect_held JOB WHAT: queued held for its estimate, in the share's form for a whole GPU.
expect_held() {
    expect_field "$1" TresPerNode "gres:shard:$LAB_SHARDS_PER_GPU" "$2"
    expect_field "$1" Reason BeginTime "$2"
    expect_true "$2: no estimating mark in the AdminComment: $(admin_comment "$1")" \
        grep -q "^xmem: estimating id=[0-9]* uid=" <<<"$(admin_comment "$1")"
}

# wait_released JOB SECS: the job left its hold (PENDING for its begin time).
wait_released() {
    lab_wait_for "$2" sh -c "[ \"\$(timeout 5 scontrol show job -o $1 | grep -o 'Reason=BeginTime')\" = '' ]"
}

# t_require_async_lab: what these tests need, a lab with xmemd.
t_require_async_lab() {
    t_require_lab
    [ -x "$XMEM_BUILD/bin/xmemd" ] || t_skip "no $XMEM_BUILD/bin/xmemd (the daemon is not built)"
}
