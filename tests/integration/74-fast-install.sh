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
    expect_true "not installed: ${f#$stage} (fast mode missing from the install)" [ -e "$f" ]
done
expect_true "installed xmem-profile-fast is not executable" [ -x "$libexec/xmem-profile-fast" ]
expect_false "installed xmem-profile-fast names the source tree $XMEM_SRC" grep -q "$XMEM_SRC" "$libexec/xmem-profile-fast"
expect_eq "$(find "$root/share/xmem/python-fast" -name '__pycache__')" "" "__pycache__ installed"
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
expect_true "installed fast capture wrote no fast trace" grep -q '^M capture fast$' "$TMP/where.trace"
while read -r file; do
    case $file in
    "$root"/share/xmem/python-fast/*|"$root"/share/xmem/python/*) pass "imported the installed ${file#"$root"/}" ;;
    *) fail "the installed fast capture imported $file, not the installed package" ;;
    esac
done <"$TMP/where"
echo "ok: installed xmem-profile-fast runs the installed packages"

# xmem-estimate from the install, default mode (auto): the fast capture, no fall back.
small=(python3 "$WORKLOADS/transformer.py" --arch gpt --layers 2 --hidden 64 --heads 4 --seq 32
       --vocab 1000 --batch-size 2)
for mode in fast auto; do
    run_to "$TMP/e.json" "$libexec/xmem-estimate" --catalog "$XMEM_SRC/etc/gpus.yaml" --json --gpu H100-80GB \
        --mode $mode -- "${small[@]}"
    expect_rc 0 "installed xmem-estimate --mode $mode"
    expect_field "$TMP/e.json" mode fast "installed xmem-estimate --mode $mode: the capture it estimated from"
    expect_no_out 'falling back' "installed xmem-estimate --mode $mode fell back"
done
echo "ok: installed xmem-estimate (--mode fast and auto) uses fast mode"

# xmem --help in the build tree: commands only.
"$XMEM_BUILD/bin/xmem" --help >"$TMP/help"
log_watch "$TMP/help"
for cmd in estimate profile profile-fast; do
    expect_true "xmem --help lacks $cmd" grep -qx "  $cmd" "$TMP/help"
done
for exe in "$XMEM_BUILD"/bin/xmem-*; do
    name=${exe##*/xmem-}
    case $name in *unit*|*test*|*bench*)
        expect_false "xmem --help lists $name" grep -qx "  $name" "$TMP/help" ;;
    esac
done
echo "ok: xmem --help lists commands, not test or bench executables"
