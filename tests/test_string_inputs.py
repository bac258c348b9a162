"""String inputs in functional models (Input(dtype="string")), as with Keras's TensorFlow
backend: the string batches stay on the host, StringLookup / Hashing / TextVectorization /
IntegerLookup run there as graph nodes and their numeric outputs go on through the model.

Keras 3.15.1 on torch cannot run these layers (`ImportError: Layer StringLookup requires
TensorFlow`), so the model tests check internal consistency: the model's predictions equal the
string layers run eagerly followed by the numeric part; StringLookup's indices are the ones
Keras's documentation gives. Input's properties were checked in the side venv (Keras 3.15.1).
"""

import numpy as np
import pytest

import minidl as keras
from minidl import layers, ops
from minidl.models import load_model

from test_keras_compat import active_backend  # noqa: F401  (the every-backend fixture)

WORDS = ["red", "green", "blue"]


def _columns(n=96, seed=0):
    rng = np.random.default_rng(seed)
    colour = rng.choice(WORDS + ["grey"], n)             # "grey" is out of vocabulary
    size = rng.normal(size=(n, 1)).astype("float32")
    y = ((colour == "red") * 1.5 - (colour == "blue") + 0.5 * size[:, 0]).astype("float32")
    return {"colour": colour, "size": size}, y[:, None]


def _string_model():
    """A StringLookup (int) into an Embedding, a StringLookup (one_hot) and a Hashing
    (one_hot) of one string column, plus a numeric column; and the numeric part alone, on the
    encodings, sharing the weighted layers."""
    colour = keras.Input(shape=(), dtype="string", name="colour")
    size = keras.Input(shape=(1,), name="size")
    ids = layers.StringLookup(vocabulary=WORDS, name="ids")
    one_hot = layers.StringLookup(vocabulary=WORDS, output_mode="one_hot", name="one_hot")
    hashed = layers.Hashing(num_bins=5, output_mode="one_hot", name="hashed")
    embedding = layers.Embedding(4, 3, name="embedding")
    dense = layers.Dense(1, name="dense")

    def head(id_tensor, one_hot_tensor, hashed_tensor, size_tensor):
        return dense(layers.concatenate([embedding(id_tensor), one_hot_tensor, hashed_tensor,
                                         size_tensor]))

    model = keras.Model([colour, size], head(ids(colour), one_hot(colour), hashed(colour), size))
    encoded = [keras.Input(shape=(), dtype="int64"), keras.Input(shape=(4,)),
               keras.Input(shape=(5,)), keras.Input(shape=(1,))]
    numeric = keras.Model(encoded, head(*encoded))
    return model, numeric, (ids, one_hot, hashed)


def test_string_input_properties():
    x = keras.Input(shape=(), dtype="string", name="s")
    # Keras 3.15.1: shape (None,), dtype 'string'; shape=(1,) gives (None, 1)
    assert x.shape == (None,) and x.dtype == "string"
    column = keras.Input(shape=(1,), dtype="string")
    assert column.shape == (None, 1) and column.dtype == "string"
    config = x.layer.get_config()
    assert config["dtype"] == "string" and config["shape"] == []
    again = layers.InputLayer.from_config(config)
    assert again.output.dtype == "string" and again.output.shape == (None,)
    lines = []
    keras.Model(x, layers.StringLookup(vocabulary=WORDS)(x)).summary(print_fn=lines.append)
    assert any("s (InputLayer)" in line for line in lines)
    assert any("(StringLookup)" in line for line in lines)


def test_string_lookup_indices_follow_keras_documentation(active_backend):
    # The examples of Keras's StringLookup documentation (keras.io/api/layers/preprocessing_layers/
    # categorical/string_lookup): OOV index 0 without a mask token, 1 with mask_token="".
    vocab = ["a", "b", "c", "d"]
    data = np.array([["a", "c", "d"], ["d", "z", "b"]])
    plain = layers.StringLookup(vocabulary=vocab)
    np.testing.assert_array_equal(plain(data), [[1, 3, 4], [4, 0, 2]])
    masked_data = np.array([["a", "c", "d"], ["", "z", "b"]])
    masked = layers.StringLookup(vocabulary=vocab, mask_token="")
    np.testing.assert_array_equal(masked(masked_data), [[2, 4, 5], [0, 1, 3]])
    for layer, values in ((plain, data), (masked, masked_data)):
        x = keras.Input(shape=(3,), dtype="string")
        out = layer(x)
        assert out.dtype == "int64" and out.shape == (None, 3)
        model = keras.Model(x, out)
        np.testing.assert_array_equal(model.predict(values, verbose=0), layer(values))


def test_string_model_trains_and_predicts_as_the_eager_layers(active_backend):
    keras.utils.set_random_seed(0)
    model, numeric, (ids, one_hot, hashed) = _string_model()
    assert [t.dtype for t in model.inputs] == ["string", "float32"]
    assert model.count_params() == 4 * 3 + (3 + 4 + 5 + 1) + 1
    x, y = _columns()
    model.compile(keras.optimizers.Adam(0.05), "mse")
    history = model.fit(x, y, batch_size=16, epochs=6, shuffle=True, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    colour, size = x["colour"], x["size"]
    encoded = [ids(colour), one_hot(colour), hashed(colour), size]
    assert encoded[1].shape == (96, 4) and encoded[2].shape == (96, 5)
    np.testing.assert_allclose(model.predict(x, verbose=0), numeric.predict(encoded, verbose=0),
                               rtol=1e-5, atol=1e-6)
    # one sample given as lists, as a Keras user predicts on a new row
    one = model.predict({"colour": np.array(["red"]), "size": np.array([[0.5]])}, verbose=0)
    assert one.shape == (1, 1)


def test_dict_columns_fit_evaluate_predict_and_batch_source(active_backend):
    keras.utils.set_random_seed(0)
    model, _, _ = _string_model()
    model.compile("adam", "mse", metrics=["mae"])
    x, y = _columns(80)
    val_x, val_y = _columns(20, seed=1)
    # object arrays (a pandas column's kind) follow the same batches as the numbers
    objects = {"colour": x["colour"].astype(object), "size": x["size"]}
    history = model.fit(objects, y, batch_size=16, epochs=2, validation_data=(val_x, val_y),
                        verbose=0)
    assert set(history.history) == {"loss", "mae", "val_loss", "val_mae"}
    history = model.fit(x, y, batch_size=16, epochs=1, validation_split=0.25, shuffle=True,
                        verbose=0)
    assert "val_loss" in history.history
    loss, mae = model.evaluate(val_x, val_y, verbose=0)
    preds = model.predict(val_x, batch_size=7, verbose=0)
    assert np.isclose(loss, np.mean((preds - val_y) ** 2), rtol=1e-4)
    assert np.isclose(mae, np.mean(np.abs(preds - val_y)), rtol=1e-4)

    class Columns(keras.utils.PyDataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            part = slice(20 * i, 20 * (i + 1))
            return {"colour": list(x["colour"][part]), "size": x["size"][part]}, y[part]

    model.fit(Columns(), epochs=1, verbose=0)
    np.testing.assert_allclose(model.predict(Columns(), verbose=0), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("extension", ["keras", "minidl"])
def test_save_and_load_keep_string_inputs(active_backend, tmp_path, extension):
    keras.utils.set_random_seed(0)
    model, _, _ = _string_model()
    model.compile("adam", "mse")
    x, y = _columns(32)
    model.fit(x, y, epochs=1, verbose=0)
    path = tmp_path / f"strings.{extension}"
    model.save(path)
    loaded = load_model(path)
    assert [t.dtype for t in loaded.inputs] == ["string", "float32"]
    assert loaded.get_layer("ids").get_vocabulary() == ["[UNK]"] + WORDS
    np.testing.assert_allclose(loaded.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6, atol=1e-7)


class LookupEmbedding(layers.Layer):
    """A StringLookup inside a layer's call, its indices through ops (memory-efficient
    embeddings' quotient / remainder trick)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.lookup = layers.StringLookup(vocabulary=WORDS, mask_token=None, num_oov_indices=0)
        self.quotient = layers.Embedding(2, 2)
        self.remainder = layers.Embedding(2, 2)

    def call(self, inputs):
        index = self.lookup(inputs)
        return self.quotient(ops.floor_divide(index, 2)) * self.remainder(ops.mod(index, 2))


def test_string_layers_inside_a_call_and_a_nested_sequential(active_backend):
    keras.utils.set_random_seed(0)
    colour = keras.Input(shape=(), dtype="string", name="colour")
    encoder = keras.Sequential([layers.StringLookup(vocabulary=WORDS, num_oov_indices=0),
                                layers.Embedding(3, 2)], name="encoder")
    custom = LookupEmbedding(name="custom")
    out = layers.Dense(1)(layers.concatenate([encoder(colour), custom(colour)]))
    model = keras.Model(colour, out)
    assert encoder.inputs[0].dtype == "string"
    x = np.array(WORDS * 20)
    y = (x == "red").astype("float32")[:, None]
    model.compile(keras.optimizers.Adam(0.05), "mse")
    history = model.fit(x, y, batch_size=12, epochs=5, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    # eagerly, the layer's call gives what the model computes inside
    index = np.array([0, 1, 2])
    expected = (custom.quotient(index // 2) * custom.remainder(index % 2))
    alone = keras.Model(colour, custom(colour))
    np.testing.assert_allclose(alone.predict(np.array(WORDS), verbose=0), expected, rtol=1e-6)


def test_integer_lookup_and_text_vectorization_in_a_model(active_backend):
    ids = keras.Input(shape=(1,), dtype="int64", name="ids")
    text = keras.Input(shape=(1,), dtype="string", name="text")
    integer = layers.IntegerLookup(output_mode="multi_hot")
    integer.adapt(np.array([[3], [5], [5], [9]]))
    vectorize = layers.TextVectorization(output_sequence_length=4)
    vectorize.adapt(np.array(["the cat sat", "the dog ran"]))
    model = keras.Model([ids, text], [integer(ids), vectorize(text)])
    id_data, text_data = np.array([[5], [7], [9]]), np.array([["the cat"], ["a dog ran far away"],
                                                              ["sat"]])
    got = model.predict([id_data, text_data], verbose=0)
    np.testing.assert_array_equal(got[0], integer(id_data))
    np.testing.assert_array_equal(got[1], vectorize(text_data))


def test_string_tensor_reaching_a_numeric_layer_is_refused():
    colour = keras.Input(shape=(1,), dtype="string", name="colour")
    with pytest.raises(TypeError, match=r"Dense 'dense_s'.*'colour'.*string tensor"):
        layers.Dense(2, name="dense_s")(colour)
    with pytest.raises(ValueError, match=r"ops.add.*'colour'.*string tensor"):
        ops.add(colour, 1.0)
    with pytest.raises(TypeError, match=r"IntegerLookup.*'colour'.*string tensor"):
        layers.IntegerLookup(vocabulary=[1, 2])(colour)

    class Doubles(layers.Layer):
        def call(self, x):
            return x * 2.0

    with pytest.raises(TypeError, match=r"Doubles 'doubles'.*string"):
        Doubles(name="doubles")(colour)
    with pytest.raises(TypeError, match="HashedCrossing.*cannot sit inside a minidl model"):
        layers.HashedCrossing(num_bins=3)((colour, colour))


def test_data_of_the_wrong_kind_is_refused(active_backend):
    model, _, _ = _string_model()
    model.compile("adam", "mse")
    x, y = _columns(8)
    with pytest.raises(TypeError, match=r"x\['colour'\].*dtype 'string'.*float"):
        model.predict({"colour": np.zeros(8), "size": x["size"]}, verbose=0)
    with pytest.raises(TypeError, match=r"x\['size'\].*numeric"):
        model.predict({"colour": x["colour"], "size": x["colour"][:, None]}, verbose=0)
    with pytest.raises(TypeError, match="str or bytes values, got a int"):
        model.predict({"colour": np.array(["red", 3] * 4, dtype=object), "size": x["size"]},
                      verbose=0)


def test_custom_train_step_gets_the_string_batch(active_backend):
    keras.utils.set_random_seed(0)
    colour = keras.Input(shape=(), dtype="string")
    ids = layers.StringLookup(vocabulary=WORDS)(colour)
    out = layers.Dense(1)(layers.Embedding(4, 2)(ids))

    class Stepped(keras.Model):
        def train_step(self, data):
            x, y = data
            with keras.GradientTape() as tape:
                loss = ops.mean((self(x, training=True) - y) ** 2)
            grads = tape.gradient(loss, self.trainable_weights)
            self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
            return {"loss": loss}

    model = Stepped(colour, out)
    model.compile(keras.optimizers.Adam(0.1))
    x = np.array(WORDS * 8)
    history = model.fit(x, (x == "red").astype("float32")[:, None], batch_size=8, epochs=4,
                        verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
