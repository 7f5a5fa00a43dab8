#!/usr/bin/env bash
# Fast-mode estimates of the scale decoders: wall time and peak host RSS of the capture
# (xmem-profile-fast, 3 steps; CPU seconds too, since wall time on a shared node measures the
# neighbours) and what xmem-estimate says for an H100-80GB.
# Usage: XMEM_BUILD=/abs/build tests/workloads/scale/measure.sh [SIZE DTYPE BATCH CKPT]...
# (default: a table over 350m, 1.3b, 7b). CKPT is ckpt or full.
set -u
: "${XMEM_BUILD:?set XMEM_BUILD to an absolute build directory}"
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/xmem-scale.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
configs=("$@")
if [ ${#configs[@]} -eq 0 ]; then
    for size in 350m 1.3b 7b; do
        configs+=("$size fp32 1 full" "$size bf16 1 ckpt" "$size bf16 4 ckpt" "$size bf16 4 full")
    done
fi
printf '%-6s %-5s %-5s %-5s %8s %8s %9s %10s %10s %s\n' size dtype batch ckpt wall_s cpu_s rss_MiB peak_GiB limit_GiB fits_H100-80GB
for config in "${configs[@]}"; do
    set -- $config
    flag=""
    [ "$4" = ckpt ] && flag=--checkpoint
    /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$XMEM_BUILD/bin/xmem-profile-fast" --out "$tmp/t.trace" \
        --timeout 600 -- python3 "$here/decoder.py" --size "$1" --dtype "$2" --batch-size "$3" $flag \
        >/dev/null 2>"$tmp/err" || { echo "$config: capture failed:"; tail -3 "$tmp/err"; continue; }
    "$XMEM_BUILD/bin/xmem-estimate" ${XMEM_CATALOG:+--catalog "$XMEM_CATALOG"} --json --gpu H100-80GB --trace-in "$tmp/t.trace" >"$tmp/e.json" 2>/dev/null
    read -r wall user sys rss <"$tmp/time"
    /usr/bin/python3 - "$tmp/e.json" "$config" "$wall" "$rss" "$user" "$sys" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
size, dtype, batch, ckpt = sys.argv[2].split()
g = 1 << 30
cpu = float(sys.argv[5]) + float(sys.argv[6])
print(f"{size:<6} {dtype:<5} {batch:<5} {ckpt:<5} {float(sys.argv[3]):8.1f} {cpu:8.1f} {int(sys.argv[4]) / 1024:9.0f} "
      f"{e['peak_bytes'] / g:10.2f} {e['limit_bytes'] / g:10.2f} "
      f"{'yes' if e['fits'] else 'no'}")
PY
    rm -f "$tmp/t.trace"
done
