#!/usr/bin/env python3
"""One GPUMemNet ground-truth run, rebuilt as the training script its authors describe
(../shared/groundtruth/README.md beside the repository), written the way a GPU user writes it.

    gpumemnet_job.py --csv mlp_data_step1.csv --filename 'input:...out' [--steps N]

The model comes from the record's `Activations-Params` column (one entry per layer: type,
activations, parameters), checked against the `Filename` encoding; the run is fp32 Adam with
random data, as measured. MLP: nn.Sequential of Linear (+BatchNorm1d) + activation
(+Dropout), last Linear (+Softmax); 4096 random samples; CrossEntropyLoss
(BCEWithLogitsLoss when output = 1). CNN: Conv3x3 (+BatchNorm2d) + activation (+Dropout)
blocks, AdaptiveAvgPool + Linear (+softmax); a pooling step is inserted where the listed
activations shrink. Residual/dense CNNs are not rebuilt (their skip wiring is not encoded).
"""
import argparse
import ast
import csv
import math
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

ACTIVATIONS = {
    "relu": nn.ReLU, "elu": nn.ELU, "selu": nn.SELU, "gelu": nn.GELU, "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid, "softplus": nn.Softplus, "prelu": nn.PReLU, "mish": nn.Mish,
    "silu": nn.SiLU, "swish": nn.SiLU, "leakyrelu": nn.LeakyReLU, "leaky_relu": nn.LeakyReLU,
    "identity": nn.Identity,
}


def parse_filename(name):
    """'input:9_output:1_depth:2_arch:x_batch:35_act:relu_dropout:0.1_dropout:True...' -> dict.
    `dropout` appears twice: the rate, then the on/off flag."""
    fields = {}
    text = name[:-4] if name.endswith(".out") else name
    # Keys are known; split on them so activation names with '_' (leaky_relu) survive.
    keys = ["input_channels", "num_classes", "input", "output", "depth", "arch", "base_filters",
            "batch", "input_size", "act", "dropout", "batchnorm"]
    i = 0
    while i < len(text):
        for k in keys:
            if text.startswith(k + ":", i):
                j = i + len(k) + 1
                nxt = len(text)
                for k2 in keys:
                    p = text.find("_" + k2 + ":", j)
                    if p != -1 and p < nxt:
                        nxt = p
                value = text[j:nxt]
                if k == "dropout" and "dropout" in fields:
                    fields["dropout_on"] = value == "True"
                else:
                    fields[k] = value
                i = nxt + 1
                break
        else:
            raise SystemExit(f"gpumemnet_job: cannot parse Filename near {text[i:i+20]!r}")
    return fields


def activation(name):
    cls = ACTIVATIONS.get(name.lower())
    if cls is None:
        raise SystemExit(f"gpumemnet_job: unknown activation {name!r}")
    return cls()


def build_mlp(fields, layers):
    prev = int(fields["input"])
    rate = float(fields.get("dropout", 0.0))
    mods = []
    for kind, acts, params in layers:
        if kind == "linear":
            if params != prev * acts + acts:
                raise SystemExit(f"gpumemnet_job: linear {prev}->{acts} has {prev * acts + acts} params, record says {params}")
            mods.append(nn.Linear(prev, acts))
            prev = acts
        elif kind == "batch_normalization":
            mods.append(nn.BatchNorm1d(prev))
        elif kind == "dropout":
            mods.append(nn.Dropout(rate))
        elif kind.lower() == "softmax":
            mods.append(nn.Softmax(dim=1))
        else:
            mods.append(activation(kind))
    if not isinstance(mods[-1], nn.Softmax):
        mods.append(nn.Softmax(dim=1))  # README: every MLP ends in Linear + Softmax
    return nn.Sequential(*mods), (int(fields["input"]),), int(fields["output"])


def build_cnn(fields, layers):
    arch = fields["arch"]
    if arch in ("residual", "dense"):
        raise SystemExit(f"gpumemnet_job: arch {arch} is not rebuilt (skip wiring not encoded)")
    cin, side = int(fields["input_channels"]), int(fields["input_size"])
    rate = float(fields.get("dropout", 0.0))
    mods = []
    for kind, acts, params in layers:
        k = kind.lower()
        if k == "conv2d":
            cout = params // (cin * 9 + 1)
            if cout * (cin * 9 + 1) != params:
                raise SystemExit(f"gpumemnet_job: conv params {params} do not fit Cin={cin}")
            out_side = int(round(math.sqrt(acts / cout)))
            if out_side < side:
                mods.append(nn.MaxPool2d(2) if out_side == side // 2 else nn.AdaptiveMaxPool2d(out_side))
            mods.append(nn.Conv2d(cin, cout, 3, padding=1))
            cin, side = cout, out_side
        elif k == "batchnorm2d":
            mods.append(nn.BatchNorm2d(cin))
        elif k == "dropout":
            mods.append(nn.Dropout(rate))
        elif k == "adaptive_avg_pool2d":
            mods += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        elif k == "linear":
            mods.append(nn.Linear(cin, acts))
        elif k == "softmax":
            mods.append(nn.Softmax(dim=1))
        else:
            mods.append(activation(kind))
    shape = (int(fields["input_channels"]), int(fields["input_size"]), int(fields["input_size"]))
    return nn.Sequential(*mods), shape, int(fields["num_classes"])


def find_record(path, filename):
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["Filename"] == filename:
                return row
    raise SystemExit(f"gpumemnet_job: {filename} not in {path}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--csv", required=True)
    p.add_argument("--filename", required=True)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--check", action="store_true", help="build the model on the CPU and stop")
    args = p.parse_args()

    row = find_record(args.csv, args.filename)
    fields = parse_filename(row["Filename"])
    layers = ast.literal_eval(row["Activations-Params"])
    cnn = "input_channels" in fields
    model, shape, classes = (build_cnn if cnn else build_mlp)(fields, layers)
    batch = int(fields["batch"])
    if args.check:
        # The record's total leaves out PReLU's one weight per module.
        n = sum(p.numel() for m in model.modules() if not isinstance(m, nn.PReLU)
                for p in m.parameters(recurse=False))
        if n != int(row["Total Parameters"]):
            raise SystemExit(f"gpumemnet_job: rebuilt model has {n} parameters, record says {row['Total Parameters']}")
        return
    samples = 4096 if not cnn else batch * 4

    device = torch.device("cuda")
    model = model.to(device)
    x = torch.randn(samples, *shape)
    if classes == 1:
        y = torch.randint(0, 2, (samples, 1)).float()
        criterion = nn.BCEWithLogitsLoss()
    else:
        y = torch.randint(0, classes, (samples,))
        criterion = nn.CrossEntropyLoss()
    loader = DataLoader(TensorDataset(x, y), batch_size=batch, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters())
    done = 0
    while done < args.steps:
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            done += 1
            if done >= args.steps:
                break
    print(f"gpumemnet_job: {done} steps", file=sys.stderr)


if __name__ == "__main__":
    main()
