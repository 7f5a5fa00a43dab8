"""bench/packing/report.py on two hand-made runs whose figures are worked out below by hand,
and its HTML page: self-contained, one step line per way in each chart, and (with chromium)
the same after a headless browser has rendered it."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

SRC = os.environ.get("XMEM_SRC", os.path.join(os.path.dirname(__file__), "..", "..", ".."))
spec = importlib.util.spec_from_file_location("report", os.path.join(SRC, "bench", "packing", "report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)

SHARES = {"shard": 10, "mps": 100}
# Two GPUs of 1000 MiB. Whole: two jobs submitted at 1000 ms, each alone on a GPU.
WHOLE = {
    "submits": "1 1000\n2 1000\n",
    "events": "2000 n.nvidia0 start 1 0 400 400 gpu\n2000 n.nvidia1 start 2 0 300 300 gpu\n"
    "4000 n.nvidia1 end 2 0 300 0 gpu\n6000 n.nvidia0 end 1 0 400 0 gpu\n",
    "states": "1 COMPLETED 0\n2 COMPLETED 0\n",
}
# Packed: two share a GPU; the third runs out of memory beside them and reruns whole.
PACKED = {
    "submits": "3 1000\n4 1000\n5 1000\n",
    "events": "1500 n.nvidia0 start 3 0 400 400 shard:5\n1500 n.nvidia0 start 4 0 300 700 shard:4\n"
    "1600 n.nvidia0 oom 5 0 500 300 shard:3\n3500 n.nvidia0 end 3 0 400 300 shard:5\n"
    "3500 n.nvidia0 end 4 0 300 0 shard:4\n9000 n.nvidia1 start 5 1 500 500 shard:10\n"
    "10000 n.nvidia1 end 5 1 500 0 shard:10\n",
    "states": "3 COMPLETED 0\n4 COMPLETED 0\n5 COMPLETED 1\n",
}


class PackingReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.whole = self.way("whole", WHOLE, 2)
        self.packed = self.way("packed", PACKED, 3)

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def way(self, name, files, jobs):
        d = os.path.join(self.tmp, name)
        os.mkdir(d)
        for f, text in files.items():
            with open(os.path.join(d, f), "w") as out:
                out.write(text)
        return report.Way(name, d, jobs, 2, 1000, SHARES)

    def test_whole(self):
        f = self.whole.figures()
        self.assertEqual(f["makespan"], 5.0)  # 1000 -> 6000 ms
        self.assertEqual((f["wait_mean"], f["wait_p95"]), (1.0, 1.0))
        self.assertEqual(f["per_gpu"], 1.0)
        # 400 x 4000 + 300 x 2000 MiB.ms used of 1000 x (4000 + 2000) allocated
        self.assertAlmostEqual(f["used_over_alloc"], 2.2e6 / 6e6)
        self.assertAlmostEqual(f["memory"], 2.2e6 / (2 * 1000 * 5000))
        self.assertEqual((f["ooms"], f["requeues"], f["completed"], f["lost"]), (0, 0, 2, 0))

    def test_packed(self):
        f = self.packed.figures()
        self.assertEqual(f["makespan"], 9.0)  # 1000 -> 10000 ms
        # waits 0.5, 0.5 and 0.6 s: the OOM at 1600 ms was the third job's first allocation
        self.assertAlmostEqual(f["wait_mean"], 1.6 / 3)
        self.assertAlmostEqual(f["wait_p95"], 0.6)
        # GPU 0: two jobs for 2000 ms; GPU 1: one for 1000 ms
        self.assertAlmostEqual(f["per_gpu"], 5000 / 3000)
        # used 400 x 2000 + 300 x 2000 + 500 x 1000; allocated 500, 400 and 1000 MiB for the same
        self.assertAlmostEqual(f["used_over_alloc"], 1.9e6 / 2.8e6)
        self.assertAlmostEqual(f["memory"], 1.9e6 / (2 * 1000 * 9000))
        self.assertEqual((f["ooms"], f["requeues"], f["completed"], f["lost"]), (1, 1, 3, 0))

    def test_lost_and_ratios(self):
        ways = [self.whole, self.packed]
        figs = [w.figures() for w in ways]
        self.assertIn("makespan +80.0%", report.ratios(ways, figs)[1])
        self.assertIn("OOM-and-requeue 33.3% of jobs", report.ratios(ways, figs)[1])
        self.assertEqual(report.lost(ways), [])
        self.packed.states["4"] = ("FAILED", 0)
        self.assertEqual(report.lost(ways), ["  lost in packed: job 4 FAILED, restarts 0"])

    def test_html(self):
        ways = [self.whole, self.packed]
        page = os.path.join(self.tmp, "packing.html")
        report.write_html(page, ways, [w.figures() for w in ways], ["figures"])
        with open(page) as f:
            text = f.read()
        self.assertNotRegex(text, r"https?://(?!www\.w3\.org/2000/svg)")  # self-contained
        self.assertEqual(text.count("<svg"), 2)
        self.assertEqual(text.count("<polyline"), 4)  # one line per way in each chart
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            self.skipTest("no chromium: the page is checked as text only")
        profile = os.path.join(self.tmp, "profile")
        dom = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--dump-dom",
                f"file://{page}",
            ],
            capture_output=True,
            text=True,
            timeout=90,
            check=True,
        ).stdout
        self.assertEqual(len(re.findall(r"<polyline", dom)), 4)
        self.assertIn("What packing buys", dom)


if __name__ == "__main__":
    sys.exit(unittest.main())
