#!/usr/bin/env python3
"""Aligns a capture's device allocations with a real GPU's, step by step.

    align.py [--sim XMEM_SIM] [--torch VERSION] [--json] TRACE SNAPSHOT

TRACE is an xmem trace, best the one `xmem estimate --analysed-trace` writes (what the
simulator replays, GPU-only allocations inserted); SNAPSHOT is PyTorch's memory snapshot of
the same program on a GPU, as JSON (`.json` or `.json.gz`; `device_traces[0]`).

Both become sequences of (alloc|free, bytes): the trace's `A ... g` records and the frees
of those storages, the snapshot's `alloc` and `free_completed` entries. They are aligned
with difflib (longest matching runs first) and every place where they differ is printed
with each side's entries and the live bytes on each side after it, so the effect of a
difference on the peak shows where it happens. With --sim, both are also replayed through
`xmem sim` (the snapshot as recorded, the trace as analysed) and the reserved and requested
peaks are compared.

Exit status: 0 when the sequences and (with --sim) the peaks are equal, 1 when they differ,
2 on bad usage. --json prints one object instead: `matched` (events aligned), `differences`
(a list of {"gpu": [...], "capture": [...]} with entries "alloc BYTES" / "free BYTES"),
`peaks` ({"reserved": [gpu, capture], "requested": [gpu, capture]}, with --sim).
"""
import argparse
import difflib
import gzip
import json
import subprocess
import sys
import tempfile

TRACE_DIR = None  # set in main: where the trace module lives (daemon/profiler/python)


def snapshot_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        snap = json.load(f)
    events = []
    for e in snap["device_traces"][0]:
        if e["action"] == "alloc":
            events.append(("alloc", e["size"], ""))
        elif e["action"] == "free_completed":
            events.append(("free", e["size"], ""))
    return events


def trace_events(path):
    """Device allocations and their frees, in order, with each one's context text."""
    strings, live, events = {}, {}, []
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split(" ")
            kind = fields[0]
            if kind == "S":
                strings[fields[1]] = line.rstrip("\n").split(" ", 2)[2]
            elif kind == "A" and fields[3] == "g":
                ctx = strings.get(fields[5], "")
                live[fields[1]] = (int(fields[2]), ctx)
                events.append(("alloc", int(fields[2]), ctx))
            elif kind == "F" and fields[1] in live:
                size, ctx = live.pop(fields[1])
                events.append(("free", size, ctx))
    return events


def live_after(events):
    """Live requested bytes after each event, and the peak."""
    out, cur = [], 0
    for kind, size, _ in events:
        cur += size if kind == "alloc" else -size
        out.append(cur)
    return out, max(out, default=0)


def sim_peaks(sim, torch, path, snapshot):
    with tempfile.NamedTemporaryFile("w", suffix=".json") as tmp:
        if snapshot and path.endswith(".gz"):
            with gzip.open(path, "rt") as f:
                tmp.write(f.read())
            tmp.flush()
            path = tmp.name
        cmd = [sim, "--json"] + (["--torch", torch] if torch else []) + [path]
        out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    return out["reserved_bytes.all.peak"], out["requested_bytes.all.peak"]


def mib(n):
    return "%.2f MiB" % (n / 1048576)


def describe(events, lo, hi, live, side):
    lines = []
    for i in range(lo, hi):
        kind, size, ctx = events[i]
        lines.append("    %-7s #%-4d %-5s %12d B  live %s  %s" % (side, i, kind, size, mib(live[i]), ctx))
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sim", help="xmem-sim to replay both with (compares the peaks)")
    ap.add_argument("--torch", help="the allocator release to simulate (xmem sim --torch)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("trace")
    ap.add_argument("snapshot")
    a = ap.parse_args()

    gpu, cap = snapshot_events(a.snapshot), trace_events(a.trace)
    gpu_live, gpu_peak = live_after(gpu)
    cap_live, cap_peak = live_after(cap)
    key = lambda evs: ["%s %d" % (k, s) for k, s, _ in evs]  # noqa: E731
    sm = difflib.SequenceMatcher(None, key(gpu), key(cap), autojunk=False)
    matched, differences, text = 0, [], []
    opcodes = sm.get_opcodes()
    # A snapshot is taken while the program runs: the frees at its end have no GPU entries.
    if opcodes and opcodes[-1][0] == "insert" and all(k == "free" for k, _, _ in cap[opcodes[-1][3]:]):
        text.append("(the capture's last %d events, frees at the program's end, come after the "
                    "snapshot was taken: not compared)" % (len(cap) - opcodes[-1][3]))
        opcodes = opcodes[:-1]
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            matched += i2 - i1
            continue
        differences.append({"gpu": key(gpu[i1:i2]), "capture": key(cap[j1:j2])})
        g_after = gpu_live[i2 - 1] if i2 > 0 else 0
        c_after = cap_live[j2 - 1] if j2 > 0 else 0
        text.append("difference %d (%s): GPU entries %d-%d, capture events %d-%d; live after it: "
                    "GPU %s, capture %s (%+d B)" % (len(differences), tag, i1, i2 - 1, j1, j2 - 1,
                                                    mib(g_after), mib(c_after), c_after - g_after))
        text += describe(gpu, i1, i2, gpu_live, "GPU")
        text += describe(cap, j1, j2, cap_live, "capture")
    peaks = {"requested_live": [gpu_peak, cap_peak]}
    if a.sim:
        g = sim_peaks(a.sim, a.torch, a.snapshot, True)
        c = sim_peaks(a.sim, a.torch, a.trace, False)
        peaks["reserved"] = [g[0], c[0]]
        peaks["requested"] = [g[1], c[1]]
    same = not differences and all(p[0] == p[1] for p in peaks.values())
    if a.json:
        print(json.dumps({"matched": matched, "gpu_events": len(gpu), "capture_events": len(cap),
                          "differences": differences, "peaks": peaks}))
    else:
        print("%d of %d GPU events and %d capture events aligned; %d differences"
              % (matched, len(gpu), len(cap), len(differences)))
        print("\n".join(text))
        for name, (g, c) in peaks.items():
            print("%-15s GPU %14d B  capture %14d B  %+.2f %%"
                  % (name + " peak", g, c, 100.0 * (c - g) / g if g else 0.0))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
