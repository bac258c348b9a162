"""A converted binary convolution and the MaxPooling2D after it, fused at lq.convert.

Where a converted binary QuantConv2D L (a sign kernel, linear activation) is read only by a
MaxPooling2D P, L's binary inference runs binary_conv2d_forward with P's pool plan: the cpu
backend then takes each pooling window's maxima straight from the micro-kernel's rows, so the
full-size integer sums (6.4 MB per batch of 32 for zoo.binarynet()'s 28x28x64 layer) are never
written, nor read again by a pooling pass. P then hands on the pooled tensor L made. The
maxima are those max_pool2d_forward gives, so predictions are bit for bit the unfused ones. A
ternary kernel (two bit-planes whose sums are combined after the convolution) is not fused.

Only P's forward is wrapped (an instance attribute): in training, in eager calls of L or P, and
when L runs its float path, both run as before.
"""

from ..layers.pooling import MaxPooling2D
from .. import activations
from .threshold_fusion import graph_readers


class PooledByConvolution:
    """P.forward after fusing: the tensor L pooled in this prediction passes through."""

    def __init__(self, layer, source):
        self.layer, self.source = layer, source

    def __call__(self, call, x, training):
        state = self.source._binary_state
        if not training and state is not None and state.pooled is x:
            return x
        return MaxPooling2D.forward(self.layer, call, x, training)


def pool_plan(layer, call, conv_plan):
    """The pool2d_plan L's binary forward applies (None when L's output is not to be pooled:
    no fused P, or L called on its own)."""
    state = layer._binary_state
    pool = state.pool_layer
    if pool is None or any(call is eager for eager in layer._eager_calls):
        return None
    key = ("pool", tuple(conv_plan.out_shape), id(layer.backend))
    plan = state.plans.get(key)
    if plan is None:    # kept beside the convolution's plans (binary_plan bounds them)
        plan = state.plans[key] = layer.backend.pool2d_plan(conv_plan.out_shape, pool.pool_size, pool.strides,
                                                            pool.padding)
    return plan


def fuse(model, ternary_ops):
    """Fuse every L -> P pair of `model`'s graph (module docstring); returns [(L name, P name)].
    L is a layer whose binary forward can pool (QuantConv2D's supports_pool_fusion), whose
    kernel quantizer is not one of ternary_ops."""
    readers = graph_readers(model)
    if readers is None:
        return []
    graph, only_reader, counts = readers
    fused = []
    for node in graph.nodes:
        layer = node.layer
        state = getattr(layer, "_binary_state", None)
        if state is None or counts[id(layer)] != 1 or not getattr(layer, "supports_pool_fusion", False) \
                or activations.fused_name(layer, None) != "linear" or layer.kernel_quantizer.op in ternary_ops:
            continue
        reader = only_reader(node)
        if reader is None or type(reader.layer) is not MaxPooling2D:
            continue
        state.pool_layer = reader.layer
        reader.layer.forward = PooledByConvolution(reader.layer, layer)
        fused.append((layer.name, reader.layer.name))
    return fused


def unfuse(model_layers):
    """Undo fuse(): every wrapped MaxPooling2D forward back to its class's."""
    for layer in model_layers:
        if isinstance(layer.forward, PooledByConvolution):
            del layer.forward
        state = getattr(layer, "_binary_state", None)
        if state is not None:
            state.pool_layer = None
