"""The fast part of the corpus of Keras 3 examples (tests/keras_examples/, see its README): each
script runs in its own process on the default backend, as run_all.py runs it, and must exit 0.
The whole corpus (some of it documents gaps and fails) is `python tests/keras_examples/run_all.py`."""

import os
import sys

import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "keras_examples")
sys.path.insert(0, HERE)
import run_all  # noqa: E402


def test_fast_examples_exist():
    assert set(run_all.FAST) <= set(run_all.examples()), set(run_all.FAST) - set(run_all.examples())


@pytest.mark.parametrize("name", run_all.FAST)
def test_example_runs(name):
    ok, seconds, output = run_all.run(name, None, timeout=300)
    tail = "\n".join(output.strip().splitlines()[-25:])
    assert ok, f"{name} failed after {seconds:.1f} s:\n{tail}"
