#!/usr/bin/env python3
"""Writes an xmem compact trace (docs/trace-format.md) that mimics what the profiler records
for a small MLP trained with Adam: parameters moved to the GPU during set-up, a host batch
copied to the device, forward activations kept for backward, gradients, Adam's two state
tensors created on the first step, and zero_grad(set_to_none=True) freeing the gradients.

Why a script and not a capture: the bundled example must exist on a machine without the
profiler; sizes follow the storage sizes PyTorch would request (numel * 4 bytes, fp32).

    make-training-trace.py OUT.xtrace [--layers N] [--hidden H] [--batch B] [--iterations I]
"""
import argparse
import os
import sys

# The format's one Python definition, beside the capture package in the source tree.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "daemon", "profiler", "python"))
from xmem_trace import VERSION_LINE, record  # noqa: E402


class Trace:
    def __init__(self, out):
        self.out = out
        self.next_id = 1
        self.live = {}
        self.allocs = 0
        self.frees = 0
        self.strings = {}
        self.lines = [VERSION_LINE + "\n"]

    def meta(self, key, value):
        self.lines.append(record("M", key, value))

    def ctx(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings) + 1
            self.lines.append(record("S", self.strings[text], text))
        return self.strings[text]

    def alloc(self, nbytes, where, dev="g"):
        sid = self.next_id
        self.next_id += 1
        self.lines.append(record("A", sid, nbytes, dev, 0, self.ctx(where)))
        self.live[sid] = nbytes
        self.allocs += 1
        return sid

    def free(self, sid):
        self.lines.append(record("F", sid))
        del self.live[sid]
        self.frees += 1

    def record(self, letter, *fields):
        self.lines.append(record(letter, *fields))
        if len(self.lines) >= 65536:
            self.flush()

    def flush(self):
        self.out.write("".join(self.lines))
        self.lines = []

    def finish(self):
        self.lines.append(record("Z", self.allocs, self.frees, sum(self.live.values())))
        self.flush()


def train(t, layers, hidden, batch, iterations, classes=10):
    f32 = 4
    t.meta("torch", "2.1.0")
    t.meta("capture", "exact")
    t.meta("steps", str(iterations))
    t.meta("zero_grad_set_to_none", "1")
    t.meta("amp", "off")
    t.record("P", "setup")
    dims = [(hidden, hidden)] * layers + [(hidden, classes)]
    params = []
    for i, (fan_in, fan_out) in enumerate(dims):
        params.append(t.alloc(fan_in * fan_out * f32, f"layers.{i}|aten::empty"))
        params.append(t.alloc(fan_out * f32, f"layers.{i}|aten::empty"))
    sizes = {p: t.live[p] for p in params}
    adam_state = []
    for step in range(1, iterations + 1):
        t.record("I", step)
        t.record("P", "data")
        host = t.alloc(batch * hidden * f32, "loader|aten::empty", dev="h")
        x = t.alloc(batch * hidden * f32, "input|aten::_to_copy")
        labels = t.alloc(batch * 8, "input|aten::_to_copy")
        t.free(host)
        t.record("P", "forward")
        saved = []
        for i, (_, fan_out) in enumerate(dims):
            out = t.alloc(batch * fan_out * f32, f"layers.{i}|aten::addmm")
            if i < layers:
                act = t.alloc(batch * fan_out * f32, f"act.{i}|aten::relu")
                saved += [out, act]
            else:
                saved.append(out)
        loss_tmp = t.alloc(batch * classes * f32, "loss|aten::_log_softmax")
        loss = t.alloc(f32, "loss|aten::nll_loss_forward")
        t.record("P", "backward")
        grad_out = t.alloc(batch * classes * f32, "loss|aten::_log_softmax_backward_data")
        t.free(loss_tmp)
        grads = []
        for i in reversed(range(len(dims))):
            fan_in, fan_out = dims[i]
            gw = t.alloc(fan_in * fan_out * f32, f"layers.{i}|aten::mm")
            gb = t.alloc(fan_out * f32, f"layers.{i}|aten::sum")
            grads += [gw, gb]
            if i > 0:
                g_in = t.alloc(batch * fan_in * f32, f"layers.{i}|aten::mm")
                t.free(grad_out)
                relu_g = t.alloc(batch * fan_in * f32, f"act.{i - 1}|aten::threshold_backward")
                t.free(g_in)
                grad_out = relu_g
        t.free(grad_out)
        for s in saved:
            t.free(s)
        t.free(loss)
        t.free(x)
        t.free(labels)
        t.record("P", "optimizer")
        if not adam_state:
            for p in params:
                adam_state.append(t.alloc(sizes[p], "optimizer|aten::zeros_like"))
                adam_state.append(t.alloc(sizes[p], "optimizer|aten::zeros_like"))
        for p in params:  # foreach=False Adam: one denominator temporary per parameter
            denom = t.alloc(sizes[p], "optimizer|aten::sqrt")
            t.free(denom)
        t.record("P", "zero_grad")
        for g in grads:
            t.free(g)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--iterations", type=int, default=3)
    a = ap.parse_args()
    with open(a.out, "w") as out:
        t = Trace(out)
        train(t, a.layers, a.hidden, a.batch, a.iterations)
        t.finish()


if __name__ == "__main__":
    sys.exit(main())
