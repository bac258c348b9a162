"""A layer's activation given as a function of your own (`Dense(8, activation=my_fn)`, with
my_fn written with minidl.ops, as Keras allows): the layer's fused affine part runs as always,
then the function runs on minidl Tensors on a tape of the call's own, whose gradient rule is
the activation's backward. On every backend, as the function's ops are."""

from .. import autodiff, ops
from ..autodiff import Tensor


def forward(call, function, z):
    """activation(z) for this call (a backend tensor), its tape kept on the context."""
    b = call.backend
    tape = autodiff.Tape(b) if call.training or call.input_grad_needed else None
    zt = Tensor(z, b, requires_grad=tape is not None)
    with autodiff.on_backend(b), autodiff.recording(tape), autodiff.call_scope():
        result = function(zt)
    yt = ops.cast(ops.core.as_tensor(result), "float32")
    if tuple(yt.shape) != tuple(b.shape(z)):
        raise ValueError(f"{call.layer.describe()}: its activation function must keep the shape "
                         f"{tuple(b.shape(z))}, it returned {tuple(yt.shape)}")
    call.function_tape = (tape, zt, yt)
    return yt.value


def backward(call, dout):
    """dL/dz from dL/dactivation through the call's tape."""
    tape, zt, yt = call.function_tape
    if tape is None:
        raise RuntimeError(f"{call.layer.describe()}: backward after an inference forward")
    (dz,) = tape.gradients([yt], [Tensor(dout, call.backend)], [zt])
    if dz is None:   # the function ignores its input
        return call.backend.zeros(call.backend.shape(dout))
    return dz.value
