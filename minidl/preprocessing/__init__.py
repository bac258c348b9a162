"""Keras 2's keras.preprocessing: the image data pipeline (minidl.preprocessing.image)."""

from . import image

__all__ = ["image"]
