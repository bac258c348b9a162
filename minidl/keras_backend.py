"""The `keras.backend` namespace as far as it means something here.

Not to be confused with `minidl.backends` (the numpy / cpu / opencl compute backends):
this module answers the configuration questions Keras scripts ask through `keras.backend`
(often imported as `K`). minidl computes in float32, channels_last, with Keras's fuzz
factor 1e-7; the setters accept exactly those values, and say so for any other, rather
than pretending to switch.
"""

from . import naming
from .backends import get_backend
from .keras2_math import *          # noqa: F401,F403  (K.sqrt, K.sum, ... of Keras 2 scripts)
from .keras2_math import __all__ as _MATH

from .utils.dtypes import is_float_dtype, is_int_dtype, result_type, standardize_dtype  # noqa: F401
from .utils.keras_tensors import is_keras_tensor  # noqa: F401

from .session import clear_session  # noqa: F401

_EPSILON = [1e-7]


def image_data_format():
    """'channels_last': images are (batch, height, width, channels), as Keras's default."""
    return "channels_last"


def set_image_data_format(data_format):
    """Accepts 'channels_last' only: minidl's layers have no channels_first kernels."""
    if data_format != "channels_last":
        raise ValueError(f"backend.set_image_data_format: minidl supports only "
                         f"'channels_last' (batch, height, width, channels), got {data_format!r}")


def floatx():
    """'float32': every tensor minidl computes with."""
    return "float32"


def set_floatx(value):
    if value != "float32":
        raise ValueError(f"backend.set_floatx: minidl computes in float32 only, got {value!r}")


def epsilon():
    """The fuzz factor that scripts add to avoid dividing by zero (Keras's default 1e-7)."""
    return _EPSILON[0]


def set_epsilon(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ValueError(f"backend.set_epsilon: value must be a positive number, got {value!r}")
    _EPSILON[0] = float(value)


def backend():
    """The name of the active compute backend ('numpy', 'cpu' or 'opencl'); Keras returns
    its framework's name here ('tensorflow', 'torch', ...)."""
    return get_backend().name


def get_uid(prefix=""):
    """1 the first time for `prefix`, then 2, 3, ... (clear_session starts again), as Keras."""
    return naming.next_uid(prefix)


__all__ = ["backend", "clear_session", "epsilon", "floatx", "image_data_format", "get_uid",
           "is_float_dtype", "is_int_dtype", "is_keras_tensor", "result_type", "standardize_dtype",
           "set_epsilon", "set_floatx", "set_image_data_format"] + list(_MATH)
