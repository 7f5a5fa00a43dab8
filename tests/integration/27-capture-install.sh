#!/usr/bin/env bash
# The installed layout: install() rules put the launcher in libexec/xmem, the library in
# lib/xmem and the package in share/xmem/python; an installed launcher (not in the build
# tree) looks there, says what is missing, and captures with the installed files.
source "$(dirname "$0")/20-capture-common.bash"

inst=$TMP/inst
run_ok cmake -DCMAKE_INSTALL_PREFIX="$inst" -P "$XMEM_BUILD/daemon/profiler/cmake_install.cmake"
libdir=$(ls -d "$inst"/lib*/xmem | head -n 1)
for f in "$inst/libexec/xmem/xmem-profile" "$libdir/libxmem-capture.so" \
         "$inst/share/xmem/python/sitecustomize.py" "$inst/share/xmem/python/xmem_capture/bootstrap.py" \
         "$inst/share/xmem/python/xmem_capture/sitechain.py" \
         "$inst/share/xmem/python/xmem_capture/capture_lib.py" \
         "$inst/share/xmem/capture-src/capture_api.cpp" "$inst/share/xmem/capture-src/torch_hooks.h" \
         "$inst/share/xmem/capture-src/include/common/result.h" \
         "$inst/share/xmem/capture-src/include/trace/records.h"; do
    expect_true "not installed: $f" [ -e "$f" ]
done
# The installed capture sources are the tree's, every xmem header they include with them: the
# same cache key, so an installed xmem reuses a library the build tree built and vice versa.
run_ok $PY -B -c "import sys; sys.path.insert(0, '$inst/share/xmem/python')
from xmem_capture.capture_lib import source_hash, _source_files
inst = '$inst/share/xmem/capture-src'
assert len(_source_files(inst, inst + '/include')) == 10, sorted(_source_files(inst, inst + '/include'))
assert source_hash(inst, inst + '/include') == source_hash('$XMEM_SRC/daemon/profiler/capture', '$XMEM_SRC/simulator')" >/dev/null
expect_eq "$(find "$inst/share/xmem/python" -name '__pycache__')" "" "__pycache__ installed"

prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$XMEM_BUILD/CMakeCache.txt")
if [ ! -e "$prefix/share/xmem/python/sitecustomize.py" ]; then
    rc=0
    "$inst/libexec/xmem/xmem-profile" --out "$TMP/t.trace" -- python3 x.py 2>"$TMP/err" || rc=$?
    cat "$TMP/err"
    expect_eq "$rc" 1 "installed launcher without its package: exit status"
    expect_true "installed launcher did not look in $prefix/share/xmem/python" \
        grep -q "^xmem: $prefix/share/xmem/python/sitecustomize.py: not found (reinstall xmem or set XMEM_PROFILER_PYDIR)$" "$TMP/err"
fi

cat >"$TMP/train.py" <<'PY'
import torch
model = torch.nn.Linear(16, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(10):
    opt.zero_grad()
    model(torch.randn(8, 16, device="cuda")).square().mean().backward()
    opt.step()
PY
XMEM_PROFILER_PYDIR=$inst/share/xmem/python XMEM_CAPTURE_LIB=$libdir/libxmem-capture.so \
    run_ok "$inst/libexec/xmem/xmem-profile" --out "$TMP/t.trace" --steps 2 -- python3 "$TMP/train.py"
run_ok $CHECK "$TMP/t.trace" --steps 2 --phases-in-order --min-setup-gpu-bytes $(( (16 * 4 + 4) * 4 )) >/dev/null
echo "ok: installed layout works"
