#!/usr/bin/env python3
"""`make bench-accuracy`: rebuild GPUMemNet runs, estimate each with xmem, compare.

    run.py --build BUILD --records records.csv --groundtruth DIR --out DIR [--real]

For every record: generate its training script (gpumemnet_job.py / real_model_job.py),
run `xmem-estimate --gpu A100-40GB --torch 2.1 --json -- python3 JOB ...`, and keep the JSON
and the captured trace under --out: a rerun reuses the JSON, and when only the JSON is removed
it re-analyses the kept trace instead of profiling again (delete the folder to start over).
Then:

1. constants: the catalog's A100-40GB context is replaced by the median of
   (measured - (peak - context - cuDNN term)) over the `calib-constant` records (tiny MLPs),
   then the cuDNN term by the median of what is left over the `calib` CNN records (so the
   printed estimates are what xmem prints once etc/gpus.yaml holds these two values);
2. margin: the 95th percentile of (measured - estimate) / estimate over the calibration
   records (`calib` and `calib-constant`);
3. report, per `test` record and overall: relative error |est - measured| / measured, whether
   the measured peak exceeds the limit (estimate x (1 + margin)), and the limit's slack
   (limit - measured) / measured; and the share above the `limit_bytes` xmem itself printed
   (the catalog's constants and the shipped margin, not the ones fitted here).

With --torch2-python, the real-model set is also captured with that torch 2.x interpreter and
the peers (peers.py: MemTracker, accelerate) run on it; one table puts them beside the 1.13
capture (report_side_by_side), and GPT-2-small and BERT-base, with no label, follow
(report_unlabelled). These rows stay out of the calibration and of the test groups.

`large-calib` / `large-test` records (CNNs too costly for the exact capture, run in fast
mode) are reported on their own lines and left out of steps 1 and 2: the cuDNN workspace
factors were chosen on `large-calib` (docs/estimate.md, "cuDNN workspaces"), and their
labels, a 1 Hz sample of multi-GB peaks, are too loose to calibrate constants of ~300 MiB.
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
HERE = os.path.dirname(os.path.abspath(__file__))
REAL_MODELS = ["vgg", "resnet", "mobilenet", "efficientnet", "inception"]
TIMM_MODELS = ["Xception"]  # Debian's torch 1.13 has no timm: torch 2.x column and peers only


def run_one(args, key, job_argv, iterations, mode="exact", env=None):
    path = os.path.join(args.out, key + ".json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    trace = os.path.join(args.out, key + ".xtrace")
    if os.path.exists(trace):  # captured before: analyse it again, do not profile again
        job = ["--trace-in", trace]
    else:
        # A loaded two-core machine takes minutes per ResNet-50 step: no step timeout here.
        job = ["--keep-trace", trace, "--steps", str(iterations), "--timeout", "3600", "--"] + job_argv
    # The figures reported for this bench were measured with the exact capture; name it, since
    # the CLI's default is now auto (fast first).
    cmd = [os.path.join(args.build, "bin", "xmem-estimate"), "--mode", mode, "--gpu", "A100-40GB",
           "--torch", args.torch, "--json"] + job
    start = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print(f"accuracy: {key}: xmem-estimate failed ({p.returncode}): {p.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    result = json.loads(p.stdout)
    result["wall_seconds"] = time.time() - start
    if job[0] == "--trace-in":  # keep the timing of the run that profiled
        with open(path + ".profile") as f:
            result["profile_seconds"] = float(f.read())
    else:
        with open(path + ".profile", "w") as f:
            f.write(str(result["profile_seconds"]))
    with open(path, "w") as f:
        json.dump(result, f)
    return result


def percentile(values, q):
    v = sorted(values)
    if not v:
        return float("nan")
    k = (len(v) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def collect(args):
    rows = []
    with open(args.records, newline="") as f:
        records = list(csv.DictReader(f))
    if args.limit:
        records = records[: args.limit]
    for i, r in enumerate(records):
        key = r["set"].replace(".csv", "") + "-" + str(i)
        job = [sys.executable, os.path.join(HERE, "gpumemnet_job.py"), "--csv",
               os.path.join(args.groundtruth, r["set"]), "--filename", r["filename"]]
        res = run_one(args, key, job, 3, r.get("mode") or "exact")
        print(f"accuracy: [{i + 1}/{len(records)}] {r['split']:15s} {r['filename'][:60]}", file=sys.stderr)
        if res:
            rows.append(dict(name=r["filename"], set=r["set"], split=r["split"],
                             measured=int(r["measured_mib"]) * MIB, result=res))
    if args.real:
        with open(os.path.join(args.groundtruth, "real_models_cnn.csv"), newline="") as f:
            real = {(r["model"], int(r["batch_size"])): r for r in csv.DictReader(f)}
        wanted = os.environ.get("XMEM_ACCURACY_REAL_MODELS", "")
        for model in REAL_MODELS + (TIMM_MODELS if args.torch2 else []):
            if wanted and model not in wanted.split(","):
                continue
            for batch in args.real_batches:
                r = real[(model, batch)]
                job = [sys.executable, os.path.join(HERE, "real_model_job.py"), "--model", model,
                       "--batch-size", str(batch)]
                suffix = "" if args.real_mode == "exact" else "-" + args.real_mode
                measured = int(r["measured_peak_nvidia_smi_mib"]) * MIB
                res = None
                if model in REAL_MODELS:
                    res = run_one(args, f"real-{model}-{batch}{suffix}", job, 2, args.real_mode)
                    print(f"accuracy: real {model} batch {batch} ({args.real_mode})", file=sys.stderr)
                if res:
                    rows.append(dict(name=f"{model} bs{batch} ({args.real_mode})", model=model, batch=batch,
                                     set="real_models_cnn.csv", split="test-real", measured=measured, result=res))
                if args.torch2:
                    rows += torch2_rows(args, model, batch, measured, suffix)
    return rows


def torch2_rows(args, model, batch, measured, suffix):
    """The same real-model run captured with the torch 2.x interpreter (--torch2-python), and
    the peers' figures on it (peers.py): rows of split real-torch2 / peer-*, kept out of the
    calibration and of the test groups, and compared in one table (report_side_by_side)."""
    py = args.torch2_python
    env = dict(os.environ, PATH=os.path.dirname(py) + os.pathsep + os.environ.get("PATH", ""))
    job = [py, os.path.join(HERE, "real_model_job.py"), "--model", model, "--batch-size", str(batch)]
    res = run_one(args, f"real-{model}-{batch}{suffix}-torch2", job, 2, args.real_mode, env)
    print(f"accuracy: real {model} batch {batch} ({args.real_mode}, torch 2.x)", file=sys.stderr)
    base = dict(model=model, batch=batch, set="real_models_cnn.csv", measured=measured)
    rows = []
    if res:
        rows.append(dict(base, name=f"{model} bs{batch} ({args.real_mode}, torch 2.x)", split="real-torch2", result=res))
    peers = run_peers(args, ["real", "--model", model, "--batch-size", str(batch)], f"peers-{model}-{batch}")
    for tool in ("memtracker", "accelerate"):
        if peers.get(tool + "_bytes") is not None:
            rows.append(dict(base, name=f"{model} bs{batch} ({tool})", split="peer-" + tool,
                             figure=peers[tool + "_bytes"], note=peers.get("memtracker_device") or ""))
        else:
            print(f"accuracy: {tool} on {model} bs{batch}: {peers['errors']}", file=sys.stderr)
    return rows


# Workloads with no measured label: each tool's figure side by side only. (name, hf_lm.py
# arguments, peers.py arguments.)
UNLABELLED = [
    ("GPT-2-small bs8 x 1024", ["--arch", "gpt2", "--size", "full", "--batch", "8", "--seq", "1024"],
     ["hf", "--arch", "gpt2", "--size", "full", "--batch", "8", "--seq", "1024"]),
    ("BERT-base bs8 x 512", ["--arch", "bert", "--size", "full", "--batch", "8", "--seq", "512"],
     ["hf", "--arch", "bert", "--size", "full", "--batch", "8", "--seq", "512"]),
]


def report_unlabelled(args):
    """xmem (torch 2.x, fast mode), MemTracker and accelerate on the UNLABELLED workloads."""
    job_dir = os.path.join(HERE, "..", "..", "tests", "workloads", "torch2")
    env = dict(os.environ, HF_HUB_OFFLINE="1",
               PATH=os.path.dirname(args.torch2_python) + os.pathsep + os.environ.get("PATH", ""))
    print("no measured label (MiB): xmem's peak (torch 2.x, fast mode, A100-40GB, context included) "
          "and reserved peak, beside the peers")
    print(f"{'workload':24s} {'xmem':>8s} {'reserved':>9s} {'MemTracker':>11s} {'accelerate':>11s}")
    for name, job_args, peer_args in UNLABELLED:
        key = "unlabelled-" + name.split()[0].lower()
        job = [args.torch2_python, os.path.join(job_dir, "hf_lm.py"), "--steps", "4"] + job_args
        res = run_one(args, key, job, 2, "fast", env)
        peers = run_peers(args, peer_args, "peers-" + key)
        cells = [f"{res['peak_bytes'] / MIB:8.0f}" if res else f"{'failed':>8s}",
                 f"{res['reserved_peak_bytes'] / MIB:9.0f}" if res else f"{'-':>9s}"]
        for tool in ("memtracker", "accelerate"):
            v = peers.get(tool + "_bytes")
            cells.append(f"{v / MIB:11.0f}" if v is not None else f"{'failed':>11s}")
        print(f"{name:24s} " + " ".join(cells))
    print()


def run_peers(args, peer_argv, key):
    """peers.py's JSON for one workload, kept under --out like xmem's."""
    path = os.path.join(args.out, key + ".json")
    if not os.path.exists(path):
        cmd = [args.torch2_python, os.path.join(HERE, "peers.py")] + peer_argv
        p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, HF_HUB_OFFLINE="1"))
        if p.returncode != 0:
            print(f"accuracy: peers {key} failed ({p.returncode}): {p.stderr.strip()[-300:]}", file=sys.stderr)
            return {"errors": {"peers.py": p.returncode}}
        with open(path, "w") as f:
            f.write(p.stdout.strip().splitlines()[-1])
    with open(path) as f:
        return json.load(f)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--records", default=os.path.join(HERE, "records.csv"))
    p.add_argument("--groundtruth", default=os.path.join(HERE, "..", "..", "..", "shared", "groundtruth", "gpumemnet"))
    p.add_argument("--out", default="/tmp/xmem-accuracy")
    p.add_argument("--torch", default="2.1")
    p.add_argument("--real", action="store_true", help="also the real-model set")
    p.add_argument("--real-batches", default="32",
                   help="batch sizes of the real-model set, comma-separated (32,64,128)")
    p.add_argument("--real-mode", default="exact", choices=["exact", "fast"],
                   help="capture for the real-model set (exact runs VGG-16 for real on the CPU)")
    p.add_argument("--limit", type=int, default=0, help="only the first N records (smoke run)")
    p.add_argument("--torch2-python", help="a torch 2.x interpreter: also capture the real-model set with it "
                   "and run the peers (MemTracker, accelerate) there")
    args = p.parse_args()
    args.real_batches = [int(b) for b in args.real_batches.split(",") if b]
    args.torch2 = bool(args.torch2_python)
    os.makedirs(args.out, exist_ok=True)
    rows = collect(args)
    report(rows)
    if args.torch2:
        report_unlabelled(args)


def dynamic(row):
    """The estimate without the constants calibrated here: reserved peak plus memory outside
    the allocator that is not cuDNN's (xmem's peak minus the catalog's context and cuDNN term)."""
    res = row["result"]
    cudnn = res["catalog_cudnn_context_bytes"] if res["corrections"].get("uses_cudnn") else 0
    return res["peak_bytes"] - res["context_bytes"] - cudnn


def report_batch_slopes(rows):
    """The real-model labels carry an uncertain constant (re-measured 1.1-1.5 GB lower later):
    what grows from the smallest to the largest batch of a model tests the estimate without it."""
    by_model = {}
    for r in rows:
        if r["split"] == "test-real":
            by_model.setdefault(r["model"], []).append(r)
    lines = []
    for model, rs in sorted(by_model.items()):
        rs.sort(key=lambda r: r["batch"])
        if len(rs) < 2:
            continue
        lo, hi = rs[0], rs[-1]
        meas = hi["measured"] - lo["measured"]
        est = hi["estimate"] - lo["estimate"]
        lines.append(f"  {model:13s} bs{lo['batch']}->bs{hi['batch']}: measured +{meas / MIB:7.0f} MiB, "
                     f"estimated +{est / MIB:7.0f} MiB, error {100 * (est - meas) / meas:+6.1f} %")
    if lines:
        print("growth with batch size (real models; independent of the constant):")
        print("\n".join(lines))
        print()


def report_side_by_side(rows, peers, constant):
    """One table on the real-model set: xmem with today's torch 1.13 capture, xmem with the
    torch 2.x capture, PyTorch's MemTracker and accelerate, each figure and its error against
    the measured nvidia-smi peak. The peers count no CUDA context or library memory: their
    error is also given with xmem's fitted constant added (`+const`), a fairer reading."""
    columns = [("xmem 1.13", "test-real"), ("xmem 2.x", "real-torch2"),
               ("MemTracker", "peer-memtracker"), ("accelerate", "peer-accelerate")]
    cells = {}
    for r in rows + peers:
        if "model" in r:
            cells[(r["model"], r["batch"], r["split"])] = r.get("estimate", r.get("figure"))
    runs = sorted({(r["model"], r["batch"], r["measured"]) for r in rows + peers if "model" in r})
    if not any(split != "test-real" for (_, _, split) in cells):
        return
    print("real-model set side by side (MiB; err = (figure - measured) / measured; +const: with "
          f"xmem's fitted constant {constant / MIB:.0f} MiB added to a peer)")
    head = f"{'run':18s} {'measured':>8s}"
    for name, _ in columns:
        head += f" {name:>11s} {'err %':>6s}"
    print(head + f" {'+const err %':>20s}")
    errors = {name: [] for name, _ in columns}
    plus_const = {name: [] for name, _ in columns[2:]}
    for model, batch, measured in runs:
        line = f"{model + ' bs' + str(batch):18s} {measured / MIB:8.0f}"
        extra = ""
        for name, split in columns:
            figure = cells.get((model, batch, split))
            if figure is None:
                line += f" {'-':>11s} {'-':>6s}"
                continue
            err = (figure - measured) / measured
            errors[name].append(abs(err))
            line += f" {figure / MIB:11.0f} {100 * err:+6.1f}"
            if name in plus_const:
                e2 = (figure + constant - measured) / measured
                plus_const[name].append(abs(e2))
                extra += f" {100 * e2:+9.1f}"
        print(line + extra)
    print_medians("median |err|", errors, plus_const)
    # The target (2.x at least as good as 1.13) on the runs both captures have.
    both = {(m, b) for (m, b, split) in cells if split == "test-real"}
    same = {name: [] for name, _ in columns}
    same_const = {name: [] for name, _ in columns[2:]}
    for model, batch, measured in runs:
        if (model, batch) not in both:
            continue
        for name, split in columns:
            figure = cells.get((model, batch, split))
            if figure is not None:
                same[name].append(abs(figure - measured) / measured)
                if name in same_const:
                    same_const[name].append(abs(figure + constant - measured) / measured)
    print_medians("  on xmem 1.13's runs", same, same_const)
    print()


def print_medians(label, errors, plus_const):
    line = f"{label:27s}"
    for v in errors.values():
        line += f" {'':>11s} {100 * statistics.median(v):6.1f}" if v else f" {'':>11s} {'-':>6s}"
    for v in plus_const.values():
        line += f" {100 * statistics.median(v):9.1f}" if v else ""
    print(line)


def report(rows):
    const_rows = [r for r in rows if r["split"] == "calib-constant"]
    if not const_rows:
        print("accuracy: no calib-constant record ran; cannot calibrate", file=sys.stderr)
        sys.exit(1)
    constant = statistics.median(r["measured"] - dynamic(r) for r in const_rows)
    catalog_context = rows[0]["result"]["context_bytes"]
    conv_calib = [r for r in rows if r["split"] == "calib" and r["result"]["corrections"].get("uses_cudnn")]
    cudnn = statistics.median(r["measured"] - dynamic(r) - constant for r in conv_calib) if conv_calib else 0
    peers = [r for r in rows if r["split"].startswith("peer-")]
    rows = [r for r in rows if not r["split"].startswith("peer-")]
    for r in rows:
        r["estimate"] = dynamic(r) + constant + (cudnn if r["result"]["corrections"].get("uses_cudnn") else 0)
    # Every calibration record, the tiny ones too: they carry the label's own noise.
    calib = [r for r in rows if r["split"].startswith("calib")]
    under = [(r["measured"] - r["estimate"]) / r["estimate"] for r in calib]
    margin = max(0.0, percentile(under, 0.95)) if under else float("nan")
    print(f"constant (A100-40GB context + libraries): {constant / MIB:.0f} MiB from {len(const_rows)} "
          f"tiny MLPs (catalog has {catalog_context / MIB:.0f} MiB)")
    print(f"cuDNN term (outside the allocator when convolutions run): {cudnn / MIB:.0f} MiB from "
          f"{len(conv_calib)} calib CNNs (catalog has "
          f"{rows[-1]['result'].get('catalog_cudnn_context_bytes', 0) / MIB:.0f} MiB)")
    print(f"margin for 95 % coverage: {100 * margin:.1f} % from {len(calib)} calib records "
          f"(under-estimates there: median {100 * statistics.median(under):+.1f} %)" if under else "no calib records")
    print()
    print(f"{'record':62s} {'split':10s} {'meas MiB':>9s} {'est MiB':>8s} {'err %':>7s} {'limit':>7s} {'slack %':>7s} {'prof s':>7s} {'anal s':>7s}")
    groups = {}
    for r in rows:
        # xmem's limit also covers the peak with cuDNN workspaces up to their bound factor.
        res = r["result"]
        bound = r["estimate"] + max(0, res.get("workspace_bound_peak_bytes", 0) - res["peak_bytes"])
        limit = bound * (1 + margin)
        err = (r["estimate"] - r["measured"]) / r["measured"]
        over = r["measured"] > limit
        slack = (limit - r["measured"]) / r["measured"]
        res = r["result"]
        print(f"{r['name'][:62]:62s} {r['split'][:10]:10s} {r['measured'] / MIB:9.0f} {r['estimate'] / MIB:8.0f} "
              f"{100 * err:+7.1f} {'OVER' if over else 'ok':>7s} {100 * slack:7.1f} "
              f"{res['profile_seconds']:7.1f} {res['analyze_seconds']:7.3f}")
        if r["split"].startswith("test") or r["split"].startswith("large"):
            g = "real models" if r["split"] == "test-real" else r["set"].split("_")[0].upper()
            if r["split"].startswith("large"):
                g = "CNN " + r["split"]
            shipped_over = r["measured"] > res["limit_bytes"]
            for name in (g, "all test") if r["split"].startswith("test") else (g,):
                groups.setdefault(name, []).append((abs(err), over, slack, res["analyze_seconds"],
                                                    shipped_over))
    print()
    report_batch_slopes(rows)
    report_side_by_side(rows, peers, constant)
    for name, vals in groups.items():
        errs, overs, slacks, times, shipped = zip(*vals)
        print(f"{name:12s} n={len(vals):3d}  median |rel err| {100 * statistics.median(errs):5.1f} %  "
              f"measured above limit {100 * sum(overs) / len(vals):5.1f} %  median limit slack "
              f"{100 * statistics.median(slacks):5.1f} %  above xmem's own limit_bytes "
              f"{100 * sum(shipped) / len(vals):5.1f} %  max analysis {max(times):.3f} s")


if __name__ == "__main__":
    main()
