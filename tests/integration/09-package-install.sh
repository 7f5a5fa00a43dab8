#!/usr/bin/env bash
# The Debian packages (make deb, docs/packaging.md) as a site installs them: `apt-get install`
# on this machine, then the lab's submit test (50) and a submission the installed xmemd sizes
# with the installed xmem-estimate, on the installed plugin and Lua only (XMEM_BUILD points at
# nothing, the package build's tree is gone), then `apt-get remove`.
# XMEM_DEBS=DIR reuses the packages `make deb` left in DIR; else this builds them (minutes).
T_NAME=09-package-install
here=$(cd "$(dirname "$0")" && pwd)
export XMEM_LAB_INSTALLED=1 XMEM_BUILD=/nonexistent/xmem-build
. "$here/lab/testlib.sh"
PACKAGES=(xmem-slurm-plugin xmemd xmem)

[ "$(id -u)" = 0 ] || t_skip "needs root to install packages (CI runs as root)"
command -v dpkg-buildpackage >/dev/null && command -v lintian >/dev/null ||
    t_skip "no dpkg-buildpackage or lintian (make deps installs debhelper and lintian)"
command -v slurmctld >/dev/null && command -v munged >/dev/null ||
    t_skip "Slurm or MUNGE not installed (make deps)"
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' &&
        t_skip "$p is already installed here; this test installs and removes the packages itself"
done

TMP=$(mktemp -d /tmp/xmem-package.XXXXXX)
# Removed, never purged with anything else and never autoremoved: Slurm and Debian's LibTorch
# share libraries (libhwloc15) that an autoremove would take away. Only our own three are then
# purged, so that their conffiles do not outlive the test.
remove_packages() {
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq "${PACKAGES[@]}" >"$TMP/remove.log" 2>&1 ||
        { cat "$TMP/remove.log"; echo "FAIL: apt-get remove ${PACKAGES[*]}"; return 1; }
    dpkg --purge "${PACKAGES[@]}" >>"$TMP/remove.log" 2>&1
}
t_exit() {
    local rc=$?
    lab_down
    [ "${INSTALLED:-0}" = 1 ] && { remove_packages || rc=1; }
    rm -rf "$TMP"
    exit $rc
}

# make deb's own place (build/deb): its compiler flags name the path, so ccache hits only there.
debs=${XMEM_DEBS:-$XMEM_SRC/build/deb}
if [ -z "${XMEM_DEBS:-}" ]; then
    start=$(date +%s)
    make -C "$XMEM_SRC" --no-print-directory deb BUILD=build DEB_DIR="$debs" || fail "make deb failed"
    echo "make deb: $(($(date +%s) - start)) s"
fi
for p in "${PACKAGES[@]}"; do
    ls "$debs/${p}"_*.deb >/dev/null 2>&1 || fail "no ${p}_*.deb in $debs"
done
expect_false "the package build's tree is still there: $debs/src" [ -e "$debs/src" ]

# 1. The plugin names the Slurm release it was built against, exactly.
slurm=$(dpkg-query -W -f='${Version}' libslurm-dev | sed 's/-[^-]*$//')
depends=$(dpkg-deb -f "$debs"/xmem-slurm-plugin_*.deb Depends)
expect_true "xmem-slurm-plugin does not bind Slurm $slurm: $depends" \
    grep -qF "slurm-wlm-basic-plugins (>= $slurm), slurm-wlm-basic-plugins (<< $slurm.~)" <<<"$depends"
pass "xmem-slurm-plugin depends on Slurm $slurm and no other release"

# 2. apt installs them from the files alone (every dependency is Debian's).
state_dirs=()
for d in /run/xmem /var/lib/xmem; do [ -e "$d" ] || state_dirs+=("$d"); done
RUN_TIMEOUT=600 run env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "$debs"/xmem-slurm-plugin_*.deb "$debs"/xmemd_*.deb "$debs"/xmem_*.deb
expect_rc 0 "apt-get install ./*.deb"
INSTALLED=1
expect_true "the unit is not installed" [ -f /lib/systemd/system/xmemd.service ]
expect_false "xmemd.service is enabled on install (it must wait for the administrator)" \
    [ -e /etc/systemd/system/multi-user.target.wants/xmemd.service ]
for f in /etc/slurm/xmem.yaml /etc/xmem/gpus.yaml; do
    expect_true "$f is not a conffile" grep -q "^ $f " <<<"$(dpkg-query -W -f='${Conffiles}\n' xmemd xmem)"
done
# Every file the lab takes (lab.sh, XMEM_LAB_INSTALLED) is there, and a package's own.
for f in "$LAB_PLUGIN" "$LAB_LUA"/{job_submit,cli_filter,xmem_lib}.lua "$LAB_XMEMD_BIN" \
    "$LAB_LIBEXEC"/xmem-{estimate,profile} "$LAB_CAPTURE_LIB"; do
    expect_true "$f is not installed by xmem's packages" dpkg -S "$f"
done
# The shipped unit and configuration name the installed programs (rules moves /usr/local), and
# the configuration loads with the installed catalog.
for f in $(sed -n 's/^Exec[A-Za-z]*=[-@!+]*\([^ ]*\).*/\1/p' /lib/systemd/system/xmemd.service) \
    "$(sed -n 's/^estimator: \[\([^,]*\),.*/\1/p' /etc/slurm/xmem.yaml)"; do
    expect_true "the unit or /etc/slurm/xmem.yaml names '$f', not an installed program" [ -x "$f" ]
done
run /usr/sbin/xmemd --config /etc/slurm/xmem.yaml --render-policy "$TMP/policy.lua"
expect_rc 0 "xmemd does not load the shipped /etc/slurm/xmem.yaml"
# Hardening (DEB_BUILD_MAINT_OPTIONS = hardening=+all): position-independent, full RELRO.
for f in "$LAB_PLUGIN" "$LAB_XMEMD_BIN" /usr/bin/xmem "$LAB_LIBEXEC/xmem-estimate"; do
    expect_true "$f is not PIE with full RELRO" \
        sh -c "readelf -h '$f' | grep -q 'Type: *DYN' && readelf -l '$f' | grep -q GNU_RELRO &&
               readelf -d '$f' | grep -q BIND_NOW"
done
run /usr/bin/xmem --help
for c in estimate sim status report calibrate profile profile-fast profile-libtorch; do
    expect_true "xmem $c is not installed: $RUN_OUT" grep -qx "  $c" <<<"$RUN_OUT"
done
pass "installed: every xmem command, the conffiles, xmemd not enabled"

# 3. The lab's submit test, on the installed plugin and Lua (lab.sh: XMEM_LAB_INSTALLED).
t_require_lab
RUN_TIMEOUT=900 run bash "$here/50-slurm-submit.sh"
expect_rc 0 "50-slurm-submit.sh on the installed files: $(tail -n 20 <<<"$RUN_OUT")"
pass "the submit test passes on the installed plugin and Lua"

# 4. A submission sized by the installed xmemd, which runs the installed xmem-estimate.
lab_prefer_torch_python
lab_real_profiler_ok || fail "the installed xmem-estimate cannot profile here (no torch?)"
XMEM_LAB_PROFILER=real XMEM_LAB_TIMEOUT=600 lab_up shard
expect_true "the lab does not run the installed estimator" \
    grep -q "^estimator: \[/usr/libexec/xmem/xmem-estimate" "$LAB/etc/xmem.yaml"
cp "$XMEM_SRC/examples/train.py" "$XMEM_SRC/examples/train.sbatch" "$LAB/jobs/"
cd "$LAB/jobs" || fail "no $LAB/jobs"
submit --hold --xmem train.sbatch
tres=$(lab_field "$JOB" TresPerNode)
expect_true "the installed xmemd did not size job $JOB: TresPerNode=$tres; $RUN_OUT" \
    grep -qE '^gres:shard:[0-9]+$' <<<"$tres"
run /usr/bin/xmem status --socket "$LAB/run/xmemd.sock"
expect_rc 0 "xmem status against the installed xmemd"
pass "sbatch --xmem sized by the installed xmemd and xmem-estimate: $tres"
lab_down

# 5. Removed: nothing of the packages is left on the paths the lab used.
INSTALLED=0
remove_packages || fail "the packages did not remove"
for f in "$LAB_PLUGIN" "$LAB_XMEMD_BIN" "$LAB_LIBEXEC/xmem-estimate" /usr/bin/xmem; do
    expect_false "$f is still there after apt-get remove" [ -e "$f" ]
done
# The profile above ran as root: Python wrote __pycache__ beside the installed modules, files no
# package owns, which xmem's prerm removes.
expect_false "left behind: $(find /usr/share/xmem 2>/dev/null | head -n 5)" [ -e /usr/share/xmem ]
# The directories the tmpfiles snippet created, empty here: the purge takes them away.
for d in "${state_dirs[@]}"; do
    expect_false "$d is still there after the purge" [ -e "$d" ]
done
pass "apt-get remove takes the packages' files away"
finish
