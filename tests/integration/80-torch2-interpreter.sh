#!/usr/bin/env bash
# Issue 16 part 1: `xmem estimate` profiles with the interpreter the job would use. `python`
# resolves on the caller's PATH (an activated venv comes first), and the estimate names that
# interpreter and its torch; --torch defaults to the job's torch (a torch newer than every
# release simulated gets the newest rules and a note). An interpreter without torch, or none
# on PATH, is one line naming it and the fix.
set -u
. "$(dirname "$0")/30-estimate-common.bash"
. "$(dirname "$0")/80-torch2-common.bash"
[ -x "$bin/xmem-estimate" ] && [ -x "$bin/xmem-profile" ] || { echo "xmem not built"; exit 77; }
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "/usr/bin/python3 has no torch"; exit 77; }
# The library built for the venv's torch is kept between runs (81 tests the first build).
export XDG_CACHE_HOME=$XMEM_BUILD/test-cache

write_mlp "$tmp/t.py"
estimate() { "$bin/xmem" estimate --mode exact --steps 2 --json "$@"; }

# The venv first on PATH, as `source venv/bin/activate` leaves it.
PATH="$venv/bin:/usr/bin:$PATH" expect 0 '"python"' estimate --keep-trace "$tmp/venv.xtrace" -- python "$tmp/t.py"
cp "$tmp/out" "$tmp/venv.json"
expect_json "$tmp/venv.json" "j['python'] == '$venv/bin/python'" "the venv's interpreter named"
expect_json "$tmp/venv.json" "j['torch_version'] == '$venv_torch'" "the venv's torch named"
# 2.15 is the newest release simulated (docs/allocator.md 11).
if /usr/bin/python3 -c "import sys; v=tuple(map(int, '$venv_torch'.split('+')[0].split('.')[:2])); sys.exit(v <= (2, 15))"; then
    expect_json "$tmp/venv.json" "j['torch_newer_than_known'] and j['torch'] == '2.15'" "a newer torch gets the newest rules"
    expect_json "$tmp/venv.json" "any('newer than the newest allocator' in w for w in j['warnings'])" "a note says so"
else
    expect_json "$tmp/venv.json" "not j['torch_newer_than_known'] and '$venv_torch'.startswith(j['torch'] + '.')" "rules of the job's torch"
    expect_json "$tmp/venv.json" "not any('newer than the newest allocator' in w for w in j['warnings'])" "no newer-torch note"
fi
# A trace from a torch newer than every release simulated: the newest rules, and a note.
sed 's/^M torch .*/M torch 2.16.0+cu132/' "$tmp/venv.xtrace" >"$tmp/newer.xtrace"
expect 0 '"torch_newer_than_known": true' "$bin/xmem-estimate" --json --trace-in "$tmp/newer.xtrace"
cp "$tmp/out" "$tmp/newer.json"
expect_json "$tmp/newer.json" "j['torch'] == '2.15'" "a newer torch gets the newest rules"
expect_json "$tmp/newer.json" "any(\"the job's torch 2.16.0+cu132 is newer than the newest allocator\" in w for w in j['warnings'])" "a note says so"
# xmem sim defaults to the trace's torch the same way.
expect 0 '"torch_source"' "$bin/xmem" sim --json "$tmp/venv.xtrace"
cp "$tmp/out" "$tmp/sim.json"
expect_json "$tmp/sim.json" "j['torch'] == '$(json "$tmp/venv.json" "j['torch']")'" "sim applies the same rules as the estimate"
expect_json "$tmp/sim.json" "j['torch_source'].startswith('trace metadata')" "sim names where its torch came from"
# An explicit --torch still wins.
PATH="$venv/bin:/usr/bin:$PATH" expect 0 '"torch": "2.4"' estimate --torch 2.4 -- python "$tmp/t.py"

# /usr/bin first: Debian's torch 1.13, with its own rules.
PATH="/usr/bin:$venv/bin:$PATH" expect 0 '"python"' estimate -- python3 "$tmp/t.py"
cp "$tmp/out" "$tmp/debian.json"
expect_json "$tmp/debian.json" "j['python'] == '/usr/bin/python3'" "Debian's interpreter named"
expect_json "$tmp/debian.json" "j['torch_version'].startswith('1.13') and j['torch'] == '1.13'" "torch 1.13 and its rules"
expect_json "$tmp/debian.json" "not j['torch_newer_than_known']" "no newer-torch note"

# An interpreter without torch (a bare venv): one line naming it and the fix.
/usr/bin/python3 -m venv --without-pip "$tmp/bare" >/dev/null 2>&1 || { echo "python3 -m venv failed"; exit 77; }
PATH="$tmp/bare/bin:/usr/bin:$PATH" expect 2 "^xmem: $tmp/bare/bin/python3 cannot import torch \(.*\); activate the job's environment, or pass --python" \
    estimate -- python3 "$tmp/t.py"
expect_eq "$(grep -c '^xmem: ' "$tmp/err")" 2 "'xmem:' lines: the interpreter's and the estimate's summary"
# --mode auto does not retry such a job with the exact capture: it would fail alike.
PATH="$tmp/bare/bin:/usr/bin:$PATH" expect 2 "cannot import torch" "$bin/xmem" estimate --steps 2 -- python3 "$tmp/t.py"
expect_false "fell back to the exact capture" grep -q 'falling back' "$tmp/err"
# None on PATH at all.
PATH="/usr/bin" expect 2 "^xmem: python3.99: not found on the job's PATH \(activate the job's environment, or pass --python\)$" \
    estimate -- python3.99 "$tmp/t.py"
# $XMEM_PYTHON (xmem-profile's --python) overrides PATH.
XMEM_PYTHON=/usr/bin/python3 PATH="$tmp/bare/bin:/usr/bin:$PATH" expect 0 '"torch_version": "1.13' \
    estimate -- python3 "$tmp/t.py"
finish
