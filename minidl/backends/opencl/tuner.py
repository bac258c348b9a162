"""Pick the SGEMM kernel and its parameters for a device by timing candidates on it (and, when
the GPU profile's tiled family wins, the direct convolutions' tiles: its params["conv"]).

The opencl backend tunes on its first GEMM on a device it has not seen (up to
TIME_BUDGET_S seconds, announced by one line on stderr), never when backends are
listed or selected. The choice is remembered per device (platform, device name and
driver version) in MINIDL_HOME/opencl_tuning.json (default ~/.minidl/opencl_tuning.json),
so a device is tuned once. MINIDL_OPENCL_TUNE=0 neither tunes nor reads stored results:
it uses gemm.default_params, so runs (tests in particular) do not depend on the machine's
history. Run by hand, it tunes the selected device again and replaces the stored choice:

    python -m minidl.backends.opencl.tuner [--size 1024]    # re-tune now
    python -m minidl.backends.opencl.tuner --show           # print the stored choice
"""

import argparse
import json
import os
import sys
import time

import numpy as np

from ... import settings
from ...io import atomic_write
from . import conv_direct
from .gemm import DIRECT_DEFAULT, TILED_DEFAULT, Gemm, check_params, default_params

CACHE_FILE = "opencl_tuning.json"
MAX_CACHE_BYTES = 1 << 20  # a larger tuning table is not read (it holds a few entries)
# Stored choices made by another version of the kernels or candidates are tuned again.
TUNER_VERSION = 9
# Products timed for each candidate, scored by their geometric mean: the SGEMM benchmark's
# square, and the tall-skinny shapes of convolution layers (pixels x filters x taps*channels).
TUNE_SHAPES = ((1024, 1024, 1024), (8192, 32, 288), (8192, 64, 576))
TIME_BUDGET_S = 15.0    # candidates left untried once this much time has gone (build included)

# Ordered so that the likeliest winners on each kind of device are tried first.
DIRECT_CANDIDATES = [
    DIRECT_DEFAULT,
    {"family": "direct", "RM": 8, "VW": 16, "VN": 3, "local": [1, 4]},
    {"family": "direct", "RM": 4, "VW": 16, "VN": 4, "local": [1, 4]},
    {"family": "direct", "RM": 6, "VW": 8, "VN": 2, "local": [1, 4]},    # AVX2-sized
    {"family": "direct", "RM": 8, "VW": 16, "VN": 2, "local": None},
    {"family": "direct", "RM": 6, "VW": 16, "VN": 3, "local": [1, 4]},
    {"family": "direct", "RM": 12, "VW": 16, "VN": 2, "local": [1, 4]},
]
# The GPU profile's family (kernels/tile_defs.cl): tiles of 64 x 64 and more keep global
# traffic at or under 1/16 byte per flop; register blocks of 4 x 4 to 8 x 8 per work-item.
TILED_CANDIDATES = [
    TILED_DEFAULT,
    {"family": "tiled", "TSM": 128, "TSN": 128, "TSK": 16, "WPTM": 8, "WPTN": 8, "VWN": 4},
    {"family": "tiled", "TSM": 64, "TSN": 64, "TSK": 8, "WPTM": 8, "WPTN": 4, "VWN": 4},
    {"family": "tiled", "TSM": 128, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 4, "VWN": 4},
    {"family": "tiled", "TSM": 64, "TSN": 128, "TSK": 16, "WPTM": 4, "WPTN": 8, "VWN": 8},
    {"family": "tiled", "TSM": 64, "TSN": 64, "TSK": 32, "WPTM": 4, "WPTN": 4, "VWN": 4},
    {"family": "tiled", "TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 2, "WPTN": 2, "VWN": 4},
]
# The direct convolutions' tiles (conv_direct.py), tuned when the tiled family wins (its
# params["conv"]): forward pass, input and filter gradients of the layers in TUNE_CONVS timed.
CONV_CANDIDATES = [
    conv_direct.CONV_DEFAULT,
    {"TOH": 8, "TOW": 16, "TF": 64, "CK": 8, "WPP": 8, "WPF": 4},    # 128 pixels, 32 results each
    {"TOH": 8, "TOW": 8, "TF": 64, "CK": 4, "WPP": 4, "WPF": 4},     # less local memory
    {"TOH": 8, "TOW": 8, "TF": 32, "CK": 8, "WPP": 2, "WPF": 4},     # 128 work-items
    {"TOH": 16, "TOW": 16, "TF": 64, "CK": 8, "WPP": 8, "WPF": 8},   # 4 x as much reuse, 64 results
    {"TOH": 4, "TOW": 8, "TF": 32, "CK": 8, "WPP": 2, "WPF": 2},     # small groups
]
# (N, H, W, C), filters: a 32- and a 64-filter 3 x 3 "same" layer of keras_cnn at batch 4
TUNE_CONVS = (((4, 32, 32, 32), 32), ((4, 16, 16, 32), 64))
CONV_BUDGET_S = 10.0

# device_key -> "tuned", "cached" or "default": how the parameters in use were chosen
_sources = {}


def cache_path():
    return os.path.join(settings.current().home, CACHE_FILE)


def load_cache(path=None):
    """The tuning table {device_key: entry}; empty when the file is missing, unreadable or
    larger than MAX_CACHE_BYTES."""
    path = path or cache_path()
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(MAX_CACHE_BYTES + 1)
        table = json.loads(text) if len(text) <= MAX_CACHE_BYTES else None
    except (OSError, ValueError):
        return {}
    return table if isinstance(table, dict) else {}


def save_entry(device_key, entry, path=None):
    path = path or cache_path()
    table = load_cache(path)
    table[device_key] = entry
    with atomic_write(path, "w") as f:
        json.dump(table, f, indent=2, sort_keys=True)


def tuning_enabled():
    return settings.current().opencl_tune


def last_source(runtime):
    return _sources.get(runtime.device_key, "default")


def known_params(runtime):
    """(parameter set, "default" or "cached") for `runtime`'s device when one is known without
    tuning: the default when tuning is disabled, else the stored choice; else None. Cheap (reads
    the tuning file at most): backend.info() asks it."""
    if not tuning_enabled():
        return default_params(runtime), "default"
    entry = load_cache().get(runtime.device_key)
    # a choice made under the other profile (MINIDL_OPENCL_PROFILE) is made again for this one
    if (entry and entry.get("version") == TUNER_VERSION
            and entry.get("profile") in (None, runtime.profile)):
        try:
            check_params(entry["params"], runtime)
            conv_direct.conv_params(entry["params"])   # its "conv" tiles, when stored
            return entry["params"], "cached"
        except (KeyError, TypeError, ValueError):
            pass  # a hand-edited entry that cannot run here: tune again
    return None


def gemm_params(runtime):
    """The parameter set to use on `runtime`'s device: the default when tuning is disabled,
    else the stored choice, else one tuned now (and stored)."""
    known = known_params(runtime)
    if known is not None:
        _sources[runtime.device_key] = known[1]
        return known[0]
    print(f"minidl opencl: tuning the GEMM kernels for {runtime.device.name} (once per device, "
          f"up to ~{TIME_BUDGET_S + CONV_BUDGET_S:.0f} s; the choice is saved in {cache_path()}; "
          f"MINIDL_OPENCL_TUNE=0 skips this and uses the defaults)", file=sys.stderr, flush=True)
    entry = tune(runtime)
    save_entry(runtime.device_key, entry)
    _sources[runtime.device_key] = "tuned"
    return entry["params"]


class _Problem:
    """One (m, n, k) product with random operands on the device, for timing candidates."""

    def __init__(self, runtime, shape, rng):
        self.m, self.n, self.k = shape
        self.host_a = rng.standard_normal((self.m, self.k), dtype=np.float32)
        self.host_b = rng.standard_normal((self.k, self.n), dtype=np.float32)
        self.a, self.b = runtime.alloc((self.m, self.k)), runtime.alloc((self.k, self.n))
        self.c = runtime.alloc((self.m, self.n))
        runtime.write(self.a, self.host_a)
        runtime.write(self.b, self.host_b)

    @property
    def flops(self):
        return 2.0 * self.m * self.n * self.k

    def run(self, gemm):
        gemm.run(self.c, self.a, self.b, self.m, self.n, self.k, False, 1.0, 0.0)


def _prepare_candidate(runtime, params, problem):
    """A Gemm for `params`, built and checked on `problem`; None if the driver cannot build or
    run it, or it computes wrong numbers."""
    try:
        check_params(params, runtime)
        gemm = Gemm(runtime, params)
        gemm.prepare()
        problem.run(gemm)
        runtime.finish()
    except Exception:  # noqa: BLE001  a candidate this device cannot run is simply not chosen
        return None
    # the corner where ragged blocks end up
    reference = problem.host_a[-64:] @ problem.host_b[:, -64:]
    if not np.allclose(runtime.read(problem.c)[-64:, -64:], reference, rtol=1e-3, atol=1e-3):
        return None
    return gemm


def tune(runtime, candidates=None, shapes=None, repeats=3, budget_s=TIME_BUDGET_S):
    """Time each valid candidate (both families by default) on each (m, n, k) of `shapes`
    (default TUNE_SHAPES) and return the table entry {"params", "gflops", "shapes",
    "results"} of the one with the best geometric-mean GFLOP/s. The candidates are timed in
    interleaved rounds, keeping each one's best, so that a burst of load from other
    processes does not single one out."""
    shapes = [tuple(s) for s in (shapes or TUNE_SHAPES)]
    if candidates is None:
        # the likely winners for the profile go first, in case the budget runs out
        first, second = ((DIRECT_CANDIDATES, TILED_CANDIDATES) if runtime.profile == "cpu"
                         else (TILED_CANDIDATES, DIRECT_CANDIDATES))
        candidates = first[:3] + second[:2] + first[3:] + second[2:]
    rng = np.random.default_rng(0)
    problems = [_Problem(runtime, shape, rng) for shape in shapes]
    start = time.perf_counter()
    prepared = []
    for params in candidates:
        if time.perf_counter() - start > budget_s / 2 and any(g for _, g in prepared):
            break
        prepared.append((params, _prepare_candidate(runtime, params, problems[0])))
    best = [[float("inf")] * len(problems) for _ in prepared]
    for _ in range(repeats):
        for index, (_, gemm) in enumerate(prepared):
            if gemm is None:
                continue
            for p_index, problem in enumerate(problems):
                t0 = time.perf_counter()
                problem.run(gemm)
                runtime.finish()
                best[index][p_index] = min(best[index][p_index], time.perf_counter() - t0)
        if time.perf_counter() - start > budget_s:
            break
    results = []
    for (params, gemm), times in zip(prepared, best):
        if gemm is None:
            results.append({"params": params, "gflops": None})
            continue
        rates = [p.flops / t / 1e9 for p, t in zip(problems, times)]
        mean = float(np.exp(np.mean(np.log(rates))))
        results.append({"params": params, "gflops": round(mean, 2),
                        "gflops_by_shape": [round(r, 2) for r in rates]})
    timed = [r for r in results if r["gflops"] is not None]
    winner = max(timed, key=lambda r: r["gflops"]) if timed else None
    params = winner["params"] if winner else default_params(runtime)
    entry = {"params": params, "gflops": winner["gflops"] if winner else None,
             "shapes": [list(s) for s in shapes], "results": results, "version": TUNER_VERSION,
             "profile": runtime.profile}
    if params["family"] == "tiled":
        entry["conv_results"] = conv_results = tune_convolutions(runtime, params)
        timed = [r for r in conv_results if r["gflops"] is not None]
        if timed:
            entry["params"] = dict(params, conv=max(timed, key=lambda r: r["gflops"])["params"])
    return entry


class _ConvBench:
    """What conv_direct's launches use of a backend (rt, gemm_engine), with the layers of
    TUNE_CONVS and their operands on the device, and a numpy reference for checking."""

    def __init__(self, runtime, gemm_params, rng):
        from ..numpy_backend import NumpyBackend
        self.rt, self.gemm_engine = runtime, Gemm(runtime, gemm_params)
        self.layers = []
        for in_shape, filters in TUNE_CONVS:
            plan = NumpyBackend().conv2d_plan(in_shape, (3, 3, in_shape[3], filters), (1, 1), "same")
            host = [rng.standard_normal(s, dtype=np.float32)
                    for s in (plan.in_shape, (3, 3, in_shape[3], filters), plan.out_shape)]
            device = [runtime.alloc(a.shape) for a in host]
            for d, a in zip(device, host):
                runtime.write(d, a)
            outs = [runtime.alloc(s) for s in (plan.out_shape, plan.in_shape, host[1].shape)]
            self.layers.append((plan, host, device, outs))

    def run(self, params, layer):
        """The three ops of `layer` with conv parameter set `params`; False where it cannot run."""
        from .conv import flipped_plan
        plan, _, (x, weight, dout), (out, dx, dweight) = layer
        flipped = flipped_plan(plan)
        defines = [conv_direct.fitting_defines(self.rt, params, plan),
                   conv_direct.fitting_defines(self.rt, params, flipped, flip=True),
                   conv_direct.fitting_defines(self.rt, params, plan, filter_grad=True)]
        if None in defines:
            return False
        conv_direct.forward(self, out, x, weight, None, plan, defines[0])
        conv_direct.forward(self, dx, dout, weight, None, flipped, defines[1])
        conv_direct.backward_filter(self, dweight, dout, x, plan, defines[2])
        return True

    def correct(self, layer):
        """Whether the last run of `layer` matches numpy."""
        from ..numpy_backend import NumpyBackend
        plan, (x, weight, dout), _, device_outs = layer
        reference, outs = NumpyBackend(), [np.empty(t.shape, np.float32) for t in device_outs]
        reference.conv2d_forward(outs[0], x, weight, None, plan)
        reference.conv2d_backward_data(outs[1], dout, weight, plan)
        reference.conv2d_backward_filter(outs[2], None, dout, x, plan)
        return all(np.allclose(self.rt.read(d), o, rtol=1e-3, atol=1e-2)
                   for d, o in zip(device_outs, outs))


def tune_convolutions(runtime, gemm_params, candidates=None, repeats=3, budget_s=CONV_BUDGET_S):
    """Time the direct convolutions' candidates (CONV_CANDIDATES) on TUNE_CONVS's layers:
    [{"params", "gflops"}] (gflops None for a candidate that cannot run here or is wrong)."""
    bench = _ConvBench(runtime, gemm_params, np.random.default_rng(1))
    start, results = time.perf_counter(), []
    for params in candidates or CONV_CANDIDATES:
        if time.perf_counter() - start > budget_s:   # the rest are left untried
            break
        best = [float("inf")] * len(bench.layers)
        try:
            usable = all(bench.run(params, layer) for layer in bench.layers)
            runtime.finish()
            usable = usable and all(bench.correct(layer) for layer in bench.layers)
        except Exception:  # noqa: BLE001  a candidate this device cannot build or run
            usable = False
        for _ in range(repeats if usable else 0):
            for index, layer in enumerate(bench.layers):
                t0 = time.perf_counter()
                bench.run(params, layer)
                runtime.finish()
                best[index] = min(best[index], time.perf_counter() - t0)
        work = [3 * 2 * p.n * p.oh * p.ow * 9 * p.c * p.oc for p, *_ in bench.layers]
        rates = [w / t / 1e9 for w, t in zip(work, best)] if usable else None
        results.append({"params": params, "gflops": float(np.exp(np.mean(np.log(rates))))
                        if rates else None})
    return results


def main(argv=None):
    from .runtime import Runtime

    parser = argparse.ArgumentParser(
        description="Tune the SGEMM kernels on the selected OpenCL device (MINIDL_OPENCL_DEVICE) "
                    "now and store the choice, replacing a stored one.")
    parser.add_argument("--show", action="store_true",
                        help="print the stored choice and where it is kept; do not tune")
    parser.add_argument("--size", type=int, default=None,
                        help="time only this square size (default: the shapes in TUNE_SHAPES)")
    args = parser.parse_args(argv)
    runtime = Runtime()
    if args.show:
        stored = load_cache().get(runtime.device_key)
        if stored and stored.get("version") == TUNER_VERSION:
            print(f"{runtime.device_key}: stored choice {stored['params']} "
                  f"({stored.get('gflops')} GFLOP/s) in {cache_path()}")
        else:
            print(f"{runtime.device_key}: no current choice stored in {cache_path()}; the first "
                  f"GEMM tunes, or run this without --show")
        return
    print(f"tuning {runtime.device_key} (up to ~{TIME_BUDGET_S + CONV_BUDGET_S:.0f} s)", flush=True)
    entry = tune(runtime, shapes=[(args.size,) * 3] if args.size else None)
    save_entry(runtime.device_key, entry)
    print(f"GFLOP/s on (m, n, k) = {entry['shapes']}, and their geometric mean:")
    for result in entry["results"]:
        by_shape = " ".join(f"{r:7.1f}" for r in result.get("gflops_by_shape", []))
        print(f"{by_shape:>24}  {result['gflops']!s:>7}  {result['params']}")
    for result in entry.get("conv_results", []):
        rate = "-" if result["gflops"] is None else f"{result['gflops']:.1f}"
        print(f"{'direct convolutions':>24}  {rate:>7}  {result['params']}")
    print(f"chosen for {runtime.device_key}: {entry['params']} ({entry['gflops']} GFLOP/s), "
          f"saved in {cache_path()}")


if __name__ == "__main__":
    main()
