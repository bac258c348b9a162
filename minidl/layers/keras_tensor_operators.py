"""Python operators on a functional model's symbolic tensors, as Keras 3's KerasTensor has them:
each is the minidl.ops function Keras calls (`x / y` is ops.true_divide, `x[:, 0]` ops.get_item,
`~x` ops.logical_not), recorded as a graph node (op_nodes.py). `==` stays identity, as in Keras,
so that symbolic tensors remain usable in sets and `in` tests."""

from .. import ops


def _binary(name, reflected=False):
    def operator(self, other):
        fn = getattr(ops, name)
        return fn(other, self) if reflected else fn(self, other)
    operator.__name__ = name
    return operator


def _unary(name):
    def operator(self):
        return getattr(ops, name)(self)
    operator.__name__ = name
    return operator


class SymbolicOperators:
    """The operators of KerasTensor (a mixin)."""

    __array_priority__ = 100   # numpy defers `array + tensor` to the tensor

    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("subtract"), _binary("subtract", True)
    __mul__, __rmul__ = _binary("multiply"), _binary("multiply", True)
    __truediv__, __rtruediv__ = _binary("true_divide"), _binary("true_divide", True)
    __floordiv__, __rfloordiv__ = _binary("floor_divide"), _binary("floor_divide", True)
    __mod__, __rmod__ = _binary("mod"), _binary("mod", True)
    __pow__, __rpow__ = _binary("power"), _binary("power", True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __and__, __rand__ = _binary("logical_and"), _binary("logical_and", True)
    __or__, __ror__ = _binary("logical_or"), _binary("logical_or", True)
    __xor__, __rxor__ = _binary("logical_xor"), _binary("logical_xor", True)
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")
    __neg__, __abs__, __invert__ = _unary("negative"), _unary("absolute"), _unary("logical_not")

    def __pos__(self):
        return self

    def __getitem__(self, key):
        return ops.get_item(self, key)

    def __round__(self, ndigits=None):
        return ops.round(self, decimals=ndigits or 0)

    def __iter__(self):
        # without it, Python would iterate by indexing (x[0], x[1], ...) forever
        raise TypeError("Iterating over a symbolic KerasTensor is not supported")

    __hash__ = object.__hash__
