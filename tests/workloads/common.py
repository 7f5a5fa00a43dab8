"""Pieces every workload shares, written the way training scripts usually are: a synthetic
Dataset (random tensors, no downloads), an optimizer picked by name, and a training loop
with the usual CUDA idioms (.to(device), non_blocking copies, autocast + GradScaler)."""
import argparse
import time

import torch
from torch.utils.data import DataLoader, Dataset


class RandomImages(Dataset):
    def __init__(self, n, image_size, classes):
        self.n, self.size, self.classes = n, image_size, classes

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, self.size, self.size), torch.randint(0, self.classes, ()).item()


class RandomTokens(Dataset):
    def __init__(self, n, seq, vocab):
        self.n, self.seq, self.vocab = n, seq, vocab

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randint(0, self.vocab, (self.seq,))


def add_training_args(p):
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--steps-per-epoch", type=int, default=4)
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam", "adamw", "rmsprop", "adagrad"])
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--amp", action="store_true", help="torch.cuda.amp autocast + GradScaler")
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--zero-grad", default="before", choices=["before", "after", "set-to-none"],
                   help="where the loop clears gradients")
    p.add_argument("--time", action="store_true", help="print the wall time of every step")
    return p


def make_optimizer(name, params, lr):
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=1e-4)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.05)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, momentum=0.9)
    return torch.optim.Adagrad(params, lr=lr)


def loader(dataset, args):
    return DataLoader(dataset, batch_size=args.batch_size, shuffle=True, drop_last=True,
                      num_workers=args.workers, pin_memory=True)


def train(model, data, loss_fn, args, to_device):
    """The canonical loop. TO_DEVICE moves one batch to the GPU and returns (inputs, target)."""
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = model.to(device)
    optimizer = make_optimizer(args.optimizer, model.parameters(), args.lr)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)
    model.train()
    last = time.perf_counter()
    for epoch in range(args.epochs):
        for i, batch in enumerate(data):
            if i >= args.steps_per_epoch:
                break
            inputs, target = to_device(batch, device)
            if args.zero_grad == "before":
                optimizer.zero_grad()
            elif args.zero_grad == "set-to-none":
                optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=args.amp):
                loss = loss_fn(model(inputs), target)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if args.zero_grad == "after":
                optimizer.zero_grad()
            scheduler.step()
            if args.time:
                now = time.perf_counter()
                print(f"step {epoch * args.steps_per_epoch + i + 1} {now - last:.3f} s", flush=True)
                last = now
        peak = torch.cuda.max_memory_allocated() / 2**20 if device.type == "cuda" else 0.0
        print(f"epoch {epoch} loss {loss.item():.4f} max memory {peak:.1f} MiB", flush=True)


def parser(description):
    return add_training_args(argparse.ArgumentParser(description=description))
