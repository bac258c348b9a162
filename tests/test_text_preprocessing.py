"""Text and structured-data preprocessing layers against Keras 3.15.1.

tests/fixtures/keras_text_preprocessing/expected.json holds what Keras's own layers (run
through TensorFlow, which they need) returned for each case; make_expected.py beside it wrote
it. These layers run on the host (minidl/layers/host_preprocessing.py), the same on every
backend, so they are compared once, not per backend.
"""

import json
import os

import numpy as np
import pytest

import minidl
from minidl import layers
from minidl.layers.string_hashing import fingerprint64, siphash24

from layer_runs import LayerRun

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_text_preprocessing")
with open(os.path.join(HERE, "expected.json"), encoding="utf-8") as _f:
    EXPECTED = json.load(_f)
CASES = {case["id"]: case for case in EXPECTED["cases"]}


def make_layer(case):
    kwargs = dict(case["kwargs"])
    if isinstance(kwargs.get("ngrams"), list):
        kwargs["ngrams"] = tuple(kwargs["ngrams"])
    layer = getattr(layers, case["layer"])(**kwargs)
    if case["adapt"] is not None:
        layer.adapt(np.array(case["adapt"]))
    return layer


def call(layer, value):
    if isinstance(value, list) and value and value[0] == "weights":
        return layer(np.array(value[1]), count_weights=np.array(value[2]))
    if isinstance(value, list) and value and value[0] in ("pair", "triple"):
        return layer([np.array(v) for v in value[1:]])
    return layer(np.array(value))


def assert_output(ours, expected, where):
    ours = np.asarray(ours)
    assert list(ours.shape) == expected["shape"], where
    if expected["dtype"] == "str":
        assert ours.dtype.kind == "U", where
        assert ours.tolist() == expected["values"], where
        return
    assert str(ours.dtype) == expected["dtype"], where
    want = np.array(expected["values"], dtype=ours.dtype).reshape(expected["shape"])
    if ours.dtype.kind == "f":
        np.testing.assert_allclose(ours, want, rtol=1e-6, atol=1e-7, err_msg=where)
    else:
        np.testing.assert_array_equal(ours, want, err_msg=where)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_same_outputs_as_keras(case_id):
    case = CASES[case_id]
    layer = make_layer(case)
    for i, value in enumerate(case["calls"]):
        assert_output(call(layer, value), case["outputs"][i], f"{case_id} call {i}")
    if "vocabulary" in case:
        assert layer.get_vocabulary() == case["vocabulary"]
        assert layer.vocabulary_size() == case["vocabulary_size"]
    if "bin_boundaries" in case:
        np.testing.assert_allclose(layer.bin_boundaries, case["bin_boundaries"], rtol=1e-6)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_config_round_trip_keeps_what_was_learned(case_id):
    case = CASES[case_id]
    layer = make_layer(case)
    config = json.loads(json.dumps(layer.get_config()))   # as a model file would keep it
    again = type(layer).from_config(config)
    assert again.get_config() == layer.get_config()
    for value in case["calls"]:
        np.testing.assert_array_equal(np.asarray(call(again, value)), np.asarray(call(layer, value)))


def test_serialize_and_deserialize_by_name():
    layer = layers.TextVectorization(max_tokens=5)
    layer.adapt(["a b c", "a b", "a"])
    config = minidl.saving.serialize_keras_object(layer)
    again = minidl.saving.deserialize_keras_object(json.loads(json.dumps(config)))
    assert isinstance(again, layers.TextVectorization)
    assert again.get_vocabulary() == layer.get_vocabulary()


def test_the_string_layers_on_a_numeric_model_tensor_are_refused_with_a_clear_error():
    # they sit in models on string Inputs (tests/test_string_inputs.py); on numbers, Keras's
    # TensorFlow backend refuses a string table's lookup of them too
    x = minidl.Input((3,), name="numbers")
    for layer in (layers.StringLookup(vocabulary=["a"]), layers.TextVectorization()):
        with pytest.raises(TypeError, match="takes strings; its input 'numbers'.*'float32'"):
            layer(x)
    with pytest.raises(TypeError, match="runs on the host.*before fit"):
        layers.HashedCrossing(4)((x, x))


NUMERIC_IN_MODEL = [
    ("one_hot_column", lambda: layers.CategoryEncoding(5, output_mode="one_hot"), [[3], [1], [0]]),
    ("one_hot_rows", lambda: layers.CategoryEncoding(5, output_mode="one_hot"), [[3, 2], [1, 0]]),
    ("multi_hot", lambda: layers.CategoryEncoding(5), [[3, 3, 0], [1, 4, 4]]),
    ("count", lambda: layers.CategoryEncoding(6, output_mode="count"), [[5, 5, 0, 5], [1, 2, 1, 1]]),
    ("buckets", lambda: layers.Discretization([0.0, 1.0, 2.5]), [[-1.0, 0.0, 3.0], [1.0, 2.4, 2.5]]),
    ("bucket_one_hot", lambda: layers.Discretization([0.0, 1.0], output_mode="one_hot"),
     [[-1.0], [0.5], [7.0]]),
    ("bucket_count", lambda: layers.Discretization([0.0, 1.0], output_mode="count"),
     [[-1.0, 0.5, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]]),
]


@pytest.mark.parametrize("name,make,data", NUMERIC_IN_MODEL, ids=[c[0] for c in NUMERIC_IN_MODEL])
def test_numeric_layers_run_on_every_backend_as_on_the_host(active_backend, name, make, data):
    """CategoryEncoding and Discretization in a model: backend ops giving the host's (Keras's)
    values, and no input gradient."""
    layer = make()
    x = np.array(data)
    expected = layer(x).astype(np.float32)              # the host path, compared with Keras above
    layer.build_once(x.shape[1:])
    backend = minidl.get_backend()
    layer.attach(backend)
    run = LayerRun(layer, input_grad_needed=False)
    out = backend.to_numpy(run.forward(backend.from_numpy(x.astype(np.float32)), True))
    np.testing.assert_array_equal(out, expected)
    assert tuple(out.shape[1:]) == layer.output_shape
    assert run.backward(backend.from_numpy(np.ones_like(out))) is None


def test_category_encoding_and_discretization_in_a_saved_model(active_backend, tmp_path):
    color = minidl.Input((1,), dtype="int32", name="color")
    size = minidl.Input((1,), name="size")
    features = layers.Concatenate()([layers.CategoryEncoding(4, output_mode="one_hot")(color),
                                     layers.Discretization([1.0, 2.0], output_mode="one_hot")(size)])
    model = minidl.Model([color, size], layers.Dense(1, activation="sigmoid")(features))
    model.compile(optimizer="adam", loss="binary_crossentropy")
    rng = np.random.default_rng(0)
    colors = rng.integers(0, 4, (64, 1)).astype(np.float32)
    sizes = rng.uniform(0, 3, (64, 1)).astype(np.float32)
    y = ((colors[:, 0] == 2) | (sizes[:, 0] > 2)).astype(np.float32)
    model.fit([colors, sizes], y, epochs=2, batch_size=16, verbose=0)
    path = tmp_path / "model.keras"
    model.save(path)
    again = minidl.models.load_model(path)
    np.testing.assert_allclose(again.predict([colors, sizes], verbose=0),
                               model.predict([colors, sizes], verbose=0), rtol=1e-6)


def test_a_preprocessed_batch_feeds_a_model(active_backend):
    """The intended use: vectorize on the host, then fit on the backend."""
    vectorize = layers.TextVectorization(max_tokens=20, output_sequence_length=6)
    texts = np.array(["good movie", "bad movie", "good good fun", "bad boring film"] * 4)
    vectorize.adapt(texts)
    x = vectorize(texts).astype(np.float32)
    y = np.array([1, 0, 1, 0] * 4, dtype=np.float32)
    model = minidl.Sequential([minidl.Input((6,)), layers.Embedding(20, 4),
                               layers.GlobalAveragePooling1D(), layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    history = model.fit(x, y, epochs=2, batch_size=8, verbose=0)
    assert np.isfinite(history.history["loss"]).all()


@pytest.mark.parametrize("make,message", [
    (lambda: layers.TextVectorization(output_mode="one_hot"), "ragged"),
    (lambda: layers.TextVectorization(output_mode="multi_hot", output_sequence_length=3),
     "output_sequence_length"),
    (lambda: layers.TextVectorization(split="comma"), "split"),
    (lambda: layers.StringLookup(invert=True, output_mode="count"), "invert"),
    (lambda: layers.StringLookup(vocabulary=["a", "a"]), "repeated"),
    (lambda: layers.StringLookup(max_tokens=1), "max_tokens"),
    (lambda: layers.IntegerLookup(vocabulary_dtype="int32"), "vocabulary_dtype"),
    (lambda: layers.CategoryEncoding(), "num_tokens"),
    (lambda: layers.Discretization(), "num_bins"),
    (lambda: layers.Discretization(num_bins=3, bin_boundaries=[1.0]), "Both"),
    (lambda: layers.Hashing(0), "num_bins"),
    (lambda: layers.Hashing(4, salt="x"), "salt"),
    (lambda: layers.HashedCrossing(4, output_mode="count"), "output_mode"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_bad_arguments_name_what_is_wrong(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_inputs_name_the_layer_and_the_values():
    with pytest.raises(ValueError, match=r"category_encoding.*0 <= values < num_tokens.*from 0 to 7"):
        layers.CategoryEncoding(4)(np.array([0, 7]))
    with pytest.raises(ValueError, match="num_oov_indices=0.*'zz'"):
        layers.StringLookup(vocabulary=["a"], num_oov_indices=0)(np.array(["a", "zz"]))
    with pytest.raises(ValueError, match="expects strings"):
        layers.StringLookup(vocabulary=["a"])(np.array([1.5]))
    with pytest.raises(ValueError, match="expects integers"):
        layers.IntegerLookup(vocabulary=[1])(np.array([1.5]))
    with pytest.raises(ValueError, match="rank must be 1 or the last shape dimension must be 1"):
        layers.TextVectorization(vocabulary=["a"])(np.array([["a", "b"]]))
    with pytest.raises(RuntimeError, match="set the layer's vocabulary"):
        layers.StringLookup(output_mode="multi_hot")(np.array(["a"]))
    with pytest.raises(ValueError, match="Cannot adapt"):
        layers.StringLookup(vocabulary=["a"]).adapt(np.array(["a"]))
    with pytest.raises(ValueError, match="at least two inputs"):
        layers.HashedCrossing(4)([np.array(["a"])])


def test_adapt_accepts_an_iterable_of_batches():
    batches = [np.array(["a b", "b"]), np.array(["c b", "c"])]
    layer = layers.TextVectorization()
    layer.adapt(iter(batches))
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "c", "a"]
    layer.adapt(iter(batches), steps=1)
    assert layer.get_vocabulary() == ["", "[UNK]", "b", "a"]


def test_hashes_are_tensorflows():
    """Fingerprint64 and SipHash against values TensorFlow 2.21 printed (every length path)."""
    assert fingerprint64(b"") == 0x9AE16A3B2F90404F
    hashed = {s: fingerprint64(s.encode()) % 10 for s in ("a", "b", "hello world")}
    case = CASES["hash_strings"]
    assert [hashed[v] for v in ("a", "b", "hello world")] == \
        [row[0] for row in case["outputs"][0]["values"][:3]]
    # to_hash_bucket_strong(s, 2**63 - 1, key=[3, 7]) for '', 'a', 'hello world', 'x' * 100
    expected = [4260434136022711674, 1834374123143231496, 6812816163789900749, 8509967637703902494]
    got = [siphash24(3, 7, s) % (2**63 - 1) for s in (b"", b"a", b"hello world", b"x" * 100)]
    assert got == expected
