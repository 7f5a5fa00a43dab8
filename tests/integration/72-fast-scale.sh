#!/usr/bin/env bash
# A model that would not fit the login node's RAM: the 350M decoder with bf16 weights and
# fp32 AdamW states through xmem-profile-fast. Parameters and states are device storages of
# setup, the capture's host RSS stays small, the estimate runs.
source "$(dirname "$0")/70-fast-common.bash"
log_watch "$TMP/d.out" "$TMP/d.err"

start=$(date +%s)
/usr/bin/time -f "%M" -o "$TMP/rss" "$FAST" --out "$TMP/d.trace" --steps 2 --timeout 300 -- \
    python3 "$XMEM_SRC/tests/workloads/scale/decoder.py" --size 350m --dtype bf16 --checkpoint \
    >"$TMP/d.out" 2>"$TMP/d.err" || fail "capture"
millions=$(sed -n 's/^decoder 350m: \([0-9]*\)M parameters.*/\1/p' "$TMP/d.out")
expect_true "no parameter count in the output" [ -n "$millions" ]
# bf16 weights (2 B) + fp32 exp_avg and exp_avg_sq (8 B) per parameter, allocated in setup.
setup_bytes=$(( millions * 1000000 * 10 * 99 / 100 ))
run_ok $CHECK "$TMP/d.trace" --steps 2 --phases-in-order --min-setup-gpu-bytes "$setup_bytes" >/dev/null
rss_kib=$(cat "$TMP/rss")
expect_true "capture RSS $rss_kib KiB, expected under 1.5 GiB" [ "$rss_kib" -lt $((1536 * 1024)) ]
echo "ok: ${millions}M-parameter decoder captured with $((rss_kib / 1024)) MiB RSS"
peak=$(estimate_field "$TMP/d.trace" peak_bytes)
fits=$(estimate_field "$TMP/d.trace" fits)
expect_true "estimate peak $peak B, expected above $setup_bytes B" [ "$peak" -gt "$setup_bytes" ]
expect_eq "$fits" True "the estimate fits an H100-80GB"
echo "ok: estimate $((peak >> 20)) MiB on H100-80GB in $(( $(date +%s) - start )) s"
