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

__all__ = ["DownloadError", "array_to_img", "get_file", "image_dataset_from_directory", "img_to_array",
           "load_img", "max_image_pixels", "save_img", "set_max_image_pixels", "np_utils", "model_to_dot", "normalize", "plot_model",
           "set_random_seed", "to_categorical"]
