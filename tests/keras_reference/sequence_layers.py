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
    # the 3-D family on inputs X3_SHAPE
    ("MaxPooling3D", dict(pool_size=2)),
    ("MaxPooling3D", dict(pool_size=(2, 3, 2), strides=(1, 2, 1), padding="same")),
    # "same" with even padding on each axis: where it is uneven, Keras's torch backend pads by
    # replicating the edge and averages those copies too (TensorFlow and minidl leave them out)
    ("AveragePooling3D", dict(pool_size=3, strides=(1, 1, 2), padding="same")),
    ("AveragePooling3D", dict(pool_size=(3, 2, 2), strides=1)),
    ("GlobalAveragePooling3D", dict()),
    ("GlobalMaxPooling3D", dict(keepdims=True)),
    ("UpSampling3D", dict(size=(2, 1, 3))),
    ("ZeroPadding3D", dict(padding=((1, 0), (0, 2), (1, 1)))),
    ("Cropping3D", dict(cropping=((1, 0), (0, 2), (1, 1)))),
    ("Conv3D", dict(filters=3, kernel_size=2)),
    ("Conv3D", dict(filters=4, kernel_size=(3, 2, 3), strides=(2, 1, 2), padding="same")),
    ("Conv3D", dict(filters=4, kernel_size=2, dilation_rate=(2, 1, 1), groups=2, padding="same",
                    activation="relu")),
    ("Conv3DTranspose", dict(filters=3, kernel_size=2, strides=2)),
    ("Conv3DTranspose", dict(filters=2, kernel_size=(3, 2, 3), strides=(2, 1, 2), padding="same")),
    ("Conv3DTranspose", dict(filters=2, kernel_size=3, strides=(1, 2, 1), padding="valid",
                             output_padding=(0, 1, 0), activation="tanh")),
    ("Conv3DTranspose", dict(filters=2, kernel_size=2, padding="same", dilation_rate=(2, 1, 2))),
    ("AdaptiveAveragePooling1D", dict(output_size=3)),
    ("AdaptiveMaxPooling1D", dict(output_size=4)),
    ("AdaptiveAveragePooling2D", dict(output_size=(3, 2))),
    ("AdaptiveMaxPooling2D", dict(output_size=(3, 4))),
    ("AdaptiveAveragePooling3D", dict(output_size=(2, 3, 2))),
    ("AdaptiveMaxPooling3D", dict(output_size=(3, 3, 4))),
]
X2_SHAPE = (2, 5, 7, 3)
X3_SHAPE = (2, 3, 4, 5, 2)


def run(name, kwargs):
    layer = getattr(layers, name)(**kwargs)
    shape = X3_SHAPE if "3D" in name else X2_SHAPE if "2D" in name else X_SHAPE
    x = det(shape, 1.0)
    layer.build(shape)
    layer.set_weights([det(w.shape) for w in layer.get_weights()])
    xt = torch.tensor(x, requires_grad=True)
    y = layer(xt)
    (y * torch.tensor(det(tuple(y.shape), 1.0))).sum().backward()
    grads = [w.value.grad.detach().numpy() for w in layer.trainable_weights]
    return dict(name=name, kwargs=kwargs, weights=[(w.name, tuple(w.shape)) for w in layer.weights],
                y=y.detach().numpy(), dx=xt.grad.numpy(), dweights=grads)


def masked_models():
    """Models with masks: Embedding(mask_zero=True) or Masking, then layers that pass the mask
    on, trained one SGD step (lr 0.1) on a loss that honours it: the loss and the weights."""
    ids = np.array([[1, 2, 3, 0], [4, 5, 0, 0], [0, 7, 8, 9]], dtype="int32")
    seq_targets = det((3, 4, 2), 1.0)
    results = []

    def fit(name, model, x, y, loss, metrics=()):
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss, metrics=list(metrics))
        model.set_weights([det(w.shape) for w in model.get_weights()])
        logs = model.evaluate(x, y, verbose=0, return_dict=True)
        out = keras.ops.convert_to_numpy(model(x))
        model.train_on_batch(x, y)
        results.append(dict(name=name, loss=logs.pop("loss"), metrics=logs, y=out,
                            weights=model.get_weights()))

    inp = keras.Input((None,), dtype="int32")
    h = layers.Embedding(10, 3, mask_zero=True)(inp)
    h = layers.Dropout(0.0)(h)
    fit("embedding_dense_mse", keras.Model(inp, layers.Dense(2, activation="tanh")(h)), ids,
        seq_targets, "mse")
    inp = keras.Input((4,), dtype="int32")
    h = layers.Embedding(10, 3, mask_zero=True)(inp)
    h = layers.GlobalAveragePooling1D()(h)
    fit("embedding_gap_mse", keras.Model(inp, layers.Dense(1)(h)), ids, det((3, 1), 1.0), "mse")
    inp = keras.Input((4, 2))
    h = layers.Masking(mask_value=0.0)(inp)
    h = layers.Dense(3, activation="softmax")(h)
    xs = det((3, 4, 2), 1.0)
    xs[0, 3] = 0.0
    xs[1, 2:] = 0.0
    labels = np.array([[0, 1, 2, 1], [2, 2, 0, 0], [1, 0, 1, 2]])
    fit("masking_softmax_sparse_ce", keras.Model(inp, h), xs, labels,
        "sparse_categorical_crossentropy", ["accuracy"])
    inp = keras.Input((4, 2))
    h = layers.Dense(2, activation="sigmoid")(layers.Masking(mask_value=0.0)(inp))
    fit("masking_sigmoid_binary_ce", keras.Model(inp, h), xs, (det((3, 4, 2), 1.0) > 0).astype("float32"),
        "binary_crossentropy", ["binary_accuracy"])
    return results


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
    out += ["", "# models with masks: loss before, outputs, weights after one SGD step (lr 0.1)",
            "MASKED_MODELS = ["]
    for r in masked_models():
        out.append(f"    dict(name={r['name']!r}, loss={r['loss']!r}, metrics={r['metrics']!r},")
        out.append(f"         y={literal(r['y'])},")
        out.append(f"         weights=[{', '.join(literal(w) for w in r['weights'])}]),")
    out.append("]")
    with open("tests/_keras_sequence_values.py", "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
