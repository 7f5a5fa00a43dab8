#!/usr/bin/env python3
"""Three small training scripts where fast mode and the exact capture once allocated
differently (issue 33, item 5), written the way the public examples are:

  reserved_nets.py lstm   an LSTM language model with dropout around it, log_softmax in the
                          model, clip_grad_norm_ and a manual SGD update
                          (p.data.add_(p.grad, alpha=-lr)), hidden state carried over
  reserved_nets.py mnist  a LeNet-like convnet on 28x28 digits with dropout, Adadelta
  reserved_nets.py style  a style-transfer-like net: reflection pads, strided convs,
                          instance norm, residual blocks, nearest upsampling, Adam

`--steps N` (default 3), `--batch B`, `--image-size S` (style, default 128). Random data;
no downloads."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class WordModel(nn.Module):
    def __init__(self, vocab, size, layers, dropout):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(vocab, size)
        self.rnn = nn.LSTM(size, size, layers, dropout=dropout)
        self.decoder = nn.Linear(size, vocab)
        self.layers, self.size = layers, size

    def init_hidden(self, batch):
        weight = next(self.parameters())
        return (weight.new_zeros(self.layers, batch, self.size),
                weight.new_zeros(self.layers, batch, self.size))

    def forward(self, tokens, hidden):
        output, hidden = self.rnn(self.drop(self.encoder(tokens)), hidden)
        decoded = self.decoder(self.drop(output)).view(-1, self.decoder.out_features)
        return F.log_softmax(decoded, dim=1), hidden


def lstm(args):
    vocab, bptt, lr = 33278, 35, 20.0
    model = WordModel(vocab, 200, 2, 0.2).cuda()
    criterion = nn.NLLLoss()
    corpus = torch.randint(0, vocab, (2_000_000 // args.batch, args.batch)).cuda()  # batchified
    hidden = model.init_hidden(args.batch)
    for i in range(0, args.steps * bptt, bptt):
        data, targets = corpus[i:i + bptt], corpus[i + 1:i + 1 + bptt].view(-1)
        hidden = tuple(h.detach() for h in hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)


class Digits(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 32, 3, 1), nn.Conv2d(32, 64, 3, 1)
        self.dropout1, self.dropout2 = nn.Dropout(0.25), nn.Dropout(0.5)
        self.fc1, self.fc2 = nn.Linear(9216, 128), nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
        x = F.relu(self.fc1(torch.flatten(self.dropout1(x), 1)))
        return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)


def mnist(args):
    model = Digits().cuda()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for _ in range(args.steps):
        x, y = torch.randn(args.batch, 1, 28, 28).cuda(), torch.randint(0, 10, (args.batch,)).cuda()
        optimizer.zero_grad()
        F.nll_loss(model(x), y).backward()
        optimizer.step()


def conv_block(cin, cout, kernel, stride=1, norm=True, upsample=None):
    layers = [nn.Upsample(scale_factor=upsample)] if upsample else []
    layers += [nn.ReflectionPad2d(kernel // 2), nn.Conv2d(cin, cout, kernel, stride)]
    if norm:
        layers += [nn.InstanceNorm2d(cout, affine=True), nn.ReLU()]
    return nn.Sequential(*layers)


class Residual(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.body = nn.Sequential(conv_block(channels, channels, 3), conv_block(channels, channels, 3))

    def forward(self, x):
        return x + self.body(x)


def style(args):
    model = nn.Sequential(conv_block(3, 32, 9), conv_block(32, 64, 3, 2), conv_block(64, 128, 3, 2),
                          *[Residual(128) for _ in range(3)],
                          conv_block(128, 64, 3, upsample=2), conv_block(64, 32, 3, upsample=2),
                          conv_block(32, 3, 9, norm=False)).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(args.steps):
        x = torch.rand(args.batch, 3, args.image_size, args.image_size).cuda()
        optimizer.zero_grad()
        y = model(x)
        loss = F.mse_loss(y, x) + 1e-5 * (y[..., 1:, :] - y[..., :-1, :]).abs().sum()
        loss.backward()
        optimizer.step()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("net", choices=["lstm", "mnist", "style"])
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--batch", type=int)
    p.add_argument("--image-size", type=int, default=128, help="style's images")
    args = p.parse_args()
    args.batch = args.batch or {"lstm": 20, "mnist": 64, "style": 4}[args.net]
    {"lstm": lstm, "mnist": mnist, "style": style}[args.net](args)


if __name__ == "__main__":
    main()
