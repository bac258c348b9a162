"""Runs the corpus of Keras 3 examples (tests/keras_examples/ex_*.py), each in its own process
on the chosen backend, and prints a table of pass / fail with the time each took.

    python tests/keras_examples/run_all.py                  # all of them, default backend
    python tests/keras_examples/run_all.py --backend opencl
    python tests/keras_examples/run_all.py --fast           # the subset tests/test_keras_examples.py runs
    python tests/keras_examples/run_all.py ex_antirectifier # some by name

Exits 1 when any fails, printing the last lines of its output."""

import argparse
import glob
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# the ones that pass (each in about 10 s or less on 2 cores; two to three minutes together), run
# by tests/test_keras_examples.py; README.md here lists the others and why they fail
FAST = ["ex_addition_rnn", "ex_antirectifier", "ex_bidirectional_lstm", "ex_convmixer",
        "ex_custom_callbacks", "ex_denoising_autoencoder", "ex_distillation", "ex_eanet",
        "ex_endpoint_layer", "ex_functional_api", "ex_imbalanced_classification",
        "ex_involution", "ex_lstm_seq2seq", "ex_masking_padding", "ex_mixture_density",
        "ex_memory_efficient_embeddings", "ex_mixup", "ex_mnist_convnet", "ex_patch_convnet", "ex_perceiver",
        "ex_reproducibility", "ex_sequential_model", "ex_serialization_saving", "ex_shiftvit",
        "ex_structured_data_from_scratch",
        "ex_subclassing_conv_layers", "ex_subclassing_layers",
        "ex_text_classification_from_scratch", "ex_text_classification_transformer", "ex_timeseries_classification",
        "ex_training_builtin", "ex_transfer_learning", "ex_vae", "ex_vision_transformer",
        "ex_weather_forecasting", "ex_working_with_rnns"]


def examples():
    return sorted(os.path.splitext(os.path.basename(p))[0]
                  for p in glob.glob(os.path.join(HERE, "ex_*.py")))


def run(name, backend, timeout):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if backend:
        env["MINIDL_BACKEND"] = backend
    start = time.time()
    try:
        done = subprocess.run([sys.executable, os.path.join(HERE, name + ".py")], cwd=HERE, env=env,
                              capture_output=True, text=True, timeout=timeout)
        ok, output = done.returncode == 0, done.stdout + done.stderr
    except subprocess.TimeoutExpired as exc:
        ok, output = False, f"timed out after {timeout} s\n{exc.stdout or ''}"
    return ok, time.time() - start, output


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--backend", default=None)
    parser.add_argument("--fast", action="store_true")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    names = args.names or (FAST if args.fast else examples())
    failed = []
    for name in names:
        ok, seconds, output = run(name, args.backend, args.timeout)
        print(f"{'pass' if ok else 'FAIL'}  {seconds:6.1f} s  {name}", flush=True)
        if not ok:
            failed.append((name, output))
    for name, output in failed:
        print(f"\n--- {name} ---\n" + "\n".join(output.strip().splitlines()[-15:]))
    print(f"\n{len(names) - len(failed)} of {len(names)} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
