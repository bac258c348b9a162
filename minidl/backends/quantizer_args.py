"""The argument checks shared by every backend's quantize_forward / quantize_backward (the
contract is in base.py): the quantizer's code, its scalar parameter and its (1,) statistic."""

import math

from .base import QUANTIZERS
from .checks import check_shape


def quantizer_code(op, name, param, stat, n):
    """(code, param as a float) of quantizer `name` after checking its arguments."""
    if name not in QUANTIZERS:
        raise ValueError(f"{op}: name must be one of {QUANTIZERS}, got {name!r}")
    if isinstance(param, bool) or not isinstance(param, (int, float)) or math.isnan(param):
        raise TypeError(f"{op} ({name}): param must be a number, got {param!r}")
    if name == "dorefa_weights" and stat is None:
        raise ValueError(f"{op} (dorefa_weights): stat must be a (1,) tensor holding max |x|")
    if stat is not None:
        if name not in ("ste_tern", "dorefa_weights"):
            raise ValueError(f"{op} ({name}): only ste_tern and dorefa_weights take a stat tensor")
        check_shape(op, "stat", stat, (1,))
    if name.startswith("dorefa") and op == "quantize_forward" and not param >= 1:
        raise ValueError(f"{op} ({name}): param must be the number of levels 2^k_bit - 1 >= 1, "
                         f"got {param!r}")
    if n == 0 and stat is not None and name == "ste_tern":
        raise ValueError(f"{op} (ste_tern): Ternary Weight Networks' threshold needs a non-empty x")
    return QUANTIZERS.index(name), float(param)
