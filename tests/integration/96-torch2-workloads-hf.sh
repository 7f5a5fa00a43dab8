#!/usr/bin/env bash
# Hugging Face models built from config under `xmem estimate`, torch 2.x from the venv on
# PATH: GPT-2 (AdamW), a Llama-style decoder with peft LoRA in bf16 with HF gradient
# checkpointing, BERT under fp16 autocast with GradScaler("cuda"), and the HF Trainer.
# Each estimate lies between the model's own weights + grads + AdamW state and a generous
# bound and records the job's torch; fast and exact agree within 1 % where both run.
source "$(dirname "$0")/96-torch2-workloads-common.bash"
both gpt2 hf_lm.py --arch gpt2 --batch 4 --seq 256
both llama-lora-ckpt hf_lm.py --arch llama --lora --dtype bf16 --checkpointing --batch 4 --seq 128
both bert-fp16 hf_lm.py --arch bert --amp fp16 --batch 4 --seq 128
both trainer hf_trainer.py --batch 2
finish
