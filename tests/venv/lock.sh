#!/usr/bin/env bash
# Regenerates requirements.lock from requirements.in: resolves in a scratch venv, then pins
# every installed package with the sha256 of its wheel in the cache install.sh reads.
#   tests/venv/lock.sh [FILE.in]    (default requirements.in; writes FILE.lock beside it)
# hf26.in is the Hugging Face accuracy set's environment (make bench-accuracy).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
in=$(cd "$(dirname "${1:-$here/requirements.in}")" && pwd)/$(basename "${1:-requirements.in}")
lock=${in%.in}.lock
cache=${XMEM_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/xmem/wheels}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
/usr/bin/python3 -m venv "$scratch/venv"
pip=("$scratch/venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" download -r "$in" -d "$cache"
"${pip[@]}" install --no-index --find-links "$cache" -r "$in"
"${pip[@]}" freeze --exclude-editable | "$scratch/venv/bin/python" "$here/pin.py" "$cache" "$(basename "$in")" \
  >"$lock"
echo "$lock: $(grep -c '==' "$lock") packages pinned"
