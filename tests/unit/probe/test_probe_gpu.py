"""`xmem probe-gpu` against the fake NVML (tests/unit/plugin/fake_nvml.c) and the fake CUDA
torch (tests/fakes/torch-cuda/, whose README gives the amounts it adds): the arithmetic, the
entry's schema and sources, that xmemd's catalog loader accepts the entry, and the one-line
refusals. Run by ctest (probe.gpu_fake) with XMEM_BIN, XMEM_FAKE_NVML and XMEM_SRC set."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

BIN = os.environ["XMEM_BIN"]
SRC = os.environ["XMEM_SRC"]
FAKE_NVML = os.environ["XMEM_FAKE_NVML"]
FAKE_TORCH = os.path.join(SRC, "tests", "fakes", "torch-cuda")
# What the fake torch adds (its README): context 412 + cuBLAS 64 + cuBLASLt 8 MiB outside the
# allocator; workspaces 8320 and 1024 KiB; cuDNN 226 MiB; an A100's 108 multiprocessors.
EXPECTED = {"context_mib": "484", "cublas_workspace_kib": "8320",
            "cublaslt_workspace_kib": "1024", "cudnn_context_mib": "226",
            "total_memory_mib": "16384", "compute_capability": '"8.0"', "multiprocessors": "108"}


class ProbeGpu(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="xmem-probe-")
        self.used = os.path.join(self.dir, "used-mib")
        with open(self.used, "w") as f:
            f.write("3\n")  # the driver's own, before the probe
        self.env = dict(os.environ, XMEM_FAKE_NVML_USED_FILE=self.used,
                        XMEM_FAKE_NVML_DEVICES="2",
                        # A fake machine of its own: ctest -j runs the sampler's marked
                        # processes beside this test.
                        XMEM_FAKE_NVML_MACHINE=self.dir,
                        PYTHONPATH=FAKE_TORCH)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def probe(self, *args, env=None):
        argv = [os.path.join(BIN, "xmem"), "probe-gpu", "--nvml", FAKE_NVML, "--device", "1",
                "--python", sys.executable, *args]
        return subprocess.run(argv, env=env or self.env, capture_output=True, text=True,
                              timeout=30)

    def assert_refused(self, run, words):
        self.assertEqual(run.returncode, 1, run.stderr)
        self.assertEqual(run.stdout, "")
        lines = run.stderr.splitlines()
        self.assertEqual(len(lines), 1, run.stderr)
        self.assertTrue(lines[0].startswith("xmem: probe-gpu: "), lines[0])
        self.assertIn(words, lines[0])

    def test_entry_has_the_measured_terms(self):
        run = self.probe("--name", "Fake-16GB")
        self.assertEqual(run.returncode, 0, run.stderr)
        values = dict(re.findall(r"^    (\w+): (.+)$", run.stdout, re.M))
        for key, value in EXPECTED.items():
            self.assertEqual(values.get(key), value, key)
        self.assertIn('  - name: "Fake-16GB"', run.stdout)
        self.assertIn('aliases: ["NVIDIA Fake GPU 16GB"]', run.stdout)
        sources = dict(re.findall(r"^      (\w+): (.+)$", run.stdout, re.M))
        self.assertEqual(set(sources), set(EXPECTED))
        for key, text in sources.items():
            self.assertRegex(text, r"^\"measured by xmem probe-gpu, \d{4}-\d\d-\d\d, driver "
                             r"999\.99\.99-fake, CUDA 12\.4, torch 2\.4\.0\+fake: ", key)
            self.assertNotIn("uncalibrated", text)
        self.assertEqual(run.stderr, "")

    def test_a_shared_lt_workspace_is_written_as_1(self):
        run = self.probe(env=dict(self.env, XMEM_FAKE_TORCH_LT_SHARED="1"))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertIn("    cublaslt_workspace_kib: 1\n", run.stdout)
        self.assertRegex(run.stdout, r"cublaslt_workspace_kib: \".*; measured 0, written as 1, "
                                     r"the least the catalog takes\"")
        self.assertIn("    cublas_workspace_kib: 8320\n", run.stdout)

    def test_catalog_loader_takes_the_entry(self):
        out = os.path.join(self.dir, "entry.yaml")
        run = self.probe("--output", out)  # the default name: from NVML's
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout, "")
        catalog = os.path.join(self.dir, "gpus.yaml")
        with open(out) as f, open(catalog, "w") as c:
            c.write("version: 1\ngpus:\n" + f.read())
        config = os.path.join(self.dir, "xmem.yaml")
        with open(config, "w") as f:
            f.write(f"socket: {self.dir}/xmemd.sock\nlockfile: {self.dir}/xmemd.lock\n"
                    f"database: {self.dir}/ledger.sqlite\n"
                    f"estimator: [{BIN}/xmem-estimate, --json]\ncatalog: {catalog}\n"
                    "policy: {default: {gpu: Fake-GPU-16GB}}\n")
        check = subprocess.run([os.path.join(BIN, "xmemd"), "--config", config,
                                "--check-config"], capture_output=True, text=True, timeout=30)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertIn(": ok", check.stdout + check.stderr)

    def test_no_nvml(self):
        self.assert_refused(self.probe("--nvml", os.path.join(self.dir, "libnvidia-ml.so.1")),
                            "cannot load NVML")

    def test_no_gpu(self):
        self.assert_refused(self.probe(env=dict(self.env, XMEM_FAKE_NVML_DEVICES="0")),
                            "no NVIDIA GPU")

    def test_torch_without_cuda(self):
        self.assert_refused(self.probe(env=dict(self.env, XMEM_FAKE_TORCH_CUDA="0")),
                            "sees no CUDA GPU")

    def test_cpu_build_of_torch(self):
        # A real torch, built without CUDA (Debian's python3-torch), where the machine has one.
        cpu = "/usr/bin/python3"
        if subprocess.run([cpu, "-c", "import torch"], capture_output=True).returncode != 0:
            self.skipTest(f"{cpu} has no torch")
        env = {k: v for k, v in self.env.items() if k != "PYTHONPATH"}
        self.assert_refused(self.probe("--python", cpu, env=env), "a CPU build")

    def test_python_without_torch(self):
        self.assert_refused(self.probe(env=dict(self.env, PYTHONPATH=self.dir)),
                            "cannot import torch")

    def test_busy_gpu(self):
        # A process the fake NVML counts on GPU 1 (its environment marks it).
        busy = subprocess.Popen(["sleep", "30"], env=dict(
            os.environ, XMEM_FAKE_NVML_MIB="100", XMEM_FAKE_NVML_GPU="1",
            XMEM_FAKE_NVML_MACHINE=self.dir))
        try:
            self.assert_refused(self.probe(), f"pids {busy.pid}")
        finally:
            busy.kill()
            busy.wait()

    def test_help_lists_every_option(self):
        run = subprocess.run([os.path.join(BIN, "xmem"), "probe-gpu", "--help"],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(run.returncode, 0, run.stderr)
        for option in ("--python", "--device", "--name", "--alias", "--output", "--nvml"):
            self.assertIn(option, run.stdout)


if __name__ == "__main__":
    unittest.main()
