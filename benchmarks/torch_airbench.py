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


def optimizer_for(net, batch_size=1024, momentum=0.85, learning_rate=11.5, weight_decay=0.0153,
                  bias_scaler=64.0):
    """airbench94's torch.optim.SGD: Nesterov, its lr and weight decay in their decoupled form
    (per 1024 examples) converted for the summed loss, BatchNorm biases at bias_scaler x the
    rate (their decay divided by it)."""
    kilostep = 1024 * (1 + 1 / (1 - momentum))
    lr, wd = learning_rate / kilostep, weight_decay * batch_size / kilostep
    biases = [p for k, p in net.named_parameters() if "norm" in k and p.requires_grad]
    others = [p for k, p in net.named_parameters() if "norm" not in k and p.requires_grad]
    return torch.optim.SGD([dict(params=biases, lr=lr * bias_scaler, weight_decay=wd / (lr * bias_scaler)),
                            dict(params=others, lr=lr, weight_decay=wd / lr)],
                           momentum=momentum, nesterov=True)


def lr_factor(total_steps):
    """airbench94's LambdaLR factor at a step: 0.2 -> 1 linearly over the first 23% of the
    steps, then 1 -> 0.07 at the end."""
    warmup = int(total_steps * 0.23)

    def factor(step):
        if step < warmup:
            return 0.2 + 0.8 * step / warmup
        return 1.0 - 0.93 * (step - warmup) / (total_steps - warmup)
    return factor


class LookaheadState:
    """airbench94's lookahead: slow copies of the net's whole state_dict (BatchNorm statistics
    included); pull(decay) moves them toward the net by 1 - decay and puts them in the net."""

    def __init__(self, net):
        self.net = net
        self.slow = {k: v.clone() for k, v in net.state_dict().items()}

    @staticmethod
    def decay(step, total_steps):
        return 0.95 ** 5 * (step / total_steps) ** 3

    @torch.no_grad()
    def pull(self, decay):
        for key, value in self.net.state_dict().items():
            if value.dtype.is_floating_point:
                self.slow[key].lerp_(value, 1 - decay)
                value.copy_(self.slow[key])


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
