#!/usr/bin/env bash
# Installs the project's Python environment (requirements.lock) into VENV, from a wheel cache
# outside the tree, so that a second run, a clean clone and CI download nothing.
#   tests/venv/install.sh VENV [LOCK]
# LOCK defaults to requirements.lock; make bench-accuracy also installs hf26.lock (the
# Hugging Face accuracy set's torch 2.6.0 + transformers 4.51.3) into its own venv.
# Quiet when VENV already matches the lock. XMEM_WHEEL_CACHE overrides the cache folder.
# XMEM_VENV_BASE=DIR (deepspeed.lock, with the project venv): VENV sees DIR's packages
# through a .pth, and a source archive in LOCK builds against them (its setup.py may import
# torch), so the lock names only what DIR lacks.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:?usage: tests/venv/install.sh VENV [LOCK]}
lock=${2:-$here/requirements.lock}
cache=${XMEM_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xmem/wheels}
stamp=$venv/.xmem-lock
base=${XMEM_VENV_BASE:-}
want=$(sha256sum <"$lock" | cut -d' ' -f1)
[ -z "$base" ] || want=$(echo "$want $base" | sha256sum | cut -d' ' -f1)

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  exit 0
fi
if [ ! -x /usr/bin/python3 ] || ! /usr/bin/python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "xmem: /usr/bin/python3 cannot make a venv (apt-get install python3-venv)" >&2
  exit 1
fi
echo "xmem: installing the Python environment ($lock) into $venv"
mkdir -p "$cache"
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
build=()
if [ -n "$base" ]; then
  site=$("$base/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' |
    { read -r own; echo "$site" >"$own/xmem-base.pth"; }
  build=(--no-build-isolation)
fi
# Offline first: every wheel already cached means nothing is downloaded.
if ! "${pip[@]}" download --no-index --find-links "$cache" --no-deps --require-hashes \
  "${build[@]}" -r "$lock" -d "$cache" >/dev/null 2>&1; then
  echo "xmem: downloading the files $(basename "$lock") names into $cache (once)"
  "${pip[@]}" download --no-deps --require-hashes "${build[@]}" -r "$lock" -d "$cache"
fi
"${pip[@]}" install --no-index --find-links "$cache" --no-deps --require-hashes "${build[@]}" -r "$lock"
echo "$want" >"$stamp"
