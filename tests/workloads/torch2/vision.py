#!/usr/bin/env python3
"""An image classifier trained on random images: a timm model (ConvNeXt, ViT) or a
torchvision one; AdamW; cross-entropy. The device is torch.accelerator's, as in today's
pytorch/examples.

    vision.py --model timm:convnext_atto|timm:vit_tiny_patch16_224|resnet50|... [--batch B]
              [--image-size N] [--classes N] [--amp bf16|fp16] [--checkpointing] [--compile]

--checkpointing: timm's set_grad_checkpointing(), or for torchvision ResNets
torch.utils.checkpoint around each residual stage (use_reentrant=False)."""
import torch
import torch.nn as nn
import torch.utils.checkpoint
import torchvision

from workload_args import autocast, grad_scaler, optimizer_step, parser, training_device


class CheckpointedStage(nn.Module):
    """Recomputes the stage's activations in backward instead of keeping them."""

    def __init__(self, stage):
        super().__init__()
        self.stage = stage

    def forward(self, x):
        return torch.utils.checkpoint.checkpoint(self.stage, x, use_reentrant=False)


def build(name, classes, checkpointing):
    if name.startswith("timm:"):
        import timm
        model = timm.create_model(name[5:], pretrained=False, num_classes=classes)
        if checkpointing:
            model.set_grad_checkpointing(True)
        return model
    model = getattr(torchvision.models, name)(weights=None, num_classes=classes)
    if checkpointing:
        for layer in ("layer1", "layer2", "layer3", "layer4"):
            setattr(model, layer, CheckpointedStage(getattr(model, layer)))
    return model


def arguments(argv=None):
    p = parser(__doc__, batch=2)
    p.add_argument("--model", required=True)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--classes", type=int, default=1000)
    return p.parse_args(argv)


def build_model(args):
    return build(args.model, args.classes, args.checkpointing)


def main():
    args = arguments()
    device = training_device(torch.accelerator.current_accelerator())
    model = build_model(args).to(device)
    if args.compile:
        model = torch.compile(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = grad_scaler(args)
    criterion = nn.CrossEntropyLoss()
    for step in range(args.steps):
        x = torch.randn(args.batch, 3, args.image_size, args.image_size, device=device)
        y = torch.randint(0, args.classes, (args.batch,), device=device)
        with autocast(args):
            loss = criterion(model(x), y)
        optimizer_step(loss, optimizer, scaler)
        print(f"step {step} loss {loss.item():.3f}", flush=True)


if __name__ == "__main__":
    main()
