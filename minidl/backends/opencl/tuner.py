"""Pick the SGEMM kernel and its parameters for a device by timing candidates on it.

The choice is remembered per device (platform, device name and driver version)
in MINIDL_HOME/opencl_tuning.json (default ~/.minidl/opencl_tuning.json), so a
device is tuned once. MINIDL_OPENCL_TUNE=0 neither tunes nor reads stored results: it
uses gemm.default_params, so runs (tests in particular) do not depend on the machine's
history. Run it by hand with

    python -m minidl.backends.opencl.tuner [--force] [--size 1024]
"""

import argparse
import json
import os
import time

import numpy as np

from ...io import atomic_write
from .gemm import DIRECT_DEFAULT, TILED_DEFAULT, Gemm, check_params, default_params

TUNE_ENV = "MINIDL_OPENCL_TUNE"
HOME_ENV = "MINIDL_HOME"
CACHE_FILE = "opencl_tuning.json"
# Stored choices made by another version of the kernels or candidates are tuned again.
TUNER_VERSION = 6
TUNE_SIZE = 1024        # square problem timed for each candidate (the SGEMM benchmark size)
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
TILED_CANDIDATES = [
    TILED_DEFAULT,
    {"family": "tiled", "TSM": 32, "TSN": 32, "TSK": 16, "WPTM": 2, "WPTN": 2, "VWN": 4},
    {"family": "tiled", "TSM": 64, "TSN": 64, "TSK": 8, "WPTM": 8, "WPTN": 4, "VWN": 4},
    {"family": "tiled", "TSM": 128, "TSN": 64, "TSK": 16, "WPTM": 8, "WPTN": 4, "VWN": 4},
]

# device_key -> "tuned", "cached" or "default": how the parameters in use were chosen
_sources = {}


def cache_path():
    home = os.environ.get(HOME_ENV) or os.path.join(os.path.expanduser("~"), ".minidl")
    return os.path.join(home, CACHE_FILE)


def load_cache(path=None):
    """The tuning table {device_key: entry}; empty when the file is missing or unreadable."""
    path = path or cache_path()
    try:
        with open(path, encoding="utf-8") as f:
            table = json.load(f)
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
    return os.environ.get(TUNE_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def last_source(runtime):
    return _sources.get(runtime.device_key, "default")


def gemm_params(runtime):
    """The parameter set to use on `runtime`'s device: the default when tuning is disabled,
    else the stored choice, else one tuned now (and stored)."""
    if not tuning_enabled():
        _sources[runtime.device_key] = "default"
        return default_params(runtime)
    entry = load_cache().get(runtime.device_key)
    if entry and entry.get("version") == TUNER_VERSION:
        try:
            check_params(entry["params"], runtime)
            _sources[runtime.device_key] = "cached"
            return entry["params"]
        except (KeyError, TypeError, ValueError):
            pass  # a hand-edited entry that cannot run here: tune again
    entry = tune(runtime)  # TUNE_SIZE is read at call time, so tests can shrink it
    save_entry(runtime.device_key, entry)
    _sources[runtime.device_key] = "tuned"
    return entry["params"]


def _prepare_candidate(runtime, params, size, a, b, c, reference):
    """A Gemm for `params`, built and checked on a size^3 product; None if the driver cannot
    build or run it, or it computes wrong numbers."""
    try:
        check_params(params, runtime)
        gemm = Gemm(runtime, params)
        gemm.prepare()
        gemm.run(c, a, b, size, size, size, False, 1.0, 0.0)
        runtime.finish()
    except Exception:  # noqa: BLE001  a candidate this device cannot run is simply not chosen
        return None
    if not np.allclose(runtime.read(c)[-64:, -64:], reference, rtol=1e-3, atol=1e-3):
        return None
    return gemm


def tune(runtime, candidates=None, size=None, repeats=3, budget_s=TIME_BUDGET_S):
    """Time each valid candidate (both families by default) and return the table entry
    {"params", "gflops", "size", "results"} of the fastest. The candidates are timed in
    interleaved rounds, keeping each one's best, so that a burst of load from other
    processes does not single one out."""
    size = size or TUNE_SIZE
    if candidates is None:
        # the likely winners for this kind of device go first, in case the budget runs out
        first, second = ((DIRECT_CANDIDATES, TILED_CANDIDATES) if runtime.is_cpu
                         else (TILED_CANDIDATES, DIRECT_CANDIDATES))
        candidates = first[:3] + second[:2] + first[3:] + second[2:]
    rng = np.random.default_rng(0)
    host_a = rng.standard_normal((size, size), dtype=np.float32)
    host_b = rng.standard_normal((size, size), dtype=np.float32)
    reference = host_a[-64:] @ host_b[:, -64:]   # the corner where ragged blocks end up
    a, b, c = runtime.alloc((size, size)), runtime.alloc((size, size)), runtime.alloc((size, size))
    runtime.write(a, host_a)
    runtime.write(b, host_b)
    start = time.perf_counter()
    prepared = []
    for params in candidates:
        if time.perf_counter() - start > budget_s / 2 and any(g for _, g in prepared):
            break
        prepared.append((params, _prepare_candidate(runtime, params, size, a, b, c, reference)))
    best = [float("inf")] * len(prepared)
    for _ in range(repeats):
        for index, (_, gemm) in enumerate(prepared):
            if gemm is None:
                continue
            t0 = time.perf_counter()
            gemm.run(c, a, b, size, size, size, False, 1.0, 0.0)
            runtime.finish()
            best[index] = min(best[index], time.perf_counter() - t0)
        if time.perf_counter() - start > budget_s:
            break
    results = [{"params": params, "gflops": None if gemm is None else round(2.0 * size ** 3 / t / 1e9, 2)}
               for (params, gemm), t in zip(prepared, best)]
    timed = [r for r in results if r["gflops"] is not None]
    if not timed:
        return {"params": default_params(runtime), "gflops": None, "size": size,
                "results": results, "version": TUNER_VERSION}
    winner = max(timed, key=lambda r: r["gflops"])
    return {"params": winner["params"], "gflops": winner["gflops"], "size": size,
            "results": results, "version": TUNER_VERSION}


def main(argv=None):
    from .runtime import Runtime

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="tune even if a result is stored")
    parser.add_argument("--size", type=int, default=None,
                        help=f"square GEMM size to time (default {TUNE_SIZE})")
    args = parser.parse_args(argv)
    runtime = Runtime()
    stored = load_cache().get(runtime.device_key)
    if stored and stored.get("version") == TUNER_VERSION and not args.force:
        print(f"{runtime.device_key}: stored choice {stored['params']} "
              f"({stored.get('gflops')} GFLOP/s); --force to tune again")
        return
    entry = tune(runtime, size=args.size)
    save_entry(runtime.device_key, entry)
    for result in entry["results"]:
        print(f"{result['gflops']!s:>8} GFLOP/s  {result['params']}")
    print(f"chosen for {runtime.device_key}: {entry['params']} ({entry['gflops']} GFLOP/s), "
          f"saved in {cache_path()}")


if __name__ == "__main__":
    main()
