"""Writes tests/_keras_sequence_values.py: outputs and gradients of the 1-D layers as real Keras
3.15.1 computes them (torch backend). Run in a side venv with Keras, from the repository root:

    KERAS_BACKEND=torch python tests/keras_reference/sequence_layers.py

Inputs and weights are det(shape): sin(0.7 i + 0.3) * scale over the flat index, so the test
rebuilds them without Keras. The gradients are those of sum(y * det(y.shape, 1.0)).
"""

import numpy as np
import keras
import torch
from keras import layers


def det(shape, scale=0.3):
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.7 + 0.3) * scale).reshape(shape).astype("float32")


X_SHAPE = (2, 7, 3)

# (class name, constructor arguments) of every case
CASES = [
    ("Conv1D", dict(filters=4, kernel_size=3, padding="causal", dilation_rate=2)),
    ("Conv1D", dict(filters=4, kernel_size=3, padding="same", strides=2)),
    ("Conv1D", dict(filters=3, kernel_size=2, groups=3)),
    ("Conv1D", dict(filters=2, kernel_size=3, padding="causal", strides=2, activation="tanh")),
    ("SeparableConv1D", dict(filters=4, kernel_size=3, padding="same", depth_multiplier=2)),
    ("DepthwiseConv1D", dict(kernel_size=3, depth_multiplier=2)),
    ("Conv1DTranspose", dict(filters=4, kernel_size=3, strides=2, padding="same")),
    ("Conv1DTranspose", dict(filters=2, kernel_size=3, strides=2, padding="valid")),
    ("MaxPooling1D", dict(pool_size=2)),
    ("AveragePooling1D", dict(pool_size=3, strides=2, padding="same")),
    ("GlobalAveragePooling1D", dict()),
    ("GlobalMaxPooling1D", dict(keepdims=True)),
    ("UpSampling1D", dict(size=2)),
    ("ZeroPadding1D", dict(padding=(1, 2))),
    ("Cropping1D", dict(cropping=(2, 1))),
]


def run(name, kwargs):
    layer = getattr(layers, name)(**kwargs)
    x = det(X_SHAPE, 1.0)
    layer.build(X_SHAPE)
    layer.set_weights([det(w.shape) for w in layer.get_weights()])
    xt = torch.tensor(x, requires_grad=True)
    y = layer(xt)
    (y * torch.tensor(det(tuple(y.shape), 1.0))).sum().backward()
    grads = [w.value.grad.detach().numpy() for w in layer.trainable_weights]
    return dict(name=name, kwargs=kwargs, weights=[(w.name, tuple(w.shape)) for w in layer.weights],
                y=y.detach().numpy(), dx=xt.grad.numpy(), dweights=grads)


def literal(a):
    return repr(np.round(np.asarray(a, dtype=np.float64), 5).tolist())


def main():
    out = ['"""Written by tests/keras_reference/sequence_layers.py with Keras '
           f'{keras.__version__} (torch backend): do not edit."""', "", "CASES = ["]
    for name, kwargs in CASES:
        r = run(name, kwargs)
        out.append(f"    dict(name={name!r}, kwargs={kwargs!r}, weights={r['weights']!r},")
        out.append(f"         y={literal(r['y'])},")
        out.append(f"         dx={literal(r['dx'])},")
        out.append(f"         dweights=[{', '.join(literal(g) for g in r['dweights'])}]),")
    out.append("]")
    with open("tests/_keras_sequence_values.py", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
