"""AlternatingFlipIterator: airbench's training data order, flips and translations.

Every image is mirrored left-right by a coin drawn once (from the seed), and in every odd
epoch all of them take the other side, so that each image is seen both ways in every two
epochs ("alternating flip", airbench section 3.6: more diverse than a fresh coin per epoch).
Translation by up to `translate` pixels per axis: the images are reflect-padded once
(PyTorch's reflect, the border pixel not repeated) and a random window is cut each epoch.
Batches are built by ArrayIterator's C kernel (no per-image Python), optionally in a
background thread; with drop_last the last partial batch of each epoch is left out.
"""

import numpy as np

from ..data import ArrayIterator, Augment

_STATE_VERSION = 1


class AlternatingFlipIterator(ArrayIterator):
    """x (N, H, W, C) images, y labels; mean, std, batch_size, shuffle, seed, prefetch and
    kernel as ArrayIterator's. translate: the largest shift in pixels (0: none)."""

    def __init__(self, x, y=None, batch_size=1024, translate=2, shuffle=True, seed=None, mean=None,
                 std=None, drop_last=True, prefetch=True, kernel="auto"):
        if isinstance(translate, bool) or not isinstance(translate, (int, np.integer)) or translate < 0:
            raise ValueError(f"AlternatingFlipIterator: translate must be an int >= 0, got {translate!r}")
        x = np.asarray(x)
        if x.ndim != 4:
            raise ValueError(f"AlternatingFlipIterator: x must be (N, H, W, C) images, got shape {x.shape}")
        if translate and min(x.shape[1:3]) <= translate:
            raise ValueError(f"AlternatingFlipIterator: translate={translate} needs images larger than "
                             f"{translate} pixels, got {x.shape[1]}x{x.shape[2]}")
        height, width = x.shape[1:3]
        padded = np.pad(x, ((0, 0), (translate,) * 2, (translate,) * 2, (0, 0)), mode="reflect") \
            if translate else x
        super().__init__(padded, y, batch_size=batch_size, shuffle=shuffle, seed=seed,
                         augment=Augment(crop=(height, width)), mean=mean, std=std, prefetch=prefetch,
                         kernel=kernel)
        self.translate, self.drop_last = int(translate), bool(drop_last)
        if self.drop_last and len(self) == 0:
            raise ValueError(f"AlternatingFlipIterator: drop_last with {self.num_samples} images leaves "
                             f"no batch of {self.batch_size}")
        # the coins come from their own stream, so that they do not shift the order's draws
        self._flip_seed = int(np.random.default_rng(seed).integers(2 ** 62))
        self._epoch = 0

    def __len__(self):
        if getattr(self, "drop_last", False):
            return self.num_samples // self.batch_size
        return super().__len__()

    def base_flips(self):
        """The epoch-0 coin of every image (uint8, 1 = mirrored)."""
        return (np.random.default_rng(self._flip_seed).random(self.num_samples) < 0.5).astype(np.uint8)

    def on_epoch_begin(self, epoch=None):
        if epoch is not None and self._pending is None:
            self._epoch = int(epoch)
        super().on_epoch_begin(epoch)

    def __iter__(self):
        epoch = iter(super().__iter__())   # the plan is drawn here, for self._epoch
        self._epoch += 1
        return epoch

    def _draw_plan(self):
        order, crop_y, crop_x, _ = super()._draw_plan()
        return order, crop_y, crop_x, self.base_flips() ^ np.uint8(self._epoch & 1)

    def get_state(self):
        return {"version": _STATE_VERSION, "iterator": super().get_state(),
                "flip_seed": self._flip_seed, "epoch": self._epoch}

    def set_state(self, state):
        if not isinstance(state, dict) or state.get("version") != _STATE_VERSION or \
                not isinstance(state.get("flip_seed"), int) or not isinstance(state.get("epoch"), int):
            raise ValueError(f"AlternatingFlipIterator.set_state: expected a dict from get_state(), got {state!r}")
        super().set_state(state.get("iterator"))
        self._flip_seed, self._epoch = state["flip_seed"], state["epoch"]

    def __repr__(self):
        return f"Alternating{super().__repr__()[:-1]}, translate={self.translate}, drop_last={self.drop_last})"
