"""Corpus example: understanding masking and padding.

Modeled on keras-team/keras-io guides/understanding_masking_and_padding.py (commit 0845fa9):
pad_sequences(padding="post"), Embedding(mask_zero=True) and Masking producing a mask, masks
propagated to an LSTM in Sequential and functional models, compute_mask() passed by hand as
lstm(x, mask=mask) inside a custom layer, a custom layer that splits its mask (compute_mask
returning two masks), a CustomEmbedding whose compute_mask is ops.not_equal(inputs, 0), a layer
opting in with supports_masking = True, and a mask-consuming TemporalSoftmax with call(inputs,
mask=None). Written anew for minidl's corpus with the same Keras 3 API: the mask is read with
layer.compute_mask / the `mask` argument (Keras 3 keeps `_keras_mask` private); random data."""

import numpy as np

import minidl as keras
from minidl import layers, ops

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

raw_inputs = [[711, 632, 71], [73, 8, 3215, 55, 927], [83, 91, 1, 645, 1253, 927]]
padded_inputs = keras.utils.pad_sequences(raw_inputs, padding="post")
assert padded_inputs.shape == (3, 6) and padded_inputs[0, 3:].tolist() == [0, 0, 0]

embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
embedding(padded_inputs)
mask = ops.convert_to_numpy(embedding.compute_mask(padded_inputs))
np.testing.assert_array_equal(mask, padded_inputs != 0)

masking_layer = layers.Masking()
unmasked_embedding = np.tile(padded_inputs[..., None], [1, 1, 10]).astype("float32")
masking_layer(unmasked_embedding)
np.testing.assert_array_equal(ops.convert_to_numpy(masking_layer.compute_mask(unmasked_embedding)), padded_inputs != 0)

model = keras.Sequential([layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True), layers.LSTM(32)])
out = ops.convert_to_numpy(model(padded_inputs))
# a masked LSTM returns the state at the last real step: trailing zeros change nothing
longer = np.concatenate([padded_inputs, np.zeros((3, 4), padded_inputs.dtype)], axis=1)
np.testing.assert_allclose(ops.convert_to_numpy(model(longer)), out, rtol=1e-5, atol=1e-6)

inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)(inputs)
outputs = layers.LSTM(32)(x)
model = keras.Model(inputs, outputs)
assert model.predict(padded_inputs, verbose=0).shape == (3, 32)


class MyLayer(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.embedding = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)
        self.lstm = layers.LSTM(32)

    def call(self, inputs):
        x = self.embedding(inputs)
        mask = self.embedding.compute_mask(inputs)
        return self.lstm(x, mask=mask)


layer = MyLayer()
x = (np.random.default_rng(0).random((32, 10)) * 100).astype("int32")
assert tuple(layer(x).shape) == (32, 32)


class TemporalSplit(layers.Layer):
    def call(self, inputs):
        return ops.split(inputs, 2, axis=1)

    def compute_mask(self, inputs, mask=None):
        if mask is None:
            return None
        return ops.split(mask, 2, axis=1)


split = TemporalSplit()
first_half, second_half = split(masking_layer(unmasked_embedding))
assert tuple(first_half.shape) == (3, 3, 10)
masks = split.compute_mask(unmasked_embedding, ops.convert_to_tensor(padded_inputs != 0))
np.testing.assert_array_equal(ops.convert_to_numpy(masks[1]), padded_inputs[:, 3:] != 0)


class CustomEmbedding(layers.Layer):
    def __init__(self, input_dim, output_dim, mask_zero=False, **kwargs):
        super().__init__(**kwargs)
        self.input_dim, self.output_dim, self.mask_zero = input_dim, output_dim, mask_zero

    def build(self, input_shape):
        self.embeddings = self.add_weight(shape=(self.input_dim, self.output_dim), initializer="random_normal",
                                          dtype="float32")

    def call(self, inputs):
        return ops.take(self.embeddings, inputs, axis=0)

    def compute_mask(self, inputs, mask=None):
        if not self.mask_zero:
            return None
        return ops.not_equal(inputs, 0)


layer = CustomEmbedding(10, 32, mask_zero=True)
x = (np.random.default_rng(1).random((3, 10)) * 9).astype("int32")
y = layer(x)
assert tuple(y.shape) == (3, 10, 32)
np.testing.assert_array_equal(ops.convert_to_numpy(layer.compute_mask(x)), x != 0)


class MyActivation(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs):
        return ops.relu(inputs)


inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=5000, output_dim=16, mask_zero=True)(inputs)
x = MyActivation()(x)
outputs = layers.LSTM(32)(x)
model = keras.Model(inputs, outputs)
np.testing.assert_allclose(model.predict(longer, verbose=0), model.predict(padded_inputs, verbose=0),
                           rtol=1e-5, atol=1e-6)


class TemporalSoftmax(layers.Layer):
    def call(self, inputs, mask=None):
        broadcast_float_mask = ops.expand_dims(ops.cast(mask, "float32"), -1)
        inputs_exp = ops.exp(inputs) * broadcast_float_mask
        inputs_sum = ops.sum(inputs_exp, axis=1, keepdims=True)
        return inputs_exp / inputs_sum


inputs = keras.Input(shape=(None,), dtype="int32")
x = layers.Embedding(input_dim=10, output_dim=32, mask_zero=True)(inputs)
x = layers.Dense(1)(x)
outputs = TemporalSoftmax()(x)
model = keras.Model(inputs, outputs)
data = np.random.default_rng(2).integers(0, 10, size=(32, 100))
y = ops.convert_to_numpy(model(data))
np.testing.assert_allclose(y.sum(axis=1), 1, rtol=1e-4)
assert (y[data == 0] == 0).all()
print("ok")
