"""to_categorical and normalize: host-side array helpers, as in keras.utils."""

import numpy as np


def to_categorical(x, num_classes=None):
    """One-hot encode class indices: (..., ) or (..., 1) integers -> (..., num_classes).

    As Keras: a trailing axis of size 1 is dropped first (CIFAR-10's (N, 1) labels give
    (N, 10)), num_classes defaults to max(x) + 1 and the result is float64. Unlike Keras,
    labels that are not whole numbers or lie outside 0..num_classes-1 are an error instead
    of being truncated or raising an IndexError.
    """
    labels = np.asarray(x)
    if labels.dtype == object or not (np.issubdtype(labels.dtype, np.integer)
                                      or np.issubdtype(labels.dtype, np.floating)
                                      or labels.dtype == bool):
        raise TypeError(f"to_categorical: x must hold integer class indices, got dtype "
                        f"{labels.dtype}")
    if np.issubdtype(labels.dtype, np.floating):
        if not np.all(np.isfinite(labels)) or np.any(labels != np.round(labels)):
            raise ValueError("to_categorical: x must hold whole-number class indices, got "
                             f"values such as {labels[labels != np.round(labels)][:3].tolist()}")
    labels = labels.astype(np.int64)
    shape = labels.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    flat = labels.reshape(-1)
    if num_classes is None:
        if flat.size == 0:
            raise ValueError("to_categorical: x is empty; pass num_classes")
        num_classes = int(flat.max()) + 1
    elif isinstance(num_classes, bool) or not isinstance(num_classes, (int, np.integer)) \
            or num_classes <= 0:
        raise ValueError(f"to_categorical: num_classes must be a positive int, got {num_classes!r}")
    num_classes = int(num_classes)
    if flat.size and (flat.min() < 0 or flat.max() >= num_classes):
        bad = flat[(flat < 0) | (flat >= num_classes)]
        raise ValueError(f"to_categorical: class indices must lie in 0..{num_classes - 1} "
                         f"(num_classes={num_classes}), got {bad[:5].tolist()}")
    out = np.zeros((flat.size, num_classes))
    out[np.arange(flat.size), flat] = 1.0
    return out.reshape(shape + (num_classes,))


def normalize(x, axis=-1, order=2):
    """x divided by its `order`-norm along `axis` (all-zero slices are left at zero)."""
    x = np.asarray(x)
    if not (np.issubdtype(x.dtype, np.number) or x.dtype == bool):
        raise TypeError(f"normalize: x must be numeric, got dtype {x.dtype}")
    if x.ndim == 0:
        raise ValueError("normalize: x must have at least one axis, got a scalar")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) \
            or not -x.ndim <= axis < x.ndim:
        raise ValueError(f"normalize: axis must be an int in [{-x.ndim}, {x.ndim}) for x of "
                         f"shape {x.shape}, got {axis!r}")
    norm = np.linalg.norm(x, ord=order, axis=axis, keepdims=True)
    norm[norm == 0] = 1
    return x / norm


__all__ = ["normalize", "to_categorical"]
