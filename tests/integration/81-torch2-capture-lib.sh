#!/usr/bin/env bash
# Issue 16 part 2: the capture library for any torch. A job on a torch other than the one
# xmem was built with gets its own library, built on first use into the per-user cache
# (concurrent first uses build it once); the trace has the tiny MLP's exact storages; a second
# run reuses the cached file; Debian's torch 1.13 uses the shipped library; no compiler is one
# line naming it and the fix (xmem-profile exit status 4).
source "$(dirname "$0")/20-capture-common.bash"
source "$(dirname "$0")/80-torch2-common.bash"
command -v c++ >/dev/null || { echo "no C++ compiler"; exit 77; }
export XDG_CACHE_HOME=$TMP/cache

write_mlp "$TMP/mlp.py"
profile() {
    "$PROFILE" --python "$venv/bin/python" --out "$1" --steps 2 --timeout "${timeout:-60}" \
        -- python "$TMP/mlp.py"
}

# Two first uses at once, with a step timeout (10 s) below the build time (a compiler made
# 12 s slower): one builds, the other waits on the lock; the timer waits for both, so
# neither times out.
printf '#!/bin/sh\nsleep 12\nexec c++ "$@"\n' >"$TMP/slowcc"
chmod +x "$TMP/slowcc"
start=$(date +%s.%N)
CXX=$TMP/slowcc timeout=10 profile "$TMP/a.trace" 2>"$TMP/a.err" & a=$!
CXX=$TMP/slowcc timeout=10 profile "$TMP/b.trace" 2>"$TMP/b.err" & b=$!
log_watch "$TMP/a.err" "$TMP/b.err"
expect_true "first use a" wait $a
expect_true "first use b" wait $b
first=$(/usr/bin/python3 -c "import time; print(round(time.time() - $start, 1))")
built=$(cat "$TMP/a.err" "$TMP/b.err" | grep -c "^xmem: building the capture library for torch $venv_torch into $XDG_CACHE_HOME/xmem/capture")
expect_eq "$built" 1 "builds of the library"
libs=("$XDG_CACHE_HOME"/xmem/capture/libxmem-capture-torch"$venv_torch"-abi?-*.so)
expect_eq "${#libs[@]}" 1 "cached libraries ($(ls -a "$XDG_CACHE_HOME/xmem/capture"))"
expect_true "one cached library: not a file: ${libs[0]}" [ -f "${libs[0]}" ]
expect_true "cache not private" [ "$(stat -c %a "$XDG_CACHE_HOME/xmem/capture")" = 700 ]
expect_eq "$(ls "$XDG_CACHE_HOME"/xmem/capture/.build-* 2>/dev/null)" "" "a temp file is left"
echo "ok: first use built one library in $first s (two concurrent runs, 12 s of it the slowed compiler)"

for t in a b; do
    # Not --phases-in-order: phases under torch 2.x are the shim's (its optimizer phase is
    # missing there today).
    run_ok $CHECK "$TMP/$t.trace" --steps 2 >/dev/null
    expect_true "trace lacks M torch $venv_torch" grep -qx "M torch $venv_torch" "$TMP/$t.trace"
done
# The MLP's parameters, exactly, on the GPU in the set-up phase, and as gradients later.
sizes=$(awk '$1 == "P" { phase = $2 } $1 == "A" && $4 == "g" { print phase, $3 }' "$TMP/a.trace")
for bytes in 2048 128 512 16; do
    expect_true "no $bytes-byte parameter in setup" grep -qx "setup $bytes" <<<"$sizes"
    expect_true "no $bytes-byte gradient" grep -qx "backward $bytes" <<<"$sizes"
done
echo "ok: the trace has the MLP's storages (torch $venv_torch)"

# A second run reuses the cached library: no build, the file untouched.
before=$(stat -c %Y.%i "${libs[0]}")
start=$(date +%s.%N)
log_watch "$TMP/c.err"
profile "$TMP/c.trace" 2>"$TMP/c.err" || fail "cached run"
cached=$(/usr/bin/python3 -c "import time; print(round(time.time() - $start, 1))")
expect_false "rebuilt" grep -q 'building the capture library' "$TMP/c.err"
expect_eq "$(stat -c %Y.%i "${libs[0]}")" "$before" "cached library replaced"
echo "ok: second run reused the cached library ($cached s)"

# Debian's torch is the one xmem was built with: the shipped library, nothing built.
empty=$TMP/empty-cache
XDG_CACHE_HOME=$empty run_ok "$PROFILE" --python /usr/bin/python3 --out "$TMP/d.trace" --steps 2 \
    -- python "$TMP/mlp.py" >/dev/null
expect_true "built for the shipped torch" [ -z "$(ls -A "$empty/xmem/capture" 2>/dev/null)" ]
echo "ok: torch 1.13 uses the shipped library"

# No compiler: one line naming the command and the fix; nothing left in the cache.
rc=0
XDG_CACHE_HOME=$TMP/nocc CXX=/nonexistent/c++ profile "$TMP/e.trace" 2>"$TMP/e.err" || rc=$?
cat "$TMP/e.err"
expect_eq "$rc" 4 "missing compiler: exit status"
expect_eq "$(wc -l <"$TMP/e.err")" 1 "missing compiler: lines on stderr"
expect_true "missing compiler is not one clear line" \
    grep -qx "xmem: cannot build the capture library for torch $venv_torch: no C++ compiler (/nonexistent/c++ not found; install g++, or set CXX)" "$TMP/e.err"
expect_false "missing compiler: left a trace" [ -e "$TMP/e.trace" ]
expect_eq "$(ls "$TMP/nocc/xmem/capture/"*.so 2>/dev/null)" "" "missing compiler: left a library"
echo "ok: a missing compiler is one line"

# A compiler that fails: its first error line, once.
printf '#!/bin/sh\necho "In file included from x.h:1,"\necho "x.cpp:3:1: error: boom"\necho "x.cpp:4:1: error: more"\nexit 1\n' >"$TMP/badcc"
chmod +x "$TMP/badcc"
rc=0
XDG_CACHE_HOME=$TMP/badcache CXX=$TMP/badcc profile "$TMP/g.trace" 2>"$TMP/g.err" || rc=$?
cat "$TMP/g.err"
expect_eq "$rc" 4 "failing compile: exit status"
expect_eq "$(grep -c '^xmem: ' "$TMP/g.err")" 2 "failing compile: 'xmem:' lines"
expect_true "a failing compile is not its first error" \
    grep -qx "xmem: building the capture library for torch $venv_torch failed: x.cpp:3:1: error: boom (with $TMP/badcc -std=c++20; set CXX to a compiler that supports it)" "$TMP/g.err"
expect_eq "$(ls -A "$TMP/badcache/xmem/capture" | grep -v '\.lock$')" "" "a failed build left files"
echo "ok: a failing compile names its first error"

# A cache directory others may write is refused, never loaded from.
mkdir -p "$TMP/shared/xmem/capture" && chmod 777 "$TMP/shared/xmem/capture"
rc=0
XDG_CACHE_HOME=$TMP/shared profile "$TMP/f.trace" 2>"$TMP/f.err" || rc=$?
log_watch "$TMP/f.err"
expect_eq "$rc" 4 "world-writable cache: exit status"
expect_true "a world-writable cache was used" grep -q "^xmem: $TMP/shared/xmem/capture: not yours alone" "$TMP/f.err"
echo "ok: a shared writable cache is refused"

# Issue 26 M7: the cache is opened by descriptor, never through a link, and what is loaded is
# the file that was checked. The directories are created 0700.
expect_eq "$(stat -c %a "$XDG_CACHE_HOME/xmem")" 700 "the mode of xmem/"
refused() { # NAME CACHE PATTERN: the profile exits 4 with the one line PATTERN
    local rc=0
    XDG_CACHE_HOME=$2 profile "$TMP/$1.trace" 2>"$TMP/$1.err" || rc=$?
    expect_eq "$rc" 4 "$1: exit status"
    expect_true "$1: no line '$3': $(cat "$TMP/$1.err")" grep -q "$3" "$TMP/$1.err"
}
lib=$(basename "${libs[0]}")
cp -a "$XDG_CACHE_HOME" "$TMP/linked"
mv "$TMP/linked/xmem/capture/$lib" "$TMP/elsewhere.so"
ln -s "$TMP/elsewhere.so" "$TMP/linked/xmem/capture/$lib"
refused linked-lib "$TMP/linked" "cannot open the cached capture library"
cp -a "$XDG_CACHE_HOME" "$TMP/other"
chown nobody "$TMP/other/xmem/capture/$lib"
refused other-owner "$TMP/other" "xmem: $TMP/other/xmem/capture/$lib: not yours alone"
mkdir -p "$TMP/swapped/xmem" && ln -s "$XDG_CACHE_HOME/xmem/capture" "$TMP/swapped/xmem/capture"
refused linked-dir "$TMP/swapped" "xmem: $TMP/swapped/xmem/capture: cannot open the capture cache"
echo "ok: a linked or foreign cached library or directory is refused"
