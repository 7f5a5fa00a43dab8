# Shared by the FSDP tests of issue 29 (101-fast-torch2-ranks-*.sh; sourced, not a test
# itself), built on 90-fast-torch2-common.bash: fsdp.py, ranks_check.py, and one rank of N
# captured alone.
source "$(dirname "${BASH_SOURCE[0]}")/90-fast-torch2-common.bash"
EST=$XMEM_BUILD/bin/xmem-estimate
export PATH=$VENV/bin:$PATH HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
FSDP=$WORKLOADS/torch2/fsdp.py
CHECK=$WORKLOADS/torch2/ranks_check.py

# fsdp_rank1 N NAME ARGS...: fsdp.py ARGS as rank 1 of N, with the environment
# xmem-estimate gives it, 3 steps, into $TMP/NAME.trace, and its estimate into
# $TMP/NAME.json; RUN_RC is the capture's exit status.
fsdp_rank1() {
    local n=$1 name=$2
    shift 2
    env XMEM_WORLD_SIZE=$n RANK=1 LOCAL_RANK=1 WORLD_SIZE=$n LOCAL_WORLD_SIZE=$n \
        MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
        "$FAST" --python "$VPY" --out "$TMP/$name.trace" --steps 3 -- python "$FSDP" --steps 3 "$@" \
        >"$TMP/out" 2>"$TMP/err"
    RUN_RC=$?
    [ -s "$TMP/$name.trace" ] && "$EST" --json --gpu H100-80GB --trace-in "$TMP/$name.trace" \
        >"$TMP/$name.json" 2>/dev/null
}
