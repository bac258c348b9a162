"""keras.preprocessing: the image data pipeline (minidl.preprocessing.image) and Keras 3's
dataset makers (the ones keras.utils has too)."""

from . import image, sequence
from ..utils.image_dataset import image_dataset_from_directory
from ..utils.sequences import timeseries_dataset_from_array
from ..utils.text_dataset import text_dataset_from_directory

__all__ = ["image", "sequence", "image_dataset_from_directory", "text_dataset_from_directory",
           "timeseries_dataset_from_array"]
