"""The PyTorch twin of minidl.zoo.airbench94 and of minidl.recipes.Airbench94's training step
(airbench94's own network and optimizer settings, channels_last, float32), for bench_zoo.py."""

import torch
from torch import nn


class ConvGroup(nn.Module):
    def __init__(self, channels_in, channels_out, momentum):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, padding="same", bias=False)
        self.pool = nn.MaxPool2d(2)
        self.norm1 = nn.BatchNorm2d(channels_out, eps=1e-12, momentum=1 - momentum)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, padding="same", bias=False)
        self.norm2 = nn.BatchNorm2d(channels_out, eps=1e-12, momentum=1 - momentum)
        self.activ = nn.GELU()
        for norm in (self.norm1, self.norm2):
            norm.weight.requires_grad = False   # scale=False

    def forward(self, x):
        x = self.activ(self.norm1(self.pool(self.conv1(x))))
        return self.activ(self.norm2(self.conv2(x)))


class Scale(nn.Module):
    def forward(self, x):
        return x / 9


def airbench94(widths=(64, 256, 256), momentum=0.6):
    net = nn.Sequential(nn.Conv2d(3, 24, 2, padding=0, bias=True), nn.GELU(),
                        ConvGroup(24, widths[0], momentum), ConvGroup(widths[0], widths[1], momentum),
                        ConvGroup(widths[1], widths[2], momentum), nn.MaxPool2d(3), nn.Flatten(),
                        nn.Linear(widths[2], 10, bias=False), Scale())
    net[0].weight.requires_grad = False   # the frozen whitening kernel
    return net.to(memory_format=torch.channels_last)


def optimizer_for(net, batch_size=1024, momentum=0.85):
    """airbench94's torch.optim.SGD: Nesterov, its lr and weight decay in their decoupled form
    (per 1024 examples) converted for the summed loss, BatchNorm biases at 64x the rate."""
    kilostep = 1024 * (1 + 1 / (1 - momentum))
    lr, wd = 11.5 / kilostep, 0.0153 * batch_size / kilostep
    biases = [p for k, p in net.named_parameters() if "norm" in k and p.requires_grad]
    others = [p for k, p in net.named_parameters() if "norm" not in k and p.requires_grad]
    return torch.optim.SGD([dict(params=biases, lr=lr * 64, weight_decay=wd / (lr * 64)),
                            dict(params=others, lr=lr, weight_decay=wd / lr)],
                           momentum=momentum, nesterov=True)


def training_step(batch):
    """A step function for `batch` random images: airbench94's SGD (Nesterov, its lr, weight
    decay, 64x BatchNorm-bias rate) on the label-smoothed summed cross-entropy."""
    net = airbench94().train()
    optimizer = optimizer_for(net)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=0.2, reduction="none")
    x = torch.rand(batch, 3, 32, 32).to(memory_format=torch.channels_last)
    y = torch.randint(0, 10, (batch,))

    def step():
        loss = loss_fn(net(x), y).sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step
