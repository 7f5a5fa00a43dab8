#!/bin/bash
# What `cmake --install` (so `make install`) puts in place for man and bash: the four pages at
# the paths the packages list, found by `man PAGE` under the prefix, and the completion.
# Only docs/man's and daemon/cli's install rules run, into a temporary prefix.
# usage: check_install.bash BUILD_DIR
set -u
build=$1
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
failed=0
problem() { echo "check_install: $*"; failed=1; }

for dir in docs/man daemon/cli; do
    cmake -DCMAKE_INSTALL_PREFIX="$prefix" -P "$build/$dir/cmake_install.cmake" >/dev/null ||
        problem "cmake --install of $dir failed"
done
[[ -f $prefix/share/bash-completion/completions/xmem ]] ||
    problem "share/bash-completion/completions/xmem not installed"
for page in xmem.1 xmemd.8 xmem.yaml.5 xmem-slurm.8; do
    name=${page%.*} section=${page##*.}
    want=$prefix/share/man/man$section/$page
    [[ -f $want ]] || { problem "share/man/man$section/$page not installed"; continue; }
    found=$(MANPATH=$prefix/share/man man -w "$section" "$name" 2>&1)
    [[ $found == "$want" ]] || problem "man -w $section $name: '$found', expected $want"
    env -u MAN_KEEP_FORMATTING MANPATH="$prefix/share/man" MANWIDTH=80 man -P cat "$section" "$name" 2>/dev/null |
        grep -q "^NAME" || problem "man $section $name shows no NAME section"
done
((failed)) || echo "check_install: the pages and the completion install where man and bash look"
exit $failed
