"""keras.utils.np_utils, the Keras 2 module older scripts import to_categorical from."""

from .numerical import normalize, to_categorical

__all__ = ["normalize", "to_categorical"]
