#!/usr/bin/env python3
"""An LSTM language model trained the way pytorch/examples' word_language_model does it:
no torch.optim; after backward the loop clips the gradients and updates every parameter by
hand (p.data.add_(p.grad, alpha=-lr)), then model.zero_grad(). Random tokens.

    word_lm.py [--batch B] [--bptt S] [--steps N] [--hidden H] [--vocab V]"""
import torch
import torch.nn as nn

from workload_args import parser, training_device


class RNNModel(nn.Module):
    def __init__(self, vocab, hidden, layers):
        super().__init__()
        self.encoder = nn.Embedding(vocab, hidden)
        self.rnn = nn.LSTM(hidden, hidden, layers, dropout=0.2)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, x, state):
        out, state = self.rnn(self.encoder(x), state)
        return self.decoder(out), state


OPTIMIZER_STATES = 0  # plain SGD by hand: no state per parameter


def arguments(argv=None):
    p = parser(__doc__, batch=20)
    p.add_argument("--bptt", type=int, default=35)
    p.add_argument("--hidden", type=int, default=200)
    p.add_argument("--vocab", type=int, default=10000)
    return p.parse_args(argv)


def build_model(args):
    return RNNModel(args.vocab, args.hidden, 2)


def main():
    args = arguments()
    device = training_device()
    model = build_model(args).to(device)
    criterion = nn.NLLLoss()
    lr = 20.0
    state = None
    for step in range(args.steps):
        data = torch.randint(0, args.vocab, (args.bptt + 1, args.batch), device=device)
        model.zero_grad()
        output, state = model(data[:-1], state)
        state = tuple(s.detach() for s in state)  # truncated backpropagation through time
        loss = criterion(torch.log_softmax(output, -1).view(-1, args.vocab), data[1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for q in model.parameters():
            q.data.add_(q.grad, alpha=-lr)
        print(f"step {step} loss {loss.item():.3f}", flush=True)


if __name__ == "__main__":
    main()
