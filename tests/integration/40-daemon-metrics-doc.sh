#!/usr/bin/env bash
# Issue 35: docs/metrics.md is the reference of xmemd's Prometheus metrics. A running xmemd is
# scraped and every family it exports must have the doc's row, with its type and labels, and
# every row an exported family (40-daemon.d/metrics_doc.py). Then the check itself is shown
# to fail: on the doc less one row, and on a scrape with a family the doc lacks.
. "$(dirname "$0")/40-daemon.d/lib.sh"
D=$(dirname "$0")/40-daemon.d
start_munged
write_profiler 0
PORT=$((20000 + RANDOM % 30000))
write_config "metrics_listen: 127.0.0.1:$PORT"
start_xmemd

log "the doc against a scrape"
expect_true "metrics endpoint" python3 - "$PORT" >"$T/scrape" <<'PY'
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode(), end="")
PY
run python3 "$D/metrics_doc.py" "$SRC/docs/metrics.md" "$T/scrape"
expect_rc 0 "docs/metrics.md agrees with the scrape: $RUN_OUT"

log "the check fails on a row removed, a metric added or a type changed"
grep -v '^| `xmemd_cache_entries`' "$SRC/docs/metrics.md" >"$T/less.md"
run python3 "$D/metrics_doc.py" "$T/less.md" "$T/scrape"
expect_rc 1 "a doc without xmemd_cache_entries"
expect_out "exports xmemd_cache_entries \(gauge\), which .* does not document" "the missing row named"
{ cat "$T/scrape"; printf '# TYPE xmemd_new_total counter\nxmemd_new_total{gpu="x"} 1\n'; } >"$T/more"
run python3 "$D/metrics_doc.py" "$SRC/docs/metrics.md" "$T/more"
expect_rc 1 "a scrape with xmemd_new_total"
expect_out "exports xmemd_new_total \(counter\)" "the new metric named"
sed 's/^| `xmemd_queue_depth` | gauge |/| `xmemd_queue_depth` | counter |/' "$SRC/docs/metrics.md" >"$T/type.md"
run python3 "$D/metrics_doc.py" "$T/type.md" "$T/scrape"
expect_rc 1 "a doc that calls xmemd_queue_depth a counter"
expect_out "xmemd_queue_depth: xmemd exports a gauge" "the wrong type named"

stop_xmemd
finish
