#!/usr/bin/env python3
"""Validates an xmem trace (docs/trace-format.md) and prints a JSON summary.

  check_trace.py TRACE [--steps N] [--phases-in-order] [--min-setup-gpu-bytes N]

Exit 0 when valid and every requested check holds; otherwise prints `check_trace: ...`
lines naming each failure and exits 1. The summary (stdout) has per-iteration counts and
bytes so tests can compare captures (e.g. AMP against fp32).
"""
import argparse
import json
import os
import re
import sys

# The format's one Python definition (record letters, fields, reader) is installed beside
# xmem_capture; in the source tree that is daemon/profiler/python.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "daemon", "profiler", "python"))
import xmem_trace  # noqa: E402

PHASES = xmem_trace.PHASES
ORDER = ("data", "forward", "backward", "optimizer")
TraceError = xmem_trace.FormatError


def parse(path):
    """Reads the whole trace, enforcing the format; returns the summary dict."""
    live, strings, meta = {}, {}, {}
    allocs = frees = live_bytes = 0
    iteration, phase = 0, None
    its = {}
    seen_a = False
    z = None
    for n, kind, parts in xmem_trace.records(path):
        if z is not None:
            raise TraceError(f"{path}:{n}: record after the Z line")
        parts = [kind] + parts
        it = its.setdefault(iteration, new_iteration())
        if kind == "M":
            if seen_a:
                raise TraceError(f"{path}:{n}: M after the first A")
            if len(parts) < 2 or not re.fullmatch(r"[a-z0-9_]+", parts[1]):
                raise TraceError(f"{path}:{n}: bad metadata key")
            meta[parts[1]] = " ".join(parts[2:])
        elif kind == "S":
            sid = number(path, n, parts[1])
            if sid < 1 or sid in strings:
                raise TraceError(f"{path}:{n}: string id {sid} is 0 or defined twice")
            strings[sid] = " ".join(parts[2:])
        elif kind == "K":
            if len(parts) < 3 or not parts[1] or "=" in parts[2]:
                raise TraceError(f"{path}:{n}: K needs a module path and a kind")
        elif kind == "I":
            new = number(path, n, parts[1])
            if new != iteration + 1:
                raise TraceError(f"{path}:{n}: iteration {new} follows {iteration}")
            iteration, phase = new, None
        elif kind == "P":
            if parts[1] not in PHASES:
                raise TraceError(f"{path}:{n}: unknown phase {parts[1]!r}")
            phase = parts[1]
            if phase not in it["phase_order"]:
                it["phase_order"].append(phase)
        elif kind == "A":
            seen_a = True
            sid, size = number(path, n, parts[1]), number(path, n, parts[2])
            dev, _stream, ctx = parts[3], number(path, n, parts[4]), number(path, n, parts[5])
            if sid in live:
                raise TraceError(f"{path}:{n}: A for live id {sid}")
            if size < 1 or dev not in ("g", "h"):
                raise TraceError(f"{path}:{n}: bad size or device")
            if ctx and ctx not in strings:
                raise TraceError(f"{path}:{n}: string {ctx} used before it is defined")
            live[sid] = (size, dev)
            allocs += 1
            live_bytes += size
            account(it, phase, size, dev, +1)
        elif kind == "F":
            sid = number(path, n, parts[1])
            if sid not in live:
                raise TraceError(f"{path}:{n}: F for id {sid}, which is not live")
            size, dev = live.pop(sid)
            frees += 1
            live_bytes -= size
            account(it, phase, size, dev, -1)
        elif kind == "R":
            if number(path, n, parts[1]) not in live:
                raise TraceError(f"{path}:{n}: R for an id that is not live")
        elif kind == "Z":
            z = tuple(number(path, n, p) for p in parts[1:])
            if z != (allocs, frees, live_bytes):
                raise TraceError(f"{path}:{n}: Z {z} disagrees with the trace "
                                 f"({allocs} {frees} {live_bytes})")
    if z is None:
        raise TraceError(f"{path}: no Z line (truncated trace)")
    return {"meta": meta, "allocs": allocs, "frees": frees, "live_bytes": live_bytes,
            "iterations": iteration, "per_iteration": its}


def new_iteration():
    return {"allocs": 0, "frees": 0, "alloc_bytes": 0, "gpu_alloc_bytes": 0, "host_alloc_bytes": 0,
            "gpu_live_delta": 0, "phase_order": [], "phase_alloc_bytes": {}, "phase_gpu_allocs": {}}


def account(it, phase, size, dev, sign):
    if sign > 0:
        it["allocs"] += 1
        it["alloc_bytes"] += size
        it["gpu_alloc_bytes" if dev == "g" else "host_alloc_bytes"] += size
        key = phase or "none"
        it["phase_alloc_bytes"][key] = it["phase_alloc_bytes"].get(key, 0) + size
        if dev == "g":
            it["phase_gpu_allocs"][key] = it["phase_gpu_allocs"].get(key, 0) + 1
    else:
        it["frees"] += 1
    if dev == "g":
        it["gpu_live_delta"] += sign * size


def number(path, n, text):
    if not text.isdigit():
        raise TraceError(f"{path}:{n}: {text!r} is not an unsigned number")
    return int(text)


def checks(summary, args):
    failures = []
    if args.steps is not None:
        if summary["iterations"] != args.steps:
            failures.append(f"{summary['iterations']} iterations, expected {args.steps}")
        if summary["meta"].get("steps") != str(args.steps):
            failures.append(f"M steps is {summary['meta'].get('steps')!r}, expected {args.steps}")
    if args.phases_in_order:
        for n, it in summary["per_iteration"].items():
            if n == 0:
                continue
            present = [p for p in it["phase_order"] if p in ORDER]
            missing = [p for p in ORDER[1:] if p not in present]
            if missing:
                failures.append(f"iteration {n}: phases {missing} missing (saw {it['phase_order']})")
            elif present != sorted(present, key=ORDER.index):
                failures.append(f"iteration {n}: phases out of order: {it['phase_order']}")
    if args.min_setup_gpu_bytes is not None:
        setup = summary["per_iteration"].get(0, new_iteration())["gpu_live_delta"]
        if setup < args.min_setup_gpu_bytes:
            failures.append(f"iteration 0 leaves {setup} device bytes live, expected at least "
                            f"{args.min_setup_gpu_bytes} (parameters not accounted?)")
    return failures


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("--steps", type=int)
    p.add_argument("--phases-in-order", action="store_true")
    p.add_argument("--min-setup-gpu-bytes", type=int)
    args = p.parse_args()
    try:
        summary = parse(args.trace)
    except (OSError, UnicodeDecodeError, TraceError) as e:
        print(f"check_trace: {e}", file=sys.stderr)
        return 1
    failures = checks(summary, args)
    json.dump(summary, sys.stdout, indent=1, sort_keys=True)
    print()
    for f in failures:
        print(f"check_trace: {args.trace}: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
