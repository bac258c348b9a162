"""Eager calls on one image (H, W, C), as Keras 3's image preprocessing layers take them: the
image runs as a batch of one and comes back without the batch axis."""

import numpy as np


class UnbatchedImages:
    """Mixed into an image layer before its base class: `layer(image)` with a rank-3 array
    returns the layer's output for that image alone."""

    def __call__(self, inputs, training=None):
        if isinstance(inputs, np.ndarray) and inputs.ndim == 3:
            return super().__call__(inputs[np.newaxis], training)[0]
        return super().__call__(inputs, training)
