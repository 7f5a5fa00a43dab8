#!/usr/bin/env python3
"""Hugging Face Trainer fine-tuning a GPT-2 built from its config on a tiny random dataset,
report_to="none", max_steps optimizer steps. Trainer picks the device itself (cuda when
there is one; use_cpu for the plain CPU check).

    hf_trainer.py [--batch B] [--seq S] [--steps N] [--amp bf16|fp16] [--checkpointing]"""
import os
import tempfile

import torch
import transformers

from workload_args import parser


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab):
        self.ids = torch.randint(0, vocab, (n, seq))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


CONFIG = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000)


def arguments(argv=None):
    p = parser(__doc__, batch=2)
    p.add_argument("--seq", type=int, default=32)
    return p.parse_args(argv)


def build_model(args):
    return transformers.AutoModelForCausalLM.from_config(CONFIG)


def main():
    args = arguments()
    with tempfile.TemporaryDirectory(prefix="hf-trainer-") as out:
        train(build_model(args), CONFIG, args, out)


def train(model, cfg, args, out):
    training = transformers.TrainingArguments(
        output_dir=out, report_to="none", max_steps=args.steps, per_device_train_batch_size=args.batch,
        learning_rate=1e-4, logging_steps=1, save_strategy="no", dataloader_num_workers=0,
        bf16=args.amp == "bf16", fp16=args.amp == "fp16", gradient_checkpointing=args.checkpointing,
        use_cpu=os.environ.get("XMEM_WORKLOAD_DEVICE") == "cpu")
    data = RandomTokens(args.batch * args.steps, args.seq, cfg.vocab_size)
    transformers.Trainer(model=model, args=training, train_dataset=data).train()


if __name__ == "__main__":
    main()
