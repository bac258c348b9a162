"""keras.utils's host-side helpers: labels, seeds, downloads and model plots.

These work on numpy arrays and files on the host; they are not layers (layers never
compute with numpy).
"""

from . import np_utils
from .file_utils import DownloadError, get_file
from ..preprocessing.image_files import (array_to_img, img_to_array, load_img, max_image_pixels,
                                         save_img, set_max_image_pixels)
from .image_dataset import image_dataset_from_directory
from .model_visualization import model_to_dot, plot_model
from .numerical import normalize, to_categorical
from .random_seed import set_random_seed
from .config import Config
from .data_packing import pack_x_y_sample_weight, split_dataset, unpack_x_y_sample_weight
from .dtypes import standardize_dtype
from .interactive_logging import (disable_interactive_logging, enable_interactive_logging,
                                  is_interactive_logging_enabled)
from .keras_tensors import get_source_inputs, is_keras_tensor
from .progbar import Progbar
from .py_dataset import PyDataset, Sequence
from .sequences import pad_sequences, timeseries_dataset_from_array
from .text_dataset import text_dataset_from_directory
from ..session import clear_session
from ..deserialization import deserialize_keras_object
from ..serialization import serialize_keras_object
from ..custom_objects import (CustomObjectScope, custom_object_scope, get_custom_objects,
                              get_registered_name, get_registered_object,
                              register_keras_serializable)

__all__ = ["DownloadError", "array_to_img", "get_file", "image_dataset_from_directory", "img_to_array",
           "load_img", "max_image_pixels", "save_img", "set_max_image_pixels", "np_utils", "model_to_dot", "normalize", "plot_model",
           "set_random_seed", "to_categorical",
           "Config", "CustomObjectScope", "Progbar", "PyDataset", "Sequence", "clear_session",
           "custom_object_scope", "disable_interactive_logging", "enable_interactive_logging",
           "get_custom_objects", "get_registered_name", "get_registered_object",
           "get_source_inputs", "is_interactive_logging_enabled", "is_keras_tensor",
           "pack_x_y_sample_weight", "register_keras_serializable", "split_dataset",
           "standardize_dtype", "unpack_x_y_sample_weight", "deserialize_keras_object",
           "serialize_keras_object", "pad_sequences", "timeseries_dataset_from_array",
           "text_dataset_from_directory"]
