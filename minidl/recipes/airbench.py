"""Airbench94: Keller Jordan's CIFAR-10 recipe (arXiv 2404.00498, KellerJordan/cifar10-airbench)
with minidl's public API: 94% test accuracy in about 10 epochs.

    recipe = Airbench94()
    train = recipe.train_data(x_train, y_train, seed=0)        # alternating flip + translate 2
    model = recipe.build(x_train, steps_per_epoch=len(train))   # network, whitening, compile
    model.fit(train, epochs=recipe.epochs, callbacks=recipe.callbacks(len(train)))
    model.evaluate(recipe.normalize(x_test), y_test, batch_size=1000, tta="flip_translate")

The hyperparameters are airbench's (airbench94.py's `hyp`), in its decoupled form (per 1024
examples, independent of momentum); `optimizer()` converts them exactly into the optimizer
airbench steps with, torch.optim.SGD's rule (optimizers.TorchSGD: a buffer of plain gradients,
the rate applied at the step, weight decay added to the gradient), Nesterov momentum 0.85,
wrapped in optimizers.Lookahead (airbench's LookaheadState, saved with the model):
    airbench's loss is the batch sum, minidl's the batch mean (the gradient 1 / batch times
    airbench's), so the rate is airbench's times the batch size and the decay is divided by it:
    learning rate  lr * batch / 1024 / (1 + 1 / (1 - momentum))     (1.5 at batch 1024)
    weight decay   weight_decay / lr                                 (torch's wd / lr / batch)
    BatchNorm biases step at bias_scaler (64) times the rate with weight decay / 64, as
    airbench's parameter group; the whitening kernel is frozen, its bias trains for 3 epochs.
The rate warms up linearly from 0.2x over the first 23% of the steps, then falls linearly to
0.07x. Airbench trains 9.9 epochs: ceil(9.9 * steps per epoch) steps (476 of 48 full batches),
the last epoch cut short; every 5 steps the lookahead pulls toward its slow weights with decay
0.95^5 (step / total)^3, and the weights take the slow ones at the end.
"""

import math

import numpy as np

from .. import callbacks, initializers, losses, optimizers, schedules, zoo
from .data import AlternatingFlipIterator

CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)
CIFAR10_STD = (0.2470, 0.2435, 0.2616)


class Airbench94:
    """The recipe's hyperparameters and the pieces built from them."""

    def __init__(self, epochs=9.9, batch_size=1024, learning_rate=11.5, momentum=0.85, weight_decay=0.0153,
                 bias_scaler=64.0, label_smoothing=0.2, whiten_bias_epochs=3, translate=2,
                 lookahead_period=5, whiten_samples=5000, mean=CIFAR10_MEAN, std=CIFAR10_STD):
        self.epochs, self.batch_size = epochs, batch_size
        self.learning_rate, self.momentum, self.weight_decay = learning_rate, momentum, weight_decay
        self.bias_scaler, self.label_smoothing = bias_scaler, label_smoothing
        self.whiten_bias_epochs, self.translate = whiten_bias_epochs, translate
        self.lookahead_period, self.whiten_samples = lookahead_period, whiten_samples
        self.mean, self.std = mean, std

    # ------------------------------------------------------------------ data
    def train_data(self, x, y, seed=None, prefetch=True):
        """The training batches: x uint8 images (N, 32, 32, 3), y labels."""
        return AlternatingFlipIterator(x, y, batch_size=self.batch_size, translate=self.translate,
                                       seed=seed, mean=self.mean, std=self.std, prefetch=prefetch)

    def normalize(self, x):
        """uint8 images as the network sees them: (x / 255 - mean) / std, float32."""
        mean, std = np.asarray(self.mean, np.float32), np.asarray(self.std, np.float32)
        return ((np.asarray(x, np.float32) / 255.0 - mean) / std).astype(np.float32)

    # ----------------------------------------------------------------- model
    def build(self, x_train, steps_per_epoch, **network):
        """zoo.airbench94(**network), its first layer whitened on x_train, compiled."""
        model = zoo.airbench94(**network)
        self.whiten(model, x_train)
        self.compile(model, steps_per_epoch)
        return model

    def whiten(self, model, x_train):
        """The 2x2 patch-whitening kernel of layer "whiten", from the first whiten_samples images."""
        sample = self.normalize(x_train[:self.whiten_samples])
        initializers.initialize_from_data(model.get_layer("whiten"), sample,
                                          kernel=initializers.PatchWhitening((2, 2), epsilon=5e-4))

    def compile(self, model, steps_per_epoch):
        model.compile(optimizer=self.optimizer(self.total_steps(steps_per_epoch)),
                      loss=losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                label_smoothing=self.label_smoothing),
                      metrics=["accuracy"])

    def total_steps(self, steps_per_epoch):
        """The optimizer steps of the whole run: ceil(epochs * steps_per_epoch), as airbench."""
        return math.ceil(self.epochs * steps_per_epoch)

    @property
    def fit_epochs(self):
        """The epochs= to give fit (the last one stops at total_steps)."""
        return math.ceil(self.epochs)

    def learning_rate_schedule(self, total_steps):
        rate = self.learning_rate * self.batch_size / 1024 / (1 + 1 / (1 - self.momentum))
        warmup = max(int(total_steps * 0.23), 1)   # a warm-up of at least one step
        return schedules.PolynomialDecay(0.2 * rate, max(total_steps - warmup, 1), end_learning_rate=0.07 * rate,
                                         power=1.0, warmup_target=rate, warmup_steps=warmup)

    def optimizer(self, total_steps):
        """Lookahead(TorchSGD): airbench's torch.optim.SGD and LookaheadState."""
        sgd = optimizers.TorchSGD(
            self.learning_rate_schedule(total_steps), momentum=self.momentum, nesterov=True,
            weight_decay=self.weight_decay / self.learning_rate,
            # the whitening kernel is frozen; BatchNorm biases step 64x (airbench's bias_scaler)
            learning_rate_multipliers={"^whiten/kernel$": 0.0, "_norm[12]/beta$": self.bias_scaler})
        return optimizers.Lookahead(sgd, sync_period=self.lookahead_period,
                                    decay=optimizers.PowerRamp(0.95 ** 5, total_steps, power=3))

    def callbacks(self, steps_per_epoch):
        """FreezeWeights for the whitening bias after whiten_bias_epochs, and the stop at
        total_steps. Both decide from the epoch and step counts, so a resumed run (a model
        file holds the optimizer's lookahead state) passes them again."""
        return [callbacks.FreezeWeights("^whiten/bias$", from_epoch=self.whiten_bias_epochs),
                StopAtStep(self.total_steps(steps_per_epoch))]


class StopAtStep(callbacks.Callback):
    """Ends fit once the optimizer has made `steps` steps (a fractional epoch count)."""

    def __init__(self, steps):
        super().__init__()
        self.steps = steps

    def on_train_batch_end(self, batch, logs=None):
        if self.model.optimizer.iterations >= self.steps:
            self.model.stop_training = True
