#!/usr/bin/env python3
"""Image classification with torchvision models, written as a GPU user writes it.

Small:  vision.py --model resnet18 --batch-size 2 --image-size 64
Real:   vision.py --model resnet50 --batch-size 32 --image-size 224
"""
import torch
import torch.nn as nn
import torchvision

import common

MODELS = {
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "vgg16": torchvision.models.vgg16,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "mobilenet_v3": torchvision.models.mobilenet_v3_large,
    "convnext_tiny": torchvision.models.convnext_tiny,
    "efficientnet_b0": torchvision.models.efficientnet_b0,
}


def main():
    p = common.parser(__doc__)
    p.add_argument("--model", default="resnet18", choices=sorted(MODELS))
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--classes", type=int, default=1000)
    args = p.parse_args()

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(0)

    model = MODELS[args.model](num_classes=args.classes)
    n = args.batch_size * args.steps_per_epoch
    data = common.loader(common.RandomImages(n, args.image_size, args.classes), args)

    def to_device(batch, device):
        images, labels = batch
        return images.to(device, non_blocking=True), labels.to(device, non_blocking=True)

    common.train(model, data, nn.CrossEntropyLoss(), args, to_device)


if __name__ == "__main__":
    main()
