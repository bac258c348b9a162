"""Keras 3's dtype names and promotion: standardize_dtype, is_float_dtype, is_int_dtype,
result_type. minidl computes in float32 (and int32 labels); these answer questions about
the names scripts pass around, as Keras answers them."""

import numpy as np

ALLOWED = ("float16", "float32", "float64", "bfloat16", "uint8", "uint16", "uint32", "uint64",
           "int8", "int16", "int32", "int64", "bool", "string", "complex64", "complex128",
           "float8_e4m3fn", "float8_e5m2", "int4", "uint4")
_PYTHON = {int: "int32", float: "float32", bool: "bool", str: "string"}
_FLOATS = ("bfloat16", "float16", "float32", "float64", "float8_e4m3fn", "float8_e5m2")


def standardize_dtype(dtype):
    """The canonical Keras name of `dtype` (a name, a Python or numpy type, a numpy dtype);
    None gives "float32" (floatx)."""
    if dtype is None:
        return "float32"
    if isinstance(dtype, type) and dtype in _PYTHON:   # (np.dtype("int64") == int holds)
        return _PYTHON[dtype]
    if isinstance(dtype, str) and dtype == "int":
        return "int32"
    if isinstance(dtype, str):
        name = dtype
    elif hasattr(dtype, "name") and not isinstance(dtype, type):
        name = dtype.name                       # np.dtype, framework dtypes
    elif isinstance(dtype, type) and issubclass(dtype, np.generic):
        name = np.dtype(dtype).name
    else:
        name = str(dtype).split(".")[-1]        # torch.float32 and the like
    if name not in ALLOWED:
        raise ValueError(f"Invalid dtype: {dtype}")
    return name


def is_float_dtype(dtype):
    return standardize_dtype(dtype) in _FLOATS


def is_int_dtype(dtype):
    name = standardize_dtype(dtype)
    return name.startswith("int") or name.startswith("uint")


def _bits(name):
    return int("".join(c for c in name if c.isdigit()))


def _promote(a, b):
    """The dtype of an operation on a and b (Keras's JAX-style lattice, for bool, ints and
    floats): bool < ints < floats; mixed signed / unsigned ints widen; float16 with
    bfloat16 gives float32."""
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    if is_float_dtype(a) or is_float_dtype(b):
        if not is_float_dtype(a):
            return b
        if not is_float_dtype(b):
            return a
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        return a if _bits(a) >= _bits(b) else b
    if a.startswith("uint") == b.startswith("uint"):
        return a if _bits(a) >= _bits(b) else b
    signed, unsigned = (a, b) if b.startswith("uint") else (b, a)
    if _bits(signed) > _bits(unsigned):
        return signed
    return f"int{min(64, 2 * _bits(unsigned))}"


def result_type(*dtypes):
    """The dtype Keras gives an operation on values of these dtypes (none: floatx)."""
    if not dtypes:
        return "float32"
    names = [standardize_dtype(d) for d in dtypes]
    result = names[0]
    for name in names[1:]:
        result = _promote(result, name)
    return result


__all__ = ["is_float_dtype", "is_int_dtype", "result_type", "standardize_dtype"]
