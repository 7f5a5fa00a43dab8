#!/usr/bin/env bash
# Issue 27: one list of what the captures replace in the job's process
# (daemon/profiler/python/xmem_patches.py). Each capture is armed on the venv's torch 2.x;
# from inside the job, every attribute of torch, sys and threading that holds xmem's code
# must be an entry of the list, and every entry meant for that capture must be replaced.
source "$(dirname "$0")/85-capture-torch2-common.bash"
[ -x "$XMEM_BUILD/bin/xmem-profile-fast" ] || { echo "xmem-profile-fast not built"; exit 77; }
XMEM_BUILD=$XMEM_BUILD "$VPY" "$XMEM_SRC/tests/unit/xmem_capture/test_patches.py" -v 2>&1 | tail -n 30
echo "all checks passed"
