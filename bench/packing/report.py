#!/usr/bin/env python3
"""The packing bench's figures (bench/packing.sh), one column per way of running the same
workload. Reads, for each way, a directory with
  events    the fake GPU's log (tests/integration/lab/fake-gpu.sh): "ms gpu event job
            restart MiB held_after share", event = start | end | oom
  submits   "job submit_ms", as the bench submitted them
  states    "job state restarts" from squeue after the run
and prints the table, the ratios against whole GPUs beside CARMA's figures, and with
--html FILE a self-contained page (inline SVG): GPU memory held over time and the queue's
drain, each way side by side. Standard library only (the system python3)."""

import argparse
import html
import os

CARMA = {"makespan": -0.35, "memory": +0.62}  # CARMA (2026): -35 % makespan, +62 % memory used


def read_rows(path):
    with open(path) as f:
        return [line.split() for line in f if line.strip()]


class Way:
    """One way of running the workload, and its figures."""

    def __init__(self, name, d, jobs, gpus, gpu_mib, shares):
        self.name, self.jobs = name, jobs
        self.gpus, self.gpu_mib, self.shares = gpus, gpu_mib, shares
        ev = os.path.join(d, "events")
        self.events = read_rows(ev) if os.path.exists(ev) else []
        self.submits = {j: int(ms) for j, ms in read_rows(os.path.join(d, "submits"))}
        self.states = {r[0]: (r[1], int(r[2])) for r in read_rows(os.path.join(d, "states"))}
        self.t0 = min(self.submits.values())
        self.runs = self._runs()

    def alloc_mib(self, share):
        if share.startswith("shard:"):
            return int(share[6:]) * self.gpu_mib / self.shares["shard"]
        if share.startswith("mps:"):
            return int(share[4:]) * self.gpu_mib / self.shares["mps"]
        return self.gpu_mib

    def _runs(self):
        """(gpu, job, start_ms, end_ms, MiB, share) for every run that held memory."""
        open_runs, runs = {}, []
        for ms, gpu, what, job, restart, mib, _held, share in self.events:
            key = (job, restart)
            if what == "start":
                open_runs[key] = (gpu, job, int(ms), int(mib), share)
            elif what == "end" and key in open_runs:
                gpu, job, start, mib, share = open_runs.pop(key)
                runs.append((gpu, job, start, int(ms), mib, share))
        return runs

    def figures(self):
        f = {}
        ends = [r[3] for r in self.runs]
        f["makespan"] = (max(ends) - self.t0) / 1000 if ends else float("nan")
        first = {}
        for ms, _gpu, what, job, restart, *_ in self.events:
            if what in ("start", "oom") and restart == "0" and job not in first:
                first[job] = int(ms)
        waits = sorted((first[j] - s) / 1000 for j, s in self.submits.items() if j in first)
        f["wait_mean"] = sum(waits) / len(waits) if waits else float("nan")
        f["wait_p95"] = waits[min(len(waits) - 1, int(0.95 * len(waits)))] if waits else float("nan")
        f["per_gpu"] = self.jobs_per_busy_gpu()
        used = sum(r[4] * (r[3] - r[2]) for r in self.runs)
        alloc = sum(self.alloc_mib(r[5]) * (r[3] - r[2]) for r in self.runs)
        f["used_gib_h"] = used / 1024 / 3600e3
        f["used_over_alloc"] = used / alloc if alloc else float("nan")
        span_ms = f["makespan"] * 1000
        f["memory"] = used / (self.gpus * self.gpu_mib * span_ms) if span_ms else float("nan")
        f["ooms"] = sum(1 for e in self.events if e[2] == "oom")
        f["requeues"] = sum(1 for _s, r in self.states.values() if r > 0)
        f["completed"] = sum(1 for s, _r in self.states.values() if s == "COMPLETED")
        f["lost"] = self.jobs - f["completed"]  # a job sbatch refused is lost too
        return f

    def jobs_per_busy_gpu(self):
        """Time-weighted mean of the jobs running on a GPU, over the time it runs any."""
        edges = sorted((t, gpu, d) for gpu, _j, s, e, *_ in self.runs for t, d in ((s, 1), (e, -1)))
        n, last, weighted, busy = {}, {}, 0, 0
        for t, gpu, d in edges:
            k = n.get(gpu, 0)
            if k:
                weighted += k * (t - last[gpu])
                busy += t - last[gpu]
            n[gpu], last[gpu] = k + d, t
        return weighted / busy if busy else float("nan")

    def held_series(self):
        """(seconds since the first submission, MiB held on all GPUs) at each change."""
        edges = sorted((t, d) for *_x, s, e, mib, _sh in self.runs for t, d in ((s, mib), (e, -mib)))
        held, out = 0, [(0.0, 0)]
        for t, d in edges:
            held += d
            out.append(((t - self.t0) / 1000, held))
        return out

    def queue_series(self):
        """(seconds, jobs submitted and not yet ended for good) at each change."""
        last_end = {}
        for _gpu, job, _s, e, *_ in self.runs:
            last_end[job] = max(e, last_end.get(job, 0))
        edges = sorted([(s, 1) for s in self.submits.values()] + [(e, -1) for e in last_end.values()])
        n, out = 0, [(0.0, 0)]
        for t, d in edges:
            n += d
            out.append(((t - self.t0) / 1000, n))
        return out


ROWS = [
    ("makespan (s)", "makespan", "{:.1f}"),
    ("queue wait, mean (s)", "wait_mean", "{:.1f}"),
    ("queue wait, p95 (s)", "wait_p95", "{:.1f}"),
    ("jobs per busy GPU (mean)", "per_gpu", "{:.2f}"),
    ("GPU memory used (GiB*h)", "used_gib_h", "{:.3f}"),
    ("used / allocated", "used_over_alloc", "{:.1%}"),
    ("used / all GPUs' memory", "memory", "{:.1%}"),
    ("OOM failures", "ooms", "{}"),
    ("requeues", "requeues", "{}"),
    ("jobs completed", "completed", "{}"),
    ("jobs lost", "lost", "{}"),
]


def table(ways, figs):
    w = max(len(r[0]) for r in ROWS) + 2
    lines = [" " * w + "".join(f"{x.name:>16}" for x in ways)]
    for label, key, fmt in ROWS:
        lines.append(f"{label:<{w}}" + "".join(f"{fmt.format(f[key]):>16}" for f in figs))
    return lines


def ratios(ways, figs):
    base = figs[0]
    lines = [
        f"against {ways[0].name} (CARMA 2026: makespan {CARMA['makespan']:+.0%}, memory used {CARMA['memory']:+.0%}):"
    ]
    for x, f in zip(ways[1:], figs[1:]):
        rate = f["requeues"] / x.jobs
        lines.append(
            f"  {x.name:<14} makespan {f['makespan'] / base['makespan'] - 1:+.1%} (CARMA {CARMA['makespan']:+.0%}), "
            f"memory used {f['memory'] / base['memory'] - 1:+.1%} (CARMA {CARMA['memory']:+.0%}), "
            f"OOM-and-requeue {rate:.1%} of jobs (target <= 1 %), lost {f['lost']}"
        )
    return lines


def lost(ways):
    """One line per job that did not complete: its state, and its last OOM if it had one."""
    lines = []
    for x in ways:
        ooms = {e[3]: e for e in x.events if e[2] == "oom"}
        for job, (state, restarts) in sorted(x.states.items()):
            if state == "COMPLETED":
                continue
            why = ""
            if job in ooms:
                _ms, gpu, _w, _j, run, mib, free, share = ooms[job]
                why = f": run {run} on {share} ran out of memory on {gpu}, {mib} MiB asked, {free} MiB free"
            lines.append(f"  lost in {x.name}: job {job} {state}, restarts {restarts}{why}")
        if len(x.submits) < x.jobs:
            lines.append(f"  lost in {x.name}: {x.jobs - len(x.submits)} jobs sbatch did not submit")
    return lines


def svg_steps(series, colours, xmax, ymax, ylabel, names):
    """One SVG chart of step lines, one per way."""
    W, H, L, B = 640, 220, 60, 30
    sx = (W - L - 10) / xmax if xmax else 1
    sy = (H - B - 10) / ymax if ymax else 1
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" role="img">']
    out.append(f'<line x1="{L}" y1="{H - B}" x2="{W - 10}" y2="{H - B}" stroke="#000"/>')
    out.append(f'<line x1="{L}" y1="10" x2="{L}" y2="{H - B}" stroke="#000"/>')
    out.append(
        f'<text x="{W // 2}" y="{H - 5}" text-anchor="middle" font-size="11">seconds since the first submission (0-{xmax:.0f})</text>'
    )
    out.append(f'<text x="5" y="20" font-size="11">{html.escape(ylabel)} (max {ymax:.0f})</text>')
    for s, c, name in zip(series, colours, names):
        pts, prev = [], 0
        for t, v in s:
            x = L + t * sx
            pts.append(f"{x:.1f},{H - B - prev * sy:.1f}")
            pts.append(f"{x:.1f},{H - B - v * sy:.1f}")
            prev = v
        out.append(
            f'<polyline fill="none" stroke="{c}" stroke-width="1.5" points="{" ".join(pts)}"><title>{html.escape(name)}</title></polyline>'
        )
    out.append("</svg>")
    return "\n".join(out)


def write_html(path, ways, figs, text):
    colours = ["#444444", "#1f77b4", "#2ca02c", "#d62728", "#9467bd"]
    held = [w.held_series() for w in ways]
    queue = [w.queue_series() for w in ways]
    xmax = max(t for s in held + queue for t, _v in s)
    legend = " ".join(f'<span style="color:{c}">&#9632; {html.escape(w.name)}</span>' for w, c in zip(ways, colours))
    names = [w.name for w in ways]
    gib = [[(t, v / 1024) for t, v in s] for s in held]
    with open(path, "w") as f:
        f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><title>xmem packing bench</title></head><body>\n')
        f.write("<h1>What packing buys: the same workload, each way</h1>\n")
        f.write(f"<p>{legend}</p>\n<h2>GPU memory held on all GPUs (GiB)</h2>\n")
        f.write(svg_steps(gib, colours, xmax, ways[0].gpus * ways[0].gpu_mib / 1024, "GiB held", names))
        f.write("\n<h2>The queue's drain: jobs submitted and not yet done</h2>\n")
        f.write(svg_steps(queue, colours, xmax, max(v for s in queue for _t, v in s), "jobs", names))
        f.write("\n<h2>Figures</h2>\n<pre>" + html.escape("\n".join(text)) + "</pre>\n</body></html>\n")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--jobs", type=int, required=True, help="jobs in the workload")
    p.add_argument("--gpus", type=int, required=True, help="GPUs the jobs could run on")
    p.add_argument("--gpu-mib", type=int, required=True)
    p.add_argument("--shards", type=int, required=True, help="shards per GPU")
    p.add_argument("--mps", type=int, required=True, help="mps shares per GPU")
    p.add_argument("--html", help="write the picture here")
    p.add_argument("ways", nargs="+", help="NAME=DIR, the first is the baseline (whole GPUs)")
    a = p.parse_args()
    shares = {"shard": a.shards, "mps": a.mps}
    ways = [Way(n, d, a.jobs, a.gpus, a.gpu_mib, shares) for n, d in (w.split("=", 1) for w in a.ways)]
    figs = [w.figures() for w in ways]
    text = table(ways, figs) + [""] + ratios(ways, figs) + lost(ways)
    print("\n".join(text))
    if a.html:
        write_html(a.html, ways, figs, text)


if __name__ == "__main__":
    main()
