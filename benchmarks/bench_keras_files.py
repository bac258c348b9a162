"""Load and save a ~100 MB Keras file (ResNet50, 25.6M weights) in minidl and in real Keras,
alternating the two (the machine is shared), plus ONNX export of ResNet50.

    python benchmarks/bench_keras_files.py [--keras-python /work/kvenv/bin/python] [--rounds 3]

Keras runs in its own interpreter (a venv where Keras is installed, KERAS_BACKEND=torch);
each timing is one load or one save of the same file, best of the rounds. Peak memory is
the process's maximum resident size after the load, less its size before.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

KERAS_SIDE = r"""
import json, os, resource, sys, time
import keras
path, out = sys.argv[1], sys.argv[2]
if not os.path.exists(path):
    keras.applications.ResNet50(weights=None).save(path)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter(); model = keras.saving.load_model(path); load = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
t = time.perf_counter(); model.save(out); save = time.perf_counter() - t
print(json.dumps({"load": load, "save": save, "peak_mb": peak / 1024}))
"""

MINIDL_SIDE = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[3])
import minidl
minidl.set_backend("cpu")
path, out = sys.argv[1], sys.argv[2]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter(); model = minidl.models.load_model(path); load = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
t = time.perf_counter(); model.save(out); save = time.perf_counter() - t
t = time.perf_counter(); model.export(out + ".onnx", format="onnx", verbose=False)
export = time.perf_counter() - t
print(json.dumps({"load": load, "save": save, "peak_mb": peak / 1024, "onnx_export": export}))
"""


def run(python, code, *args, env=None):
    result = subprocess.run([python, "-c", code, *args], capture_output=True, text=True,
                            env=env, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keras-python", default="/work/kvenv/bin/python")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, KERAS_BACKEND="torch")
    with tempfile.TemporaryDirectory() as folder:
        source = os.path.join(folder, "resnet50.keras")   # written by Keras on the first run
        results = {"keras": [], "minidl": []}
        for _ in range(args.rounds):
            results["keras"].append(run(args.keras_python, KERAS_SIDE, source,
                                        os.path.join(folder, "k.keras"), env=env))
            results["minidl"].append(run(sys.executable, MINIDL_SIDE, source,
                                         os.path.join(folder, "m.keras"), root))
        size = os.path.getsize(source) / 1e6
    best = {who: {k: min(r[k] for r in runs) for k in runs[0]} for who, runs in results.items()}
    print(f"ResNet50 .keras file, {size:.0f} MB, best of {args.rounds} (alternating):")
    for what in ("load", "save"):
        k, m = best["keras"][what], best["minidl"][what]
        print(f"  {what}: keras {k:.2f} s, minidl {m:.2f} s, minidl/keras {m / k:.2f}")
    print(f"  peak memory of the load: keras {best['keras']['peak_mb']:.0f} MB, minidl "
          f"{best['minidl']['peak_mb']:.0f} MB (the weights: {size:.0f} MB)")
    print(f"  ONNX export of the loaded ResNet50 (minidl): {best['minidl']['onnx_export']:.2f} s")


if __name__ == "__main__":
    main()
