#!/usr/bin/env bash
# The estimate's timeline page (issue 30): a model with one layer whose activations dwarf the
# rest (tests/workloads/huge_layer.py), estimated in fast mode with --timeline. Headless Chromium renders the page with no
# console message at all; the page's own script, which draws live memory stacked by category
# and by module with the allocated peak marked, writes the top of each stack at its peak mark
# into the DOM, and both equal the JSON's live bytes at the peak (the breakdown, and
# peak_by_module with its rest). The storages live at the peak name their module, op and size;
# the page is self-contained and small, and says "step", not "iteration".
source "$(dirname "$0")/80-torch2-common.bash"
B=${XMEM_BUILD:?}/bin
chromium=$(command -v chromium || command -v chromium-browser || command -v google-chrome) ||
    { echo "no headless Chromium on PATH"; exit 77; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

cp "${XMEM_SRC:?}/tests/workloads/huge_layer.py" "$TMP/train.py"
cd "$TMP" || exit 1
PATH="$venv/bin:$PATH" "$B/xmem-estimate" --mode fast --gpu A100-40GB --json \
    --timeline "$TMP/page.html" --keep-trace "$TMP/t.xtrace" -- python train.py \
    >"$TMP/e.json" 2>"$TMP/e.err" || { cat "$TMP/e.err"; fail "the estimate failed"; }
[ -s "$TMP/page.html" ] || fail "no page written"

# The page must stand alone: no resource fetched, nothing but the SVG namespace as a URL.
expect_eq "$(grep -Eo '(src|href)=' "$TMP/page.html" | wc -l)" 0 "the page loads nothing"
expect_eq "$(grep -Eo 'https?://[^"]*' "$TMP/page.html" | sort -u | tr '\n' ' ')" \
    "http://www.w3.org/2000/svg " "the page names no URL but the SVG namespace"
size=$(stat -c %s "$TMP/page.html")
[ "$size" -lt 400000 ] && pass "the page is small ($size B)" || miss "the page is $size B"
grep -q 'step 1' "$TMP/page.html" && pass "the page marks steps" || miss "no step marker"
grep -qi 'iteration' "$TMP/page.html" && miss "the page says iteration" || pass "no 'iteration'"

run timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/profile" \
    --enable-logging=stderr --v=0 --dump-dom "file://$TMP/page.html"
expect_rc 0 "Chromium rendered the page"
printf '%s\n' "$RUN_OUT" | grep -v ':CONSOLE:' >"$TMP/dom.html"
expect_no_out ':CONSOLE:' "the page logs nothing to the console (no error, no warning)"

/usr/bin/python3 - "$TMP/e.json" "$TMP/dom.html" <<'PY' || fail "the rendered page disagrees with the JSON"
import html.parser
import json
import sys

j = json.load(open(sys.argv[1]))


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.text, self.at, self.marks, self.blocks, self.layers = {}, None, 0, [], 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.at = a["id"]
            self.text[self.at] = ""
        if "peakmark" in a.get("class", ""):
            self.marks += 1
        if tag == "polygon" and "layer" in a.get("class", ""):
            self.layers += 1
        if tag == "rect" and "data-module" in a:
            self.blocks.append((a["data-module"], a["data-op"], int(a["data-bytes"])))

    def handle_endtag(self, tag):
        self.at = None

    def handle_data(self, data):
        if self.at:
            self.text[self.at] += data


d = Dom()
d.feed(open(sys.argv[2]).read())
bad = []
if d.text.get("page-errors", "").strip():
    bad.append(f"the page's script failed: {d.text['page-errors']}")
live = sum(j["breakdown"][k] for k in
           ("weights", "gradients", "optimizer_state", "activations", "inputs", "workspaces", "other"))
by_module = sum(s["bytes"] for s in j["peak_by_module"]["top"]) + j["peak_by_module"]["rest_bytes"]
for chart, want in (("category", live), ("module", by_module)):
    got = d.text.get(f"stacked-peak-{chart}", "").strip()
    if got != str(want):
        bad.append(f"the {chart} stack reaches {got or 'nothing'} at its peak mark, the JSON {want} B")
if d.marks != 2:
    bad.append(f"{d.marks} peak marks drawn, not one per chart")
if d.layers < 8:
    bad.append(f"only {d.layers} stacked layers drawn")
huge = [b for b in d.blocks if b[0] == "huge"]
if not huge or not all(b[1] and b[2] % (256 * 16384 * 4) == 0 for b in huge):
    bad.append(f"the storages at the peak do not name huge's 16 MiB activations: {d.blocks[:5]}")
for line in bad:
    print("FAIL:", line)
if bad:
    sys.exit(1)
print(f"ok: both stacks reach {live} B at the peak mark, as the JSON; {len(d.blocks)} storages named")
PY
pass "the rendered stacks agree with the JSON at the peak"

run "$B/xmem-estimate" --gpu A100-40GB --trace-in "$TMP/t.xtrace"
expect_rc 0 "the text estimate"
expect_out 'captured with torch [^,]*, 3 steps' "the text report counts steps"
expect_out 'reserved peak .* \(step 1: ' "the text report names step 1"
pass "the text report says step"
finish
