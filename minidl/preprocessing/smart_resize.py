"""keras.preprocessing.image.smart_resize: crop an image (or a batch) around its centre to the
target's aspect ratio, then resize it, so nothing is stretched: ops.image.resize with
crop_to_aspect_ratio on the active backend, whose crop is Keras's (integer sizes, at least 1
pixel)."""

import numpy as np

from .. import ops


def smart_resize(x, size, interpolation="bilinear", data_format="channels_last", **kwargs):
    """x: (H, W, C) or (N, H, W, C) (channels_first: (C, H, W) / (N, C, H, W)), a numpy array
    (the result is one too) or a tensor; size: (height, width)."""
    kwargs.pop("backend_module", None)
    if kwargs:
        raise TypeError(f"smart_resize() got unexpected keyword arguments: {list(kwargs)}")
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers, but got: {size}.")
    if data_format not in ("channels_last", "channels_first"):
        raise ValueError(f"smart_resize: data_format must be 'channels_last' or 'channels_first', "
                         f"got {data_format!r}")
    img = ops.convert_to_tensor(x) if not ops.is_tensor(x) else x
    if not 3 <= len(img.shape) <= 4:
        raise ValueError("Expected an image array with shape `(height, width, channels)`, or "
                         "`(batch_size, height, width, channels)`, but got input with incorrect "
                         f"rank, of shape {tuple(img.shape)}.")
    # Keras's crop (centre, integer sizes, at least one pixel) is resize's crop_to_aspect_ratio
    img = ops.image.resize(img, (int(size[0]), int(size[1])), interpolation=interpolation,
                           crop_to_aspect_ratio=True, data_format=data_format)
    return ops.convert_to_numpy(img) if isinstance(x, np.ndarray) else img
