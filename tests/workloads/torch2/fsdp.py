#!/usr/bin/env python3
"""A small Llama-style decoder (transformers' LlamaConfig) sharded with FSDP2
(`fully_shard` on each decoder layer, then the whole model), AdamW, one process per GPU as
torchrun starts it.

    torchrun --nproc-per-node N fsdp.py [--size 7b] [--layers L] [--hidden H] [--batch B]
             [--seq S] [--steps N] [--no-reshard] [--meta-init | --host-init] [--mp bf16]
             [--offload]
             [--fsdp1 [--sharding full|grad-op|none]]
             [--tp T [--loss-parallel] [--sequence-parallel]]

--size 7b is Llama-2-7B's shape (32 layers, hidden 4096, 32 heads, FFN 11008, vocabulary
32000), built from the config (nothing downloaded); the other sizes then do not apply.
--meta-init builds the model on the meta device, shards it, then gives each rank's shards
their storage on the GPU (`to_empty`), FSDP2's recipe for a model larger than one GPU; the
values stay uninitialised (this workload is about memory).
--fsdp1 shards with FSDP1 instead (`FullyShardedDataParallel`, one unit per decoder layer by
`transformer_auto_wrap_policy`, FULL_SHARD); --sharding grad-op is SHARD_GRAD_OP (the
parameters stay gathered from the forward to the backward), none is NO_SHARD (a whole
replica on every rank, as DDP keeps).
--mp bf16: parameters gathered and computed in bf16, gradients reduced in fp32, the sharded
parameters kept in fp32 (FSDP2's MixedPrecisionPolicy, FSDP1's MixedPrecision).
--host-init builds the model on the host, for FSDP to move it to the GPU as it shards it
(the usual recipe with --offload).
--offload: the sharded parameters, their gradients and AdamW's state on the host (FSDP2's
CPUOffloadPolicy, pinned; FSDP1's CPUOffload(offload_params=True)); the optimizer steps on
the CPU.
--tp T splits each decoder layer over T ranks with tensor parallelism
(`parallelize_module`): attention q/k/v and MLP gate/up `ColwiseParallel` (each rank keeps
1/T of their output features, so 1/T of the heads and of the MLP's width), o_proj and
down_proj `RowwiseParallel` (1/T of their input features; their partial outputs are summed
by an all-reduce); embeddings, norms and the head stay whole on every rank. T = N is TP
alone; T < N is 2-D, a (N/T, T) device mesh whose first dimension FSDP2 shards over.
--loss-parallel splits the head too (ColwiseParallel, its logits left sharded over the
vocabulary) and computes the loss under `loss_parallel()`, which never gathers them.
--sequence-parallel splits what lies between the TP blocks by the sequence: the norms
(`SequenceParallel`), the residual stream, the embeddings' output (the embeddings
`RowwiseParallel`, 1/T of the vocabulary's rows each); each block all-gathers its input
and reduce-scatters its output instead of all-reducing it; the head is column-parallel."""
import functools

import torch
import torch.distributed as dist
from torch.distributed.fsdp import (CPUOffload, CPUOffloadPolicy, FullyShardedDataParallel,
                                    MixedPrecision, MixedPrecisionPolicy, ShardingStrategy)
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch.distributed.tensor import DTensor, Replicate, Shard
from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput,
                                               RowwiseParallel, SequenceParallel, loss_parallel,
                                               parallelize_module)
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.models.llama.modeling_llama import LlamaDecoderLayer

from workload_args import decoder_config, parser, rank_device

try:
    from torch.distributed.fsdp import fully_shard
except ImportError:  # torch 2.4-2.5
    from torch.distributed._composable.fsdp import fully_shard


def arguments():
    p = parser(__doc__, batch=2)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--vocab", type=int, default=4096)
    p.add_argument("--no-reshard", action="store_true", help="reshard_after_forward=False")
    p.add_argument("--size", choices=["small", "7b"], default="small")
    p.add_argument("--meta-init", action="store_true", help="shard on meta, then to_empty")
    p.add_argument("--fsdp1", action="store_true", help="FullyShardedDataParallel, not fully_shard")
    p.add_argument("--mp", choices=["bf16"], help="bf16 parameters, fp32 gradient reduction")
    p.add_argument("--offload", action="store_true", help="shards and AdamW's state on the host")
    p.add_argument("--host-init", action="store_true",
                   help="build the model on the host; FSDP moves it to the GPU")
    p.add_argument("--sharding", choices=list(STRATEGIES), default="full",
                   help="FSDP1's ShardingStrategy")
    p.add_argument("--tp", type=int, default=0, help="tensor-parallel degree (0: none)")
    p.add_argument("--loss-parallel", action="store_true", help="with --tp: the head and loss too")
    p.add_argument("--sequence-parallel", action="store_true", help="with --tp: SequenceParallel")
    args = p.parse_args()
    if (args.loss_parallel or args.sequence_parallel) and not args.tp:
        p.error("--loss-parallel and --sequence-parallel go with --tp")
    if args.fsdp1 and (args.meta_init or args.no_reshard or args.tp):
        p.error("--fsdp1 takes neither --meta-init, --no-reshard nor --tp")
    if args.sharding != "full" and not args.fsdp1:
        p.error("--sharding is FSDP1's (--fsdp1); FSDP2's counterpart is --no-reshard")
    return args


STRATEGIES = {"full": ShardingStrategy.FULL_SHARD, "grad-op": ShardingStrategy.SHARD_GRAD_OP,
              "none": ShardingStrategy.NO_SHARD}


SIZE_7B = dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008,
               num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32)


def config(args):
    """The decoder's LlamaConfig: the small one from the flags, or Llama-2-7B's shape. With
    --tp the small MLP's width is a multiple of T (as Llama's own `multiple_of`): the down
    projection's row-parallel input takes each rank's share to be the same."""
    if args.size == "7b":
        return LlamaConfig(max_position_embeddings=args.seq, **SIZE_7B)
    return decoder_config(args.vocab, args.hidden, args.layers, args.seq, width_multiple=args.tp)


def shard(model, args, mesh=None):
    """fully_shard on each decoder layer, then on the whole model (the root), over MESH
    (None: every rank)."""
    policies = dict(reshard_after_forward=not args.no_reshard, mesh=mesh)
    if args.mp:
        policies["mp_policy"] = MixedPrecisionPolicy(param_dtype=torch.bfloat16,
                                                     reduce_dtype=torch.float32)
    if args.offload:
        policies["offload_policy"] = CPUOffloadPolicy()
    for layer in model.model.layers:
        fully_shard(layer, **policies)
    fully_shard(model, **policies)


# Megatron's split of a decoder layer: the columns of the projections into the heads and
# into the MLP's width, the rows of the projections back out of them.
TP_PLAN = {"self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
           "self_attn.v_proj": ColwiseParallel(), "self_attn.o_proj": RowwiseParallel(),
           "mlp.gate_proj": ColwiseParallel(), "mlp.up_proj": ColwiseParallel(),
           "mlp.down_proj": RowwiseParallel()}


# SequenceParallel on top: each block gathers its input from the sequence's shards and
# scatters its output back to them (as in PyTorch's TP tutorial and torchtitan).
SP_PLAN = {**TP_PLAN, "input_layernorm": SequenceParallel(),
           "post_attention_layernorm": SequenceParallel(),
           "self_attn": PrepareModuleInput(input_kwarg_layouts={"hidden_states": Shard(1)},
                                           desired_input_kwarg_layouts={"hidden_states": Replicate()}),
           "mlp": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
           "self_attn.o_proj": RowwiseParallel(output_layouts=Shard(1)),
           "mlp.down_proj": RowwiseParallel(output_layouts=Shard(1))}


def root_plan(head, sequence):
    """The plan outside the decoder layers: the head column-parallel with HEAD (logits left
    sharded over the vocabulary) or SEQUENCE (its input sharded over the sequence), and with
    SEQUENCE the embeddings row-parallel and the final norm SequenceParallel."""
    plan = {}
    if sequence:
        plan["model.embed_tokens"] = RowwiseParallel(input_layouts=Replicate(),
                                                     output_layouts=Shard(1))
        plan["model.norm"] = SequenceParallel()
    if head or sequence:
        plan["lm_head"] = ColwiseParallel(input_layouts=Shard(1) if sequence else Replicate(),
                                          output_layouts=Shard(-1) if head else Replicate(),
                                          use_local_output=not head)
    return plan


def parallelize(model, tp, on_gpu, head, sequence):
    """Tensor parallelism over TP ranks on each decoder layer, and outside them as
    root_plan says. Returns the mesh FSDP2 shards over: None for TP alone, else the
    data-parallel dimension of a 2-D mesh."""
    world = dist.get_world_size()
    if world % tp:
        raise SystemExit(f"fsdp.py: --tp {tp} does not divide the world size {world}")
    mesh = init_device_mesh("cuda" if on_gpu else "cpu", (world // tp, tp),
                            mesh_dim_names=("dp", "tp"))
    for layer in model.model.layers:
        parallelize_module(layer, mesh["tp"], SP_PLAN if sequence else TP_PLAN)
    if head or sequence:
        parallelize_module(model, mesh["tp"], root_plan(head, sequence))
    return None if tp == world else mesh["dp"]


def wrap_fsdp1(model, device, on_gpu, args):
    """FSDP1: one flat parameter per decoder layer and one for the rest (the root)."""
    policy = functools.partial(transformer_auto_wrap_policy,
                               transformer_layer_cls={LlamaDecoderLayer})
    mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if args.mp else None
    return FullyShardedDataParallel(model, auto_wrap_policy=policy,
                                    sharding_strategy=STRATEGIES[args.sharding],
                                    mixed_precision=mp,
                                    cpu_offload=CPUOffload(offload_params=args.offload),
                                    device_id=device if on_gpu else None, use_orig_params=True)


def param_groups(model):
    """The parameters for AdamW: with TP alone, the sharded ones (DTensors) and the rest
    (plain tensors) in two groups. On a GPU AdamW's default foreach kernels take one group
    at a time and refuse a group that mixes both kinds ("got mixed torch.Tensor and
    DTensor"); the CPU check runs without them."""
    params = list(model.parameters())
    kinds = [[p for p in params if isinstance(p, DTensor) == k] for k in (True, False)]
    return [{"params": group} for group in kinds if group]


def step(model, optimizer, ids, sharded_logits=False, positions=None):
    """One optimizer step on a batch of token ids (their own labels). SHARDED_LOGITS: the
    next-token loss on logits sharded over the vocabulary, under loss_parallel(). POSITIONS:
    the tokens' positions (sequence parallelism: the embeddings' output is this rank's part
    of the sequence, from which the model would count them)."""
    if sharded_logits:
        logits = model(input_ids=ids, position_ids=positions).logits
        with loss_parallel():
            loss = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1),
                                                     ids[:, 1:].flatten())
            loss.backward()
    else:
        model(input_ids=ids, labels=ids, position_ids=positions).loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def main():
    args = arguments()
    device, _, on_gpu = rank_device()
    cfg = config(args)
    built_on = "meta" if args.meta_init else "cpu" if args.host_init else device
    with torch.device(built_on):
        model = LlamaForCausalLM(cfg)
    if args.fsdp1:
        model = wrap_fsdp1(model, device, on_gpu, args)
    elif not args.tp:
        shard(model, args)
    else:
        dp_mesh = parallelize(model, args.tp, on_gpu, args.loss_parallel, args.sequence_parallel)
        if dp_mesh is not None:
            shard(model, args, dp_mesh)
    if args.meta_init:
        model.to_empty(device=device)
    optimizer = torch.optim.AdamW(param_groups(model), lr=1e-4)
    positions = torch.arange(args.seq, device=device)[None] if args.sequence_parallel else None
    for _ in range(args.steps):
        ids = torch.randint(0, cfg.vocab_size, (args.batch, args.seq), device=device)
        step(model, optimizer, ids, args.loss_parallel, positions)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
