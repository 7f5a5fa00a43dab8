#!/usr/bin/env bash
# Installed fast mode: `make install` (cmake --install, staged with DESTDIR) puts
# xmem-profile-fast beside xmem-profile and xmem-estimate in libexec/xmem, with its Python
# package in share/xmem/python-fast; the installed launcher uses the installed packages (fast
# and exact), not the source tree, and `xmem-estimate` (default --mode auto) estimates from
# the fast capture without falling back. Also: `xmem --help` lists commands, not the test and
# bench executables a build tree's bin/ holds.
source "$(dirname "$0")/70-fast-common.bash"

prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$XMEM_BUILD/CMakeCache.txt")
stage=$TMP/stage
DESTDIR=$stage run_ok cmake --install "$XMEM_BUILD" >/dev/null
root=$stage$prefix
libexec=$root/libexec/xmem
for f in "$libexec/xmem-profile" "$libexec/xmem-estimate" "$libexec/xmem-profile-fast" \
         "$root/share/xmem/python-fast/sitecustomize.py" "$root/share/xmem/python-fast/xmem_fast/arm.py" \
         "$root/share/xmem/python/xmem_capture/bootstrap.py"; do
    [ -e "$f" ] || { echo "FAILED: not installed: ${f#$stage} (fast mode missing from the install)"; exit 1; }
done
[ -x "$libexec/xmem-profile-fast" ] || { echo "FAILED: installed xmem-profile-fast is not executable"; exit 1; }
grep -q "$XMEM_SRC" "$libexec/xmem-profile-fast" && {
    echo "FAILED: installed xmem-profile-fast names the source tree $XMEM_SRC"; exit 1; }
find "$root/share/xmem/python-fast" -name '__pycache__' | grep -q . && { echo "FAILED: __pycache__ installed"; exit 1; }
echo "ok: fast mode installed in ${libexec#$stage} and ${prefix}/share/xmem/python-fast"

# The packages the installed launcher runs with (a staged tree is also a moved one: the
# launcher finds them relative to itself).
cat >"$TMP/where.py" <<PY
import torch, xmem_fast, xmem_capture
open("$TMP/where", "w").write(xmem_fast.__file__ + "\n" + xmem_capture.__file__ + "\n")
model = torch.nn.Linear(16, 4).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(4):
    opt.zero_grad()
    model(torch.randn(8, 16, device="cuda")).square().mean().backward()
    opt.step()
PY
run_ok "$libexec/xmem-profile-fast" --out "$TMP/where.trace" --steps 2 -- python3 "$TMP/where.py" >/dev/null
grep -q '^M capture fast$' "$TMP/where.trace" || { echo "FAILED: installed fast capture wrote no fast trace"; exit 1; }
while read -r file; do
    case $file in
    "$root"/share/xmem/python-fast/*|"$root"/share/xmem/python/*) ;;
    *) echo "FAILED: the installed fast capture imported $file, not the installed package"; exit 1 ;;
    esac
done <"$TMP/where"
echo "ok: installed xmem-profile-fast runs the installed packages"

# xmem-estimate from the install, default mode (auto): the fast capture, no fall back.
small=(python3 "$WORKLOADS/transformer.py" --arch gpt --layers 2 --hidden 64 --heads 4 --seq 32
       --vocab 1000 --batch-size 2)
for mode in fast auto; do
    "$libexec/xmem-estimate" --catalog "$XMEM_SRC/etc/gpus.yaml" --json --gpu H100-80GB \
        --mode $mode -- "${small[@]}" >"$TMP/e.json" 2>"$TMP/e.err" || {
        echo "FAILED: installed xmem-estimate --mode $mode"; cat "$TMP/e.err"; exit 1; }
    got=$($PY -c "import json; print(json.load(open('$TMP/e.json'))['mode'])")
    [ "$got" = fast ] && ! grep -q 'falling back' "$TMP/e.err" || {
        echo "FAILED: installed xmem-estimate --mode $mode estimated from the $got capture:"
        cat "$TMP/e.err"; exit 1; }
done
echo "ok: installed xmem-estimate (--mode fast and auto) uses fast mode"

# xmem --help in the build tree: commands only.
"$XMEM_BUILD/bin/xmem" --help >"$TMP/help"
for cmd in estimate profile profile-fast; do
    grep -qx "  $cmd" "$TMP/help" || { echo "FAILED: xmem --help lacks $cmd"; cat "$TMP/help"; exit 1; }
done
for exe in "$XMEM_BUILD"/bin/xmem-*; do
    name=${exe##*/xmem-}
    case $name in *unit*|*test*|*bench*)
        grep -qx "  $name" "$TMP/help" && { echo "FAILED: xmem --help lists $name"; cat "$TMP/help"; exit 1; } ;;
    esac
done
echo "ok: xmem --help lists commands, not test or bench executables"
