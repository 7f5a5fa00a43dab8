#!/usr/bin/env python3
"""`make bench-accuracy`, Hugging Face part: xmem against training runs measured on RTX 3060
12 GB and RTX 4060 8 GB (a development set from the xMem paper's artifact,
../shared/groundtruth/xmem-artifact beside the repository; docs/bench.md says how the runs
and the label were made).

    hf.py --build BUILD --python VENV_PYTHON [--groundtruth DIR] [--out DIR] [--limit N] [--models a,b]
          [--zero-grad 0|1|2]

--limit N takes the first N distinct runs of each model, --models a,b the models whose id
contains one of the words (case-insensitive). --zero-grad M runs every job with `train_hf.py
--zero-grad M` in place of the set's `zero_grad_mode_effective`, which the set infers (the
artifact did not record it): a diagnostic of that inference, never the headline (docs/bench.md).

Each distinct run (rows of one `identical_group` are bit-identical repeats: the first one
stands for the group) is re-created by the set's own `train_hf.py`, left where it is, with
`--model` pointing at the set's `configs/<name>.json` (no Hub access), and estimated with
`xmem-estimate --mode fast --gpu <the run's GPU> --json` under VENV_PYTHON, which must hold the
runs' torch and transformers (tests/venv/hf26.lock). Where fast mode fails, the exact capture
runs instead and the row says `exact`.

The label (`ground_nvml_peak_bytes`) is NVML's used memory minus its first sample, taken once
the CUDA context existed: it leaves the bare context out. So the estimate compared with it is
xmem's `peak_bytes - context_bytes`, and the limit `limit_bytes - context_bytes`.

Printed: one line per run; per model the median signed error; over the `ok` runs the median
|error|, how many were measured above the limit and the median limit slack
(limit - label) / label; for the `oom` runs whether xmem says "does not fit" on that GPU (the
replay ran out, or the estimate with context or the limit is above the catalog's memory).
Each beside the same figures of the estimate the artifact stores (`xmem_est_bytes`, the
paper's tool: no limit, so its estimate stands for one).

Results are kept under --out (one JSON and trace per run): a rerun only redoes what is
missing, and re-analyses a kept trace when only its JSON was removed.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time

MIB = 1048576


def distinct_runs(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    seen, runs = set(), []
    for r in rows:
        g = r["identical_group"]
        if g in seen:
            continue
        seen.add(g)
        runs.append(r)
    return rows, runs


def short_model(r):
    return r["model"].split("/")[-1]


def short_gpu(r):
    return r["gpu_name"].replace("NVIDIA GeForce ", "").replace(" ", "")


def estimate(args, r):
    """xmem's JSON for one run (cached under --out), with `mode` and `wall_seconds` added."""
    key = f"{r['run_id']}-{short_gpu(r)}" + (f"-zero-grad{args.zero_grad}" if args.zero_grad else "")
    path = os.path.join(args.out, key + ".json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    config = os.path.join(args.groundtruth, "configs", short_model(r) + ".json")
    if not os.path.exists(config):
        print(f"accuracy-hf: {key}: no config {config}", file=sys.stderr)
        return None
    zero_grad = args.zero_grad or r["zero_grad_mode_effective"].split()[0]
    job = [args.python, os.path.join(args.groundtruth, "train_hf.py"), "--model", config,
           "--bs", r["batch_size"], "--seq", r["seq_len_max"], "--opt", r["optimizer"],
           "--lr", r["lr"], "--zero-grad", zero_grad, "--steps", "4"]
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PATH=os.path.dirname(args.python) + os.pathsep + os.environ.get("PATH", ""))
    result = None
    for mode in ("fast", "exact"):
        trace = os.path.join(args.out, f"{key}-{mode}.xtrace")
        if os.path.exists(trace):  # captured before: analyse it again, do not profile again
            src = ["--trace-in", trace]
        else:
            src = ["--keep-trace", trace, "--steps", "4", "--timeout", "3600", "--"] + job
        cmd = [os.path.join(args.build, "bin", "xmem-estimate"), "--mode", mode,
               "--gpu", r["gpu_name"], "--json"] + src
        start = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if p.returncode == 0:
            result = json.loads(p.stdout)
            result["mode"] = mode
            result["wall_seconds"] = time.time() - start
            break
        print(f"accuracy-hf: {key}: {mode} mode failed ({p.returncode}): {p.stderr.strip()[-300:]}",
              file=sys.stderr)
    if result is None:
        return None
    with open(path, "w") as f:
        json.dump(result, f)
    return result


def fit_verdict(res):
    """'oom' when the replay ran out on the GPU (its figures are then what the job needs, from
    the analysis's second replay without a capacity, docs/estimate.md), 'no'
    when the estimate (context included) is above the GPU, 'limit' when only the limit is,
    'yes' otherwise. The GPU is the catalog's (nvidia-smi's memory.total), the total NVML's
    used memory, and so the label, counts against; not the row's total_gpu_memory_bytes,
    CUDA's smaller figure (docs/bench.md)."""
    if res["oom"] or not res["fits"]:
        return "oom"
    if res["peak_bytes"] > res["gpu_total_bytes"]:
        return "no"
    if res["limit_bytes"] > res["gpu_total_bytes"]:
        return "limit"
    return "yes"


def median(v):
    return statistics.median(v) if v else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--groundtruth", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "..", "..", "..", "shared", "groundtruth",
                                                         "xmem-artifact"))
    p.add_argument("--python", required=True, help="interpreter with torch 2.6.0 + transformers 4.51.3")
    p.add_argument("--out", default="/tmp/xmem-accuracy-hf")
    p.add_argument("--limit", type=int, default=0, help="only the first N distinct runs of each model")
    p.add_argument("--models", default="", help="comma-separated substrings of model ids (opt-125m,T5-small)")
    p.add_argument("--zero-grad", default="", choices=["", "0", "1", "2"],
                   help="run every job with this train_hf.py --zero-grad instead of the set's inferred column")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    all_rows, runs = distinct_runs(os.path.join(args.groundtruth, "transformer-dev.csv"))
    if args.models:
        wanted = [m.lower() for m in args.models.split(",") if m]
        runs = [r for r in runs if any(m in r["model"].lower() for m in wanted)]
    if args.limit:  # the first N of each model, so a quick run still covers every model
        taken, kept = {}, []
        for r in runs:
            taken[r["model"]] = taken.get(r["model"], 0) + 1
            if taken[r["model"]] <= args.limit:
                kept.append(r)
        runs = kept
    zero_grad = f"--zero-grad {args.zero_grad}" if args.zero_grad else "the set's zero_grad_mode_effective"
    print(f"Hugging Face development set: {len(all_rows)} rows, {len(runs)} distinct runs measured here "
          f"(xmem fast mode, {args.python}; zero_grad: {zero_grad})")
    print("MiB; label = NVML used minus the bare context; xmem = peak - context; alloc = xmem's allocated peak"
          " (xmem - alloc: its simulated cache and memory outside the allocator);\nerr = (xmem - label) / label;"
          " stored = the artifact's xmem_est_bytes;\nfit: does xmem fit the run on the GPU (oom: the replay ran out; its figures are the job's whole need;"
          " no: estimate above the GPU; limit: only the limit above);"
          " kind *: near_capacity, the label may be censored")
    print(f"{'model':18s} {'gpu':8s} {'bs':>3s} {'kind':4s} {'label':>6s} {'xmem':>6s} {'alloc':>6s} {'err %':>6s} "
          f"{'limit':>6s} {'over':>4s} {'stored':>6s} {'err %':>6s} {'fit':>5s} {'st.fit':>6s} {'mode':5s} {'s':>5s}")
    done = []
    for r in runs:
        res = estimate(args, r)
        label = int(r["ground_nvml_peak_bytes"])
        stored = int(r["xmem_est_bytes"]) if r["xmem_est_bytes"] else None  # one oom row has none
        stored_fit = "-" if stored is None else "no" if r["xmem_oom_pred"] == "true" else "yes"
        kind = r["row_kind"][:3] + ("*" if r["near_capacity"] == "true" else "")
        head = f"{short_model(r)[:18]:18s} {short_gpu(r)[:8]:8s} {r['batch_size']:>3s} {kind:4s} " \
               f"{label / MIB:6.0f}"
        if res is None:
            print(head + " failed", flush=True)
            continue
        if not res.get("torch_version", "").startswith("2.6.0"):
            print(f"accuracy-hf: {r['run_id']}: profiled with torch {res.get('torch_version')}, not the runs' 2.6.0",
                  file=sys.stderr)
        est = res["peak_bytes"] - res["context_bytes"]
        limit = res["limit_bytes"] - res["context_bytes"]
        fit = fit_verdict(res)
        d = dict(r=r, label=label, est=est, limit=limit, stored=stored, fit=fit, stored_fit=stored_fit, mode=res["mode"],
                 err=(est - label) / label, stored_err=None if stored is None else (stored - label) / label)
        done.append(d)
        print(head + f" {est / MIB:6.0f} {res['allocated_peak_bytes'] / MIB:6.0f} {100 * d['err']:+6.1f} {limit / MIB:6.0f} "
              f"{'OVER' if label > limit else '':>4s} " +
              (f"{stored / MIB:6.0f} {100 * d['stored_err']:+6.1f} " if stored is not None else f"{'-':>6s} {'-':>6s} ") +
              f"{fit:>5s} {stored_fit:>6s} {res['mode']:5s} {res.get('wall_seconds', 0):5.0f}", flush=True)
    print()
    ok = [d for d in done if d["r"]["row_kind"] == "ok"]
    oom = [d for d in done if d["r"]["row_kind"] == "oom"]
    print("ok runs, per model: median signed error (xmem / stored)")
    for model in sorted({short_model(d["r"]) for d in ok}):
        ds = [d for d in ok if short_model(d["r"]) == model]
        print(f"  {model:20s} n={len(ds):2d}  {100 * median([d['err'] for d in ds]):+6.1f} %  "
              f"{100 * median([d['stored_err'] for d in ds]):+6.1f} %")
    if ok:
        print(f"ok runs, n={len(ok)}:                     xmem        stored")
        print(f"  median |error|                   {100 * median([abs(d['err']) for d in ok]):6.1f} %  "
              f"{100 * median([abs(d['stored_err']) for d in ok]):6.1f} %")
        whole = [d for d in ok if d["fit"] != "oom"]
        print(f"  median |error|, replay finished  {100 * median([abs(d['err']) for d in whole]):6.1f} %  "
              f"{100 * median([abs(d['stored_err']) for d in whole]):6.1f} %   (n={len(whole)})")
        print(f"  measured above limit (estimate)  {sum(d['label'] > d['limit'] for d in ok):4d}/{len(ok):<3d}"
              f" {sum(d['label'] > d['stored'] for d in ok):4d}/{len(ok):<3d}")
        print(f"  median limit slack               {100 * median([(d['limit'] - d['label']) / d['label'] for d in ok]):6.1f} %  "
              f"{100 * median([(d['stored'] - d['label']) / d['label'] for d in ok]):6.1f} %")
        print(f"  said not to fit                  {sum(d['fit'] != 'yes' for d in ok):4d}/{len(ok):<3d}"
              f" {sum(d['stored_fit'] == 'no' for d in ok):4d}/{len(ok):<3d} (xmem: {sum(d['fit'] == 'oom' for d in ok)} by the "
              f"replay, {sum(d['fit'] == 'no' for d in ok)} by the estimate, {sum(d['fit'] == 'limit' for d in ok)} by the limit only)")
    if oom:
        print(f"oom runs, n={len(oom)}: said not to fit     "
              f"{sum(d['fit'] != 'yes' for d in oom):4d}/{len(oom):<3d} {sum(d['stored_fit'] == 'no' for d in oom):4d}/{sum(d['stored'] is not None for d in oom):<3d}"
              f" (xmem: {sum(d['fit'] == 'oom' for d in oom)} by the replay, "
              f"{sum(d['fit'] == 'no' for d in oom)} by the estimate, "
              f"{sum(d['fit'] == 'limit' for d in oom)} by the limit only)")
        for d in oom:
            if d["fit"] == "yes":
                print(f"  fits by xmem, ran out of memory: {d['r']['run_id']} on {short_gpu(d['r'])}")
    failed = len(runs) - len(done)
    if failed:
        print(f"{failed} run(s) failed in both modes (above)")
    fallback = [d for d in done if d["mode"] == "exact"]
    if fallback:
        print(f"{len(fallback)} run(s) estimated with the exact capture: fast mode failed on them (above)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
