"""minidl.applications against what real Keras 3.15.1 builds for the same calls with
weights=None (tests/fixtures/keras_applications.json, written by keras_applications.py beside
it): weight counts, model name, output shape, every layer with weights (name, class, the
shape of each weight in Keras's order: what a Keras weights file maps onto by name) and the
names of all layers. The default-argument (ImageNet size) builds are checked by one slow test,
run with MINIDL_SLOW_TESTS=1."""

import json
import os
import re
from collections import Counter

import numpy as np
import pytest

import minidl
from minidl import applications
from minidl.session import clear_session

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "keras_applications.json")
with open(FIXTURE) as _f:
    KERAS = json.load(_f)

slow = pytest.mark.skipif(os.environ.get("MINIDL_SLOW_TESTS") != "1",
                          reason="builds every application at ImageNet size (minutes, GBs); "
                                 "set MINIDL_SLOW_TESTS=1")



def keras_names(builder, layers):
    """Keras's layer names, counters stripped, as minidl names them: Keras's MobileNetV3 gate
    is ReLU(6)(x + 3) / 6 on symbolic tensors, minidl's one Activation("hard_sigmoid") in the
    ReLU's place (minidl/applications/mobilenet_v3.py): one automatic "re_lu" per
    squeeze-and-excitation block is an "activation" in minidl. Keras's ConvNeXt adds each
    block's residual with `inputs + x`, minidl with one automatic Add layer."""
    names = Counter(stripped(entry[0]) for entry in layers)
    if builder.startswith("ConvNeXt"):      # Keras's residual `inputs + x`: an Add in minidl
        names["add"] += sum(entry[0].endswith("_layer_scale") for entry in layers)
    if builder.startswith("MobileNetV3"):
        gates = sum(entry[0].endswith("squeeze_excite_mul") for entry in layers)
        names["re_lu"] -= gates
        names["activation"] += gates
    return +names


def call_of(key):
    """'MobileNet(alpha=0.25, classes=10)' -> ('MobileNet', {'alpha': 0.25, 'classes': 10})."""
    builder, args = re.fullmatch(r"(\w+)\((.*)\)", key).groups()
    return builder, eval(f"dict({args})")     # the fixture's own keys, written by repr


def stripped(name):
    return re.sub(r"_\d+$", "", name)


def check(key, expected):
    builder, kwargs = call_of(key)
    clear_session()      # automatic names count from zero, as in the fixture's fresh session
    model = getattr(applications, builder)(weights=None, **kwargs)
    sizes = lambda ws: sum(int(np.prod(w.shape)) for w in ws)
    assert model.count_params() == expected["count_params"]
    assert sizes(model.trainable_weights) == expected["trainable"]
    assert sizes(model.non_trainable_weights) == expected["non_trainable"]
    assert model.name == expected["name"]
    assert list(model.output_shape[1:]) == expected["output_shape"]
    # by name: Keras lists a branching graph's layers in its own topological order
    weighted = sorted([layer.name, type(layer).__name__, [list(w.shape) for w in layer.weights]]
                      for layer in model.layers if layer.weights)
    assert weighted == sorted(entry for entry in expected["layers"] if entry[2])
    names = Counter(stripped(layer.name) for layer in model.layers)
    assert names == keras_names(builder, expected["layers"])
    return model


@pytest.fixture(autouse=True)
def numpy_first():
    minidl.set_backend("numpy")
    minidl.set_seed(0)
    yield
    minidl.set_backend("numpy")


@pytest.mark.parametrize("key", sorted(KERAS["small"]))
def test_small_builds_match_keras(key):
    check(key, KERAS["small"][key])


@slow
@pytest.mark.parametrize("key", sorted(KERAS["full"]))
def test_imagenet_size_builds_match_keras(key):
    check(key, KERAS["full"][key])
