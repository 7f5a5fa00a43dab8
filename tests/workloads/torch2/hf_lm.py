#!/usr/bin/env python3
"""A Hugging Face language model trained from its config (no download): GPT-2 or a
Llama-style decoder (causal LM), or BERT (masked LM); AdamW; random tokens.

    hf_lm.py --arch gpt2|llama|bert [--size tiny|full|7b] [--batch B] [--seq S]
             [--lora] [--dtype bf16] [--amp bf16|fp16] [--checkpointing] [--compile]

--size tiny (default) trains in seconds on a CPU; full is GPT2Config()/BertConfig() as
shipped (GPT-2 small, BERT base; Llama: 1.1B-like); 7b is Llama-2-7B's shape.
--lora wraps the model in peft LoRA (r=8 on q_proj/v_proj or c_attn/query,value): only the
adapters train. --checkpointing is HF's gradient_checkpointing_enable()."""
import torch
import transformers

from workload_args import autocast, grad_scaler, optimizer_step, parser, training_device

SIZES = {
    "tiny": dict(layers=2, hidden=64, heads=4, vocab=1000, intermediate=128),
    "full": dict(layers=None),  # the config class's defaults
    "7b": dict(layers=32, hidden=4096, heads=32, vocab=32000, intermediate=11008),
}
LORA_TARGETS = {"gpt2": ["c_attn"], "llama": ["q_proj", "v_proj"], "bert": ["query", "value"]}


def config(arch, size, seq):
    s = SIZES[size]
    if arch == "gpt2":
        c = transformers.GPT2Config(n_positions=max(seq, 1024))
        if s["layers"]:
            c.n_layer, c.n_embd, c.n_head, c.vocab_size = s["layers"], s["hidden"], s["heads"], s["vocab"]
        return c
    if arch == "llama":
        c = transformers.LlamaConfig(max_position_embeddings=max(seq, 2048))
        if size == "full":  # TinyLlama-1.1B's shape; LlamaConfig() alone is already 7B
            s = dict(layers=22, hidden=2048, heads=32, vocab=32000, intermediate=5632)
        c.num_hidden_layers, c.hidden_size, c.num_attention_heads = s["layers"], s["hidden"], s["heads"]
        c.num_key_value_heads, c.vocab_size, c.intermediate_size = s["heads"], s["vocab"], s["intermediate"]
        return c
    c = transformers.BertConfig(max_position_embeddings=max(seq, 512))
    if s["layers"]:
        c.num_hidden_layers, c.hidden_size, c.num_attention_heads = s["layers"], s["hidden"], s["heads"]
        c.vocab_size, c.intermediate_size = s["vocab"], s["intermediate"]
    return c


def build(args):
    cfg = config(args.arch, args.size, args.seq)
    dtype = torch.bfloat16 if args.dtype == "bf16" else torch.float32
    auto = transformers.AutoModelForMaskedLM if args.arch == "bert" else transformers.AutoModelForCausalLM
    model = auto.from_config(cfg, dtype=dtype)
    if args.checkpointing:
        model.gradient_checkpointing_enable()
    if args.lora:
        import peft
        lora = peft.LoraConfig(r=8, lora_alpha=16, target_modules=LORA_TARGETS[args.arch], lora_dropout=0.05)
        model = peft.get_peft_model(model, lora)
    return model, cfg.vocab_size


def arguments(argv=None):
    p = parser(__doc__, batch=2)
    p.add_argument("--arch", choices=["gpt2", "llama", "bert"], required=True)
    p.add_argument("--size", choices=list(SIZES), default="tiny")
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--lora", action="store_true")
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32", help="the weights' dtype")
    return p.parse_args(argv)


def build_model(args):
    return build(args)[0]


def main():
    args = arguments()
    device = training_device()
    model, vocab = build(args)
    model.to(device)
    model.train()
    if args.compile:
        model = torch.compile(model)
    optimizer = torch.optim.AdamW([q for q in model.parameters() if q.requires_grad], lr=1e-4)
    scaler = grad_scaler(args)
    for step in range(args.steps):
        ids = torch.randint(0, vocab, (args.batch, args.seq), device=device)
        with autocast(args):
            loss = model(input_ids=ids, labels=ids).loss
        optimizer_step(loss, optimizer, scaler)
        print(f"step {step} loss {loss.item():.3f}", flush=True)


if __name__ == "__main__":
    main()
