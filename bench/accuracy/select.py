#!/usr/bin/env python3
"""Chooses the GPUMemNet records `make bench-accuracy` rebuilds, and splits them.

    select.py GROUNDTRUTH_DIR > records.csv

Deterministic: the same data gives the same list. A record is kept when its CPU capture is
cheap enough for the bench to finish in about 20 minutes on two cores (training FLOPs per
step under a cap), its label is usable (the README's rules: no OOM_CRASH, no zero reading,
nothing near 40 GB) and, for CNNs, its arch is rebuildable (not residual/dense). Records are
then split by a hash of the Filename: `calib` (about one in two) fixes the constant and
the limit margin, `test` is what the bench reports. Tiny MLPs (under 0.5 M parameters,
where the label is mostly the constant) are marked `calib-constant`.
"""
import ast
import csv
import hashlib
import os
import sys

MLP_FLOP_CAP = 4e9      # 6 * params * batch per step
CNN_FLOP_CAP = 6e9      # 6 * sum(conv params * output pixels) * batch per step
TINY_PARAMS = 500_000
LARGE_CNNS = 120        # CNNs over the cap, captured in fast mode (seconds whatever the FLOPs)
PER_SET = {"mlp_data_step1.csv": 22, "mlp_data_step2.csv": 22, "cnn_data_step1_partial_2024-09-22.csv": 14}
TINY_EXTRA = 5          # extra constant-calibration MLPs per MLP set (under 50 k parameters)


def bucket(name):
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)


def mlp_cost(row):
    return 6 * int(row["Total Parameters"]) * int(row["Batch Size"])


def cnn_cost(row):
    """Training FLOPs per step: 3 x (forward MACs x 2) x batch; a conv's MACs are
    params x output pixels (params = cout * (cin*9 + 1), activations = cout * H * W)."""
    cin = int(row["Filename"].split("input_channels:")[1].split("_")[0])
    macs = 0
    for kind, acts, params in ast.literal_eval(row["Activations-Params"]):
        if kind == "conv2d" and params:
            cout = params // (cin * 9 + 1)
            macs += params * (acts // max(1, cout))
            cin = cout
    return 6 * macs * int(row["Batch Size"])


def usable(name, row):
    if name.startswith("cnn"):
        if row.get("Status") == "OOM_CRASH":
            return False
        arch = row["Filename"].split("arch:")[1].split("_")[0]
        if arch in ("residual", "dense"):
            return False
    mib = int(row["Max GPU Memory (MiB)"])
    return 0 < mib < 39000


def main():
    root = sys.argv[1]
    out = csv.writer(sys.stdout)
    out.writerow(["set", "filename", "split", "measured_mib", "mode"])
    for name, count in PER_SET.items():
        rows = [r for r in csv.DictReader(open(os.path.join(root, name), newline="")) if usable(name, r)]
        cost = cnn_cost if name.startswith("cnn") else mlp_cost
        cap = CNN_FLOP_CAP if name.startswith("cnn") else MLP_FLOP_CAP
        cheap = sorted((r for r in rows if cost(r) <= cap), key=lambda r: bucket(r["Filename"]))
        chosen = cheap[:count]
        for r in chosen:
            split = "calib" if bucket(r["Filename"] + "split") % 2 == 0 else "test"
            if split == "calib" and not name.startswith("cnn") and int(r["Total Parameters"]) < TINY_PARAMS:
                split = "calib-constant"
            out.writerow([name, r["Filename"], split, r["Max GPU Memory (MiB)"]])
        if not name.startswith("cnn"):
            taken = {r["Filename"] for r in chosen}
            tiny = [r for r in cheap[count:] if int(r["Total Parameters"]) < 50_000 and r["Filename"] not in taken]
            for r in tiny[:TINY_EXTRA]:
                out.writerow([name, r["Filename"], "calib-constant", r["Max GPU Memory (MiB)"]])
        else:
            # Large CNNs: what the cuDNN workspace factors were chosen on (large-calib) and
            # tested on (large-test), docs/estimate.md "cuDNN workspaces". Fast capture.
            large = sorted((r for r in rows if cost(r) > cap), key=lambda r: bucket(r["Filename"]))
            for r in large[:LARGE_CNNS]:
                split = "large-calib" if bucket(r["Filename"] + "split") % 2 == 0 else "large-test"
                out.writerow([name, r["Filename"], split, r["Max GPU Memory (MiB)"], "fast"])


if __name__ == "__main__":
    main()
