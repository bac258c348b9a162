"""Data-dependent initializers: weights computed from the data a layer will see.

A DataInitializer is fitted with `adapt(data)` and then gives values for a weight shape, like
any initializer. `initialize_from_data(layer, data, kernel=...)` does both for a built layer
and assigns the result, so a recipe can build its network first and fit, for example, a
whitening convolution to a sample of the training images afterwards (airbench does this).
They are not named initializers: a saved model keeps the fitted values as weights.
"""

import numpy as np


class DataInitializer:
    """Base class: `adapt(data)` fits it (returns self); `__call__(shape)` gives the values."""

    def adapt(self, data):
        raise NotImplementedError(f"{type(self).__name__} must implement adapt(data)")

    def __call__(self, shape):
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(shape)")


class PatchWhitening(DataInitializer):
    """A kernel (kh, kw, C, 2 * kh * kw * C) that whitens kh x kw patches (airbench's first conv).

    adapt(images (N, H, W, C)) estimates the uncentred covariance of every kh x kw x C patch
    (float64, `chunk` images at a time) and its eigendecomposition; output channel j < kh*kw*C
    is the j-th eigenvector (largest eigenvalue first) scaled by 1 / sqrt(eigenvalue + epsilon),
    and channel kh*kw*C + j is its negative, so a following GELU keeps both signs. The patch is
    flattened in the kernel's (kh, kw, C) order.
    """

    def __init__(self, kernel_size=(2, 2), epsilon=5e-4, chunk=500):
        if isinstance(kernel_size, int):
            kernel_size = (kernel_size, kernel_size)
        kernel_size = tuple(kernel_size)
        if len(kernel_size) != 2 or not all(isinstance(k, int) and k > 0 for k in kernel_size):
            raise ValueError(f"PatchWhitening: kernel_size must be a positive int or two, got {kernel_size!r}")
        if not epsilon >= 0:
            raise ValueError(f"PatchWhitening: epsilon must be >= 0, got {epsilon!r}")
        self.kernel_size, self.epsilon, self.chunk = kernel_size, float(epsilon), int(chunk)
        self.eigenvalues = self.eigenvectors = None   # descending; vectors as columns

    def adapt(self, images):
        images = np.asarray(images)
        kh, kw = self.kernel_size
        if images.ndim != 4 or images.shape[1] < kh or images.shape[2] < kw or len(images) == 0:
            raise ValueError(f"PatchWhitening.adapt: images must be (N, H, W, C) with N > 0 and "
                             f"H, W >= the kernel size {self.kernel_size}, got shape {images.shape}")
        size = kh * kw * images.shape[3]
        covariance, count = np.zeros((size, size)), 0
        for start in range(0, len(images), self.chunk):
            part = images[start:start + self.chunk].astype(np.float64)
            windows = np.lib.stride_tricks.sliding_window_view(part, (kh, kw), axis=(1, 2))
            # windows (n, H-kh+1, W-kw+1, C, kh, kw) -> patches (*, kh, kw, C) flattened
            patches = windows.transpose(0, 1, 2, 4, 5, 3).reshape(-1, size)
            covariance += patches.T @ patches
            count += len(patches)
        values, vectors = np.linalg.eigh(covariance / count)
        self.eigenvalues, self.eigenvectors = values[::-1], vectors[:, ::-1]
        return self

    def __call__(self, shape):
        if self.eigenvectors is None:
            raise ValueError("PatchWhitening: call adapt(images) before taking values")
        kh, kw = self.kernel_size
        size = len(self.eigenvalues)
        expected = (kh, kw, size // (kh * kw), 2 * size)
        if tuple(shape) != expected:
            raise ValueError(f"PatchWhitening: fitted for kernels of shape {expected}, asked for {tuple(shape)}")
        scaled = self.eigenvectors / np.sqrt(np.maximum(self.eigenvalues, 0.0) + self.epsilon)
        return np.concatenate([scaled, -scaled], axis=1).reshape(expected)


def initialize_from_data(layer, data, **initializers):
    """Fit each DataInitializer given by weight name (kernel=PatchWhitening(), ...) to `data`,
    what `layer` receives (for a model's first layer, its input), and assign the values to
    that weight of the built layer. The other weights keep their values."""
    owner = f"initialize_from_data({getattr(layer, 'name', layer)!r})"
    weights = list(getattr(layer, "weights", []))
    names = [w.name for w in weights]
    if not weights or any(w.value is None for w in weights):
        raise ValueError(f"{owner}: the layer must be built (part of a built model) first")
    values = layer.get_weights()
    for name, initializer in initializers.items():
        if name not in names:
            raise ValueError(f"{owner}: the layer has no weight {name!r}; its weights are {names}")
        if not isinstance(initializer, DataInitializer):
            raise TypeError(f"{owner}: {name}= must be a DataInitializer, got {type(initializer).__name__}")
        index = names.index(name)
        values[index] = initializer.adapt(data)(weights[index].shape)
    layer.set_weights(values)
    return layer
