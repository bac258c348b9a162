"""EinsumDense: Keras's dense layer written as an einsum equation. minidl runs the equations
that are one matrix product after reshapes, the kind Keras's MultiHeadAttention and the
transformer examples use: the input's trailing axes contract with the kernel's leading axes,
and the output is the input's leading axes followed by the kernel's free axes
("abc,cde->abde", "abcd,cde->abe", "ab,bc->ac", "abc,cd->abd")."""

from .. import activations
from .base import Layer, count_elements, format_shape
from .core import ActivationMixin


def parse_equation(equation, owner):
    """(batch_axes, contracted, free) letters of `equation`, after checking it is one matrix
    product: input = batch + contracted, kernel = contracted + free, output = batch + free."""
    try:
        operands, output = equation.replace(" ", "").split("->")
        x, kernel = operands.split(",")
    except ValueError:
        raise ValueError(f"{owner}: equation must read 'input,kernel->output', got {equation!r}") from None
    contracted = "".join(c for c in x if c in kernel and c not in output)
    batch = x[:len(x) - len(contracted)]
    free = kernel[len(contracted):]
    if (not x or len(set(x + kernel)) != len(set(x)) + len(set(kernel)) - len(contracted)
            or x != batch + contracted or kernel != contracted + free or output != batch + free
            or len(set(output)) != len(output) or not batch):
        raise ValueError(f"{owner}: minidl runs equations whose input's trailing axes contract with "
                         "the kernel's leading ones and whose output is the input's other axes then "
                         f"the kernel's ('abc,cde->abde', 'abcd,cde->abe', 'ab,bc->ac'), got {equation!r}")
    return batch, contracted, free


class EinsumDense(ActivationMixin, Layer):
    """Keras EinsumDense(equation, output_shape, activation=None, bias_axes=None, ...): kernel
    of the kernel operand's shape, bias over `bias_axes` (the trailing output axes from the
    first bias letter on, as Keras shapes it; minidl takes bias_axes that are the kernel's free
    axes from some letter to the end). output_shape excludes the batch axis; None entries take
    the input's size."""

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, lora_rank=None, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self._set_weight_options(kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        if lora_rank is not None:
            raise ValueError(f"{self.describe()}: lora_rank is not supported by minidl, got {lora_rank!r}")
        self.equation = equation
        self._batch, self._contracted, self._free = parse_equation(equation, self.describe())
        shape = (output_shape,) if isinstance(output_shape, int) else tuple(output_shape)
        if len(shape) != len(self._batch) + len(self._free) - 1:
            raise ValueError(f"{self.describe()}: output_shape {output_shape!r} must have "
                             f"{len(self._batch) + len(self._free) - 1} entries (the output's axes "
                             f"without the batch axis) for {equation!r}")
        self.partial_output_shape = shape
        self.activation = activations.resolve(activation, self.describe())
        self.bias_axes = bias_axes
        if bias_axes and (not self._free.endswith(bias_axes) or not bias_axes):
            raise ValueError(f"{self.describe()}: bias_axes must be the kernel's free output axes from "
                             f"one letter to the end (a suffix of {self._free!r}), got {bias_axes!r}")
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer

    def get_config(self):
        return dict(super().get_config(), equation=self.equation,
                    output_shape=list(self.partial_output_shape), activation=activations.config_name(self._activation),
                    bias_axes=self.bias_axes, kernel_initializer=str(self.kernel_initializer),
                    bias_initializer=str(self.bias_initializer), **self._weight_options_config())

    def compute_output_shape(self, input_shape):
        batch_sizes = list(input_shape[:len(self._batch) - 1])
        given = list(self.partial_output_shape)
        out = [g if g is not None else (batch_sizes[i] if i < len(batch_sizes) else None)
               for i, g in enumerate(given)]
        return tuple(out)

    def build(self, input_shape):
        if len(input_shape) != len(self._batch) + len(self._contracted) - 1:
            raise ValueError(f"{self.describe()}: equation {self.equation!r} needs inputs of rank "
                             f"{len(self._batch) + len(self._contracted)} (batch included), got "
                             f"shape {format_shape(input_shape)}")
        contracted = tuple(input_shape[len(self._batch) - 1:])
        out = self.compute_output_shape(input_shape)
        free = tuple(out[len(self._batch) - 1:])
        if None in contracted or None in free:
            raise ValueError(f"{self.describe()}: the contracted and kernel axes must be known, got input "
                             f"shape {format_shape(input_shape)} and output shape {format_shape(out)}")
        self._k, self._n = count_elements(contracted), count_elements(free)
        self.kernel = self.add_weight("kernel", contracted + free, self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        if self.bias_axes:
            bias_shape = free[len(free) - len(self.bias_axes):]
            self._bias_repeat = count_elements(free) // count_elements(bias_shape)
            self.bias = self.add_weight("bias", bias_shape, self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def forward(self, call, x, training):
        b = self.backend
        call.x_shape = shape = b.shape(x)
        rows = count_elements(shape) // self._k
        call.x2 = b.reshape(x, (rows, self._k))
        z = call.buffer("z", (rows, self._n))
        b.gemm(z, call.x2, b.reshape(self.kernel.value, (self._k, self._n)))
        if self.bias_axes:
            # a bias over the trailing free axes repeats over the leading free ones
            z3 = b.reshape(z, (rows * self._bias_repeat, self._n // self._bias_repeat))
            b.bias_add(z3, z3, b.reshape(self.bias.value, (self._n // self._bias_repeat,)))
        out_shape = (shape[0],) + tuple(shape[1:len(self._batch)]) + tuple(
            self.output_shape[len(self._batch) - 1:])
        return b.reshape(self._activate(call, z), out_shape)

    def _deactivate(self, call, dout):
        rows = count_elements(self.backend.shape(dout)) // self._n
        return super()._deactivate(call, self.backend.reshape(dout, (rows, self._n)))

    def backward_preactivation(self, call, dz):
        b = self.backend
        rows = count_elements(b.shape(dz)) // self._n
        dz = b.reshape(dz, (rows, self._n))
        if self.trainable:
            b.gemm(b.reshape(call.grad(self.kernel), (self._k, self._n)), call.x2, dz, trans_a=True)
            if self.bias_axes:
                width = self._n // self._bias_repeat
                b.bias_grad(b.reshape(call.grad(self.bias), (width,)),
                            b.reshape(dz, (rows * self._bias_repeat, width)))
        if not call.input_grad_needed:
            return None
        dx = call.buffer("dx", (rows, self._k))
        b.gemm(dx, dz, b.reshape(self.kernel.value, (self._k, self._n)), trans_b=True)
        return b.reshape(dx, call.x_shape)
