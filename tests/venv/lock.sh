#!/usr/bin/env bash
# Regenerates requirements.lock from requirements.in: resolves in a scratch venv, then pins
# every installed package with the sha256 of its wheel in the cache install.sh reads.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${XMEM_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xmem/wheels}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
/usr/bin/python3 -m venv "$scratch/venv"
pip=("$scratch/venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" download -r "$here/requirements.in" -d "$cache"
"${pip[@]}" install --no-index --find-links "$cache" -r "$here/requirements.in"
"${pip[@]}" freeze --exclude-editable | "$scratch/venv/bin/python" "$here/pin.py" "$cache" \
  >"$here/requirements.lock"
echo "tests/venv/requirements.lock: $(grep -c '==' "$here/requirements.lock") packages pinned"
