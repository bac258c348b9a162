"""A layer called twice in one graph keeps each call's state on its own context (issue 20's
per-call contexts): the normalization, merge, reshaping, activation, einsum and embedding
layers, shared between two branches, give the outputs and gradients of two separate layers
holding the same weights, with the shared weights' gradients summed over the calls."""

import numpy as np
import pytest

from minidl import layers
from minidl.models import Model

# name -> (make the layer, its input's sample shape, how many inputs one call takes)
CASES = {
    "batch_norm": (lambda: layers.BatchNormalization(), (3, 4), 1),
    "batch_norm_no_scale": (lambda: layers.BatchNormalization(scale=False, center=False), (3, 4), 1),
    "layer_norm": (lambda: layers.LayerNormalization(), (3, 4), 1),
    "layer_norm_two_axes": (lambda: layers.LayerNormalization(axis=[-2, -1]), (3, 4), 1),
    "group_norm": (lambda: layers.GroupNormalization(groups=2), (3, 4), 1),
    "rms_norm": (lambda: layers.RMSNormalization(), (3, 4), 1),
    "unit_norm": (lambda: layers.UnitNormalization(), (3, 4), 1),
    "prelu": (lambda: layers.PReLU(alpha_initializer="ones", shared_axes=[1]), (3, 4), 1),
    "prelu_broadcast": (lambda: layers.PReLU(alpha_initializer="ones", shared_axes=[2]), (3, 4), 1),
    "softmax_axis1": (lambda: layers.Softmax(axis=1), (3, 4), 1),
    "elu": (lambda: layers.ELU(0.5), (3, 4), 1),
    "einsum_dense": (lambda: layers.EinsumDense("abc,cd->abd", (3, 5), bias_axes="d",
                                                activation="tanh"), (3, 4), 1),
    "permute": (lambda: layers.Permute((2, 1)), (3, 4), 1),
    "repeat_vector": (lambda: layers.RepeatVector(3), (4,), 1),
    "cropping2d": (lambda: layers.Cropping2D(((1, 0), (0, 1))), (3, 3, 2), 1),
    "upsampling3d": (lambda: layers.UpSampling3D((1, 2, 1)), (2, 2, 2, 2), 1),
    "zero_padding3d": (lambda: layers.ZeroPadding3D(((1, 0), (0, 1), (0, 0))), (2, 2, 2, 2), 1),
    "cropping3d": (lambda: layers.Cropping3D(((1, 0), (0, 1), (0, 0))), (3, 3, 2, 2), 1),
    "add": (lambda: layers.Add(), (3, 4), 2),
    "subtract": (lambda: layers.Subtract(), (3, 4), 2),
    "multiply": (lambda: layers.Multiply(), (3, 4), 2),
    "average": (lambda: layers.Average(), (3, 4), 2),
    "maximum": (lambda: layers.Maximum(), (3, 4), 3),
    "concatenate": (lambda: layers.Concatenate(), (3, 4), 2),
}


def two_branches(make, shape, arity, shared):
    """Two calls of one layer (shared) or of two layers, each after its own Dense per input
    (whose gradients carry the layer's dL/dinput of that call); returns (model, the Dense
    layers, the layers of the two calls)."""
    inputs = [layers.Input(shape) for _ in range(2 * arity)]
    before = [layers.Dense(shape[-1]) for _ in inputs]
    hidden = [d(x) for d, x in zip(before, inputs)]
    first = make()
    second = first if shared else make()
    outputs = [first(hidden[:arity] if arity > 1 else hidden[0]),
               second(hidden[arity:] if arity > 1 else hidden[arity])]
    model = Model(inputs, outputs)
    return model, before, (first, second)


def run(model, backend, xs, douts):
    """Outputs and trainable weights' gradients (by weight identity) of one training pass."""
    graph = model.graph
    ys = [backend.to_numpy(y).copy() for y in
          graph.forward([backend.from_numpy(x) for x in xs], True)]
    graph.backward([backend.from_numpy(d) for d in douts])
    return ys, {id(w): backend.to_numpy(w.grad).copy() for w in graph.trainable_weights()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_shared_layer_matches_two_layers_of_its_weights(backend, case):
    make, shape, arity = CASES[case]
    rng = np.random.default_rng(3)
    shared, shared_before, (layer, _) = two_branches(make, shape, arity, True)
    apart, apart_before, (one, two) = two_branches(make, shape, arity, False)
    for model in (shared, apart):
        model.graph.attach(backend)
    for a, b in zip(shared_before, apart_before):
        b.set_weights(a.get_weights())
    weights = [rng.uniform(0.5, 1.5, w.shape).astype(np.float32) for w in layer.weights]
    for target in (layer, one, two):
        target.set_weights(weights)
    xs = [rng.normal(size=(5,) + shape).astype(np.float32) for _ in range(2 * arity)]
    shape_out = (5,) + tuple(layer.output_shape)
    douts = [rng.normal(size=shape_out).astype(np.float32) for _ in range(2)]
    ys, grads = run(shared, backend, xs, douts)
    want_ys, want_grads = run(apart, backend, xs, douts)
    for k, (y, want) in enumerate(zip(ys, want_ys)):
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5, err_msg=f"output {k}")
    for a, b in zip(shared_before, apart_before):   # each call's dL/dinput, through the Dense
        for wa, wb in zip(a.trainable_weights, b.trainable_weights):
            np.testing.assert_allclose(grads[id(wa)], want_grads[id(wb)], rtol=1e-4, atol=1e-5,
                                       err_msg=f"gradient of {a.name}/{wa.name}")
    for w, w1, w2 in zip(layer.trainable_weights, one.trainable_weights, two.trainable_weights):
        np.testing.assert_allclose(grads[id(w)], want_grads[id(w1)] + want_grads[id(w2)],
                                   rtol=1e-4, atol=1e-5, err_msg=f"gradient of {w.name}")


def test_a_shared_embedding_gives_each_call_its_mask_and_sums_its_gradients(backend):
    first, second = layers.Input((4,)), layers.Input((4,))
    embedding = layers.Embedding(6, 3, mask_zero=True)
    model = Model([first, second], [embedding(first), embedding(second)])
    model.graph.attach(backend)
    a = np.array([[1, 2, 0, 0], [3, 0, 0, 0]], np.float32)
    c = np.array([[5, 5, 5, 0], [0, 1, 0, 4]], np.float32)
    douts = [np.ones((2, 4, 3), np.float32), 2 * np.ones((2, 4, 3), np.float32)]
    ys = model.graph.forward([backend.from_numpy(a), backend.from_numpy(c)], True)
    masks = [backend.to_numpy(m) for m in model.graph.output_masks]
    np.testing.assert_array_equal(masks[0], (a != 0).astype(np.float32))
    np.testing.assert_array_equal(masks[1], (c != 0).astype(np.float32))
    table = backend.to_numpy(embedding.embeddings.value)
    np.testing.assert_array_equal(backend.to_numpy(ys[0]), table[a.astype(int)])
    model.graph.backward([backend.from_numpy(d) for d in douts])
    want = np.zeros((6, 3), np.float32)
    np.add.at(want, a.astype(int).ravel(), 1.0)
    np.add.at(want, c.astype(int).ravel(), 2.0)
    np.testing.assert_allclose(backend.to_numpy(embedding.embeddings.grad), want)


def test_a_shared_masking_layer_gives_each_call_its_mask(backend):
    first, second = layers.Input((3, 2)), layers.Input((3, 2))
    masking = layers.Masking(0.0)
    model = Model([first, second], [masking(first), masking(second)])
    model.graph.attach(backend)
    a = np.ones((2, 3, 2), np.float32)
    a[0, 1] = 0.0
    c = np.ones((2, 3, 2), np.float32)
    c[1, 2] = 0.0
    model.graph.forward([backend.from_numpy(a), backend.from_numpy(c)], True)
    masks = [backend.to_numpy(m) for m in model.graph.output_masks]
    np.testing.assert_array_equal(masks[0], [[1, 0, 1], [1, 1, 1]])
    np.testing.assert_array_equal(masks[1], [[1, 1, 1], [1, 1, 0]])
    # Keras's compute_mask, called on its own, gives the same
    np.testing.assert_array_equal(backend.to_numpy(masking.compute_mask(backend.from_numpy(c))),
                                  masks[1])
