"""The list of what the captures replace in the user's process (xmem_patches.PATCHES) is the
truth: each capture, armed on this torch, replaces every entry meant for it and nothing
else, through xmem_patches.replace or around it.

Run by integration test 85-capture-torch2-patches.sh with the venv's python; XMEM_BUILD
names the build tree whose xmem-profile and xmem-profile-fast it runs.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../../../daemon/profiler/python"))

import torch  # noqa: E402 (after the path)
import xmem_patches  # noqa: E402

PROFILERS = {"exact": "xmem-profile", "fast": "xmem-profile-fast"}


def probe(capture, tmp):
    """What the capture replaced, seen from inside the job (patch_probe.py)."""
    out = os.path.join(tmp, capture + ".json")
    profiler = os.path.join(os.environ["XMEM_BUILD"], "bin", PROFILERS[capture])
    run = subprocess.run([profiler, "--python", sys.executable, "--steps", "1",
                          "--out", os.path.join(tmp, capture + ".trace"), "--timeout", "300",
                          "--", "python", os.path.join(HERE, "patch_probe.py"), out],
                         capture_output=True, text=True)
    if run.returncode != 0 or not os.path.exists(out):
        raise AssertionError(f"{PROFILERS[capture]} exited {run.returncode}: {run.stderr[-2000:]}")
    with open(out) as f:
        return json.load(f)


def expected(capture):
    """The entries meant for CAPTURE on this torch (judged here, where torch is unpatched)."""
    return {p.target for p in xmem_patches.PATCHES
            if capture in p.captures and p.when(torch, capture)}


class PatchList(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.seen = {capture: probe(capture, cls.tmp.name) for capture in PROFILERS}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, capture):
        seen = self.seen[capture]
        self.assertEqual(seen["undeclared"], [],
                         f"{capture}: replaced outside xmem_patches.PATCHES (declare them there "
                         "and replace through xmem_patches.replace)")
        entries = {xmem_patches.declared(t).target for t in seen["replaced"]}
        self.assertEqual(sorted(expected(capture) - entries), [],
                         f"{capture}: PATCHES names these, but the capture did not replace them")
        self.assertEqual(sorted(entries - expected(capture)), [],
                         f"{capture}: replaced, but PATCHES says not by this capture on this torch")

    def test_exact_replaces_the_list(self):
        self.check("exact")

    def test_fast_replaces_the_list(self):
        self.check("fast")


class Replace(unittest.TestCase):
    def test_refuses_an_undeclared_target(self):
        with self.assertRaises(KeyError):
            xmem_patches.replace("torch.xmem_not_declared", 1)
        self.assertFalse(hasattr(torch, "xmem_not_declared"))

    def test_one_entry_per_target(self):
        targets = [p.target for p in xmem_patches.PATCHES]
        self.assertEqual(len(targets), len(set(targets)))
        for p in xmem_patches.PATCHES:
            self.assertTrue(set(p.captures) <= {"exact", "fast"}, p.target)
            self.assertTrue(p.why, p.target)


if __name__ == "__main__":
    unittest.main()
