#!/usr/bin/env bash
# Image models under `xmem estimate`, torch 2.x from the venv on PATH, device from
# torch.accelerator: timm ConvNeXt under fp16 autocast + GradScaler("cuda"), timm ViT under
# bf16 autocast, torchvision ResNet-18 with torch.utils.checkpoint around its stages. Same
# checks as 96.
source "$(dirname "$0")/96-torch2-workloads-common.bash"
both convnext-fp16 vision.py --model timm:convnext_atto --image-size 64 --classes 10 --amp fp16
both vit-bf16 vision.py --model timm:vit_tiny_patch16_224 --batch 2 --classes 10 --amp bf16
both resnet18-ckpt vision.py --model resnet18 --image-size 64 --classes 10 --checkpointing
finish
