#!/usr/bin/env python3
"""Transformers written with torch.nn, trained the way GPU users train them.

  --arch gpt   decoder-only LM, GPT-2-small shape by default (12 x 768, 12 heads, seq 1024)
  --arch bert  encoder with masked-LM head, BERT-base shape by default (12 x 768, seq 512)
  --arch vit   ViT-B/16 on 224x224 images (12 x 768, 197 tokens)
Small:  transformer.py --arch gpt --layers 2 --hidden 64 --heads 4 --seq 32 --vocab 1000
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

import common


class Block(nn.Module):
    def __init__(self, hidden, heads, causal, dropout=0.1):
        super().__init__()
        self.causal = causal
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = nn.MultiheadAttention(hidden, heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 4 * hidden), nn.GELU(), nn.Linear(4 * hidden, hidden),
                                 nn.Dropout(dropout))

    def forward(self, x):
        mask = None
        if self.causal:
            n = x.size(1)
            mask = torch.triu(torch.ones(n, n, device=x.device, dtype=torch.bool), diagonal=1)
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TokenModel(nn.Module):
    """GPT (causal, tied LM head) or BERT (bidirectional, MLM head)."""

    def __init__(self, vocab, seq, hidden, layers, heads, causal):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Parameter(torch.zeros(1, seq, hidden))
        self.blocks = nn.ModuleList(Block(hidden, heads, causal) for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab, bias=False)
        if causal:
            self.head.weight = self.tok.weight

    def forward(self, ids):
        x = self.tok(ids) + self.pos[:, : ids.size(1)]
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


class ViT(nn.Module):
    def __init__(self, image, patch, hidden, layers, heads, classes):
        super().__init__()
        self.patch = nn.Conv2d(3, hidden, patch, stride=patch)
        n = (image // patch) ** 2 + 1
        self.cls = nn.Parameter(torch.zeros(1, 1, hidden))
        self.pos = nn.Parameter(torch.randn(1, n, hidden) * 0.02)
        self.blocks = nn.Sequential(*(Block(hidden, heads, causal=False) for _ in range(layers)))
        self.ln = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, classes)

    def forward(self, images):
        x = self.patch(images).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.size(0), -1, -1), x], dim=1) + self.pos
        return self.head(self.ln(self.blocks(x))[:, 0])


def lm_loss(logits, ids):
    """Next-token loss for GPT, masked-token loss (15 % of positions) for BERT."""
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))


def mlm_loss(logits, ids):
    mask = torch.rand(ids.shape, device=ids.device) < 0.15
    return F.cross_entropy(logits[mask], ids[mask]) if mask.any() else logits.sum() * 0


def main():
    p = common.parser(__doc__)
    p.add_argument("--arch", default="gpt", choices=["gpt", "bert", "vit"])
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--hidden", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--seq", type=int, default=None, help="tokens (default 1024 gpt, 512 bert)")
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--patch", type=int, default=16)
    p.add_argument("--classes", type=int, default=1000)
    args = p.parse_args()
    torch.manual_seed(0)
    n = args.batch_size * args.steps_per_epoch

    if args.arch == "vit":
        model = ViT(args.image_size, args.patch, args.hidden, args.layers, args.heads, args.classes)
        data = common.loader(common.RandomImages(n, args.image_size, args.classes), args)
        loss_fn = nn.CrossEntropyLoss(label_smoothing=0.1)

        def to_device(batch, device):
            return batch[0].to(device, non_blocking=True), batch[1].to(device, non_blocking=True)
    else:
        seq = args.seq or (1024 if args.arch == "gpt" else 512)
        model = TokenModel(args.vocab, seq, args.hidden, args.layers, args.heads, args.arch == "gpt")
        data = common.loader(common.RandomTokens(n, seq, args.vocab), args)
        loss_fn = lm_loss if args.arch == "gpt" else mlm_loss

        def to_device(batch, device):
            ids = batch.to(device, non_blocking=True)
            return ids, ids

    common.train(model, data, loss_fn, args, to_device)


if __name__ == "__main__":
    main()
