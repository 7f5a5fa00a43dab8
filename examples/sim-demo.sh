#!/usr/bin/env bash
# Replays the bundled training trace (a 6-layer MLP with Adam, 3 iterations; regenerate it
# with examples/traces/make-training-trace.py) through the simulated caching allocator:
# prints the peaks for torch 2.6 defaults, then with expandable segments, and writes a
# timeline page; then replays a real capture of a tiny model (examples/traces/tiny-mlp.py). Environment: XMEM_BUILD (build tree, default ./build), XMEM_DEMO_OUT (where
# the page goes, default a new temporary directory).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=${XMEM_BUILD:-$src/build}
xmem=$build/bin/xmem
trace=$src/examples/traces/mlp-adam.xtrace
out=${XMEM_DEMO_OUT:-$(mktemp -d /tmp/xmem-sim-demo.XXXXXX)}
mkdir -p "$out"
if [ ! -x "$build/bin/xmem-sim" ]; then
    echo "xmem: $build/bin/xmem-sim not built; run 'make' first" >&2
    exit 2
fi

echo "== xmem sim, torch 2.6 defaults, 40 GiB device"
"$xmem" sim --torch 2.6 --capacity 40GiB --timeline "$out/mlp-adam.html" "$trace"
echo
echo "== the same job with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
"$xmem" sim --torch 2.6 --alloc-conf expandable_segments:True "$trace" | grep -E 'peak|segments'
echo
echo "== and on a 384 MiB slice of a GPU"
"$xmem" sim --torch 2.6 --capacity 384MiB "$trace" | grep -E 'peak reserved|OUT OF MEMORY|out of memory'
echo
echo "== a real capture: examples/traces/tiny-mlp.py recorded by xmem-profile on this CPU"
"$xmem" sim --torch 2.6 "$src/examples/traces/tiny-mlp.xtrace" | grep -E 'events|peak'
echo
echo "timeline page: $out/mlp-adam.html"
