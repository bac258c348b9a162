"""The op table of tests/test_ops.py at small shapes on the opencl backend, for running under
Oclgrind (tests/test_oclgrind.py starts it; README shows the command for the full table).

    oclgrind --data-races --uninitialized --check-api --log LOG \
        python tests/_oclgrind_ops.py [--all | --match ROW_ID_PART] [--out census.json]

By default it runs the cheapest row of each op of the table, each op's cheapest "-nan" row and
the rows of EXTRA_ROWS (about 80 rows, run twice: a minute or two; --all: every row, hours),
on the opencl backend with the GPU profile's kernels (small 16 x 16 GEMM tiles and 4 x 4 x 8
direct convolution tiles, so that tiles are ragged; the convolution rows again with the
implicit-GEMM convolution tiles),
comparing results with the numpy reference as test_ops does. Every row runs again with the CPU
profile's kernels (the register-blocked GEMM family), and one long-k product takes its split-K
path, so that every kernel of kernels/*.cl runs at least once. It writes JSON:
the rows run, the rows that failed (with the error), and every kernel launched.
"""

import argparse
import json
import os
import re
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402

LONG_K = (3, 5, 4100)
# Rows of tests/test_ops.py added to the cheapest row of each op, each for the kernels it reaches:
EXTRA_ROWS = (
    "softmax-1x1", "cross_entropy-1x1-dense-clipped", "cross_entropy-1x1-binary-clipped",
    "accuracy-1x1-dense", "softmax_ce-1x1-dense", "sgd-momentum-1",   # kernels for special cases
    "gemm-37x53x29-a0.7b-1.3",               # several ragged 16 x 16 tiles: races between groups
    "conv2d-1x4x7x3-k3x2x8-s3x3-same",       # implicit convolutions (8 filters, direct family)
    "conv2d-1x9x1x10-k4x1x34-s1x1-valid",    # stride 1, 10 channels: dx as a flipped convolution
)   # m, n, k: a few blocks of C over a long k axis takes the split-K path


def kernels_defined(runtimes):
    """Every kernel of minidl/backends/opencl/kernels/*.cl: those of each program `runtimes`
    built, as the compiler names them (kernels a macro makes included), and for a file no
    program was built from, its literal `__kernel void name(` lines. Builds nothing: a file
    built alone without its defines fails, and Oclgrind would report the failed build."""
    import pyopencl as cl
    from importlib import resources
    from minidl.backends.opencl.runtime import COMMON_SOURCE
    names, built = set(), set()
    for runtime in runtimes:
        for (filename, _), program in runtime._programs.items():   # its program cache
            built.add(filename)
            names.update(n for n in program.get_info(cl.program_info.KERNEL_NAMES).split(";") if n)
    folder = resources.files("minidl.backends.opencl").joinpath("kernels")
    for entry in folder.iterdir():
        if entry.name.endswith(".cl") and entry.name not in built and entry.name != COMMON_SOURCE:
            names.update(re.findall(r"__kernel\s+(?:__attribute__\(\(.*?\)\)\s+)?void\s+([a-z]\w*)\s*\(",
                                    entry.read_text()))
    return names


def row_size(case, build_calls):
    """(largest array, largest multiply-add count) of a test_ops row."""
    calls, _ = build_calls(case)
    largest, work = 0, 0
    for c in calls:
        arrays = [getattr(a, "array", a) for a in c.args]
        arrays += [x for a in c.args if isinstance(a, list) for x in a]
        sizes = [x.size for x in arrays if isinstance(x, np.ndarray)]
        largest = max([largest] + sizes)
        plans = [a for a in c.args if type(a).__name__ == "Plan"]
        if c.op == "gemm" or plans:
            # a product's or a convolution's work is bounded by (sum of its operands)^1.5
            work = max(work, int(sum(sizes) ** 1.5))
    return largest, work


def select_rows(test_ops, match="", extra=EXTRA_ROWS):
    """Per op of the table, its cheapest row and its cheapest "-nan" row; then the rows named in
    `extra` (or only the rows whose id contains `match`, when given)."""
    if match:
        return [case for case in test_ops.CASES if match in case.id]
    cheapest = {}
    for case in test_ops.CASES:
        largest, work = row_size(case, test_ops.build_calls)
        key = (case.op, case.id.endswith("-nan"))
        if key not in cheapest or (work, largest) < cheapest[key][0]:
            cheapest[key] = ((work, largest), case)
    chosen = [case for _, case in cheapest.values()]
    by_id = {case.id: case for case in test_ops.CASES}
    unknown = [name for name in extra if name not in by_id]
    if unknown:
        raise SystemExit(f"{__file__}: EXTRA_ROWS names rows tests/test_ops.py no longer has: "
                         f"{unknown}; pick others that launch the same kernels")
    return chosen + [by_id[name] for name in extra if by_id[name] not in chosen]


def run_int8_ops(backend):
    """kernels/qgemm.cl's int8 ops (not backend contract ops, so not in test_ops's table) at
    small ragged shapes, against the integer numpy reference; the ids of the rows that differ."""
    import test_quantization as tq
    from minidl.backends.base import make_window
    ops, rng, failed = backend, np.random.default_rng(0), []

    def check(name, out, *args):
        expected = out.copy()
        getattr(tq.REFERENCE, name)(expected, *args)
        if not np.array_equal(tq._run(ops, name, out, *args), expected):
            failed.append(name)

    a = rng.integers(0, 256, (5, 11), dtype=np.uint8)
    _, w, offset, mult = tq._layer_arrays(rng, 11, 19, (0.02, 7), 0.05)
    check("qgemm_forward", np.zeros((5, 19), np.uint8), a, w, offset, mult, 3, True)
    x = rng.integers(0, 256, (1, 5, 4, 3), dtype=np.uint8)
    plan = make_window(x.shape, (3, 2), (2, 1), "same", 6)
    _, w, offset, mult = tq._layer_arrays(rng, 18, 6, (0.02, 7), None)
    check("qconv2d_forward", np.zeros((1, plan.oh, plan.ow, 6), np.float32), x, w, offset, mult, 0,
          False, 7, plan)
    f = rng.standard_normal((2, 3, 5)).astype(np.float32)
    check("quantize_u8", np.zeros(f.shape, np.uint8), f, 0.03, 90)
    check("dequantize_u8", np.zeros(x.shape, np.float32), x, 0.03, 90)
    pool = make_window(x.shape, (2, 2), (2, 2), "same", None)
    check("max_pool2d_u8", np.zeros((1, pool.oh, pool.ow, 3), np.uint8), x, pool)
    check("add_u8", np.zeros(x.shape, np.uint8), x, x[:, ::-1].copy(), 10, 200, 3 << 19, 5 << 17, 30, True)
    return failed


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=None, help="write the JSON census here (default stdout)")
    parser.add_argument("--match", default="", help="only rows whose id contains this")
    parser.add_argument("--all", action="store_true", help="every row of the table")
    args = parser.parse_args(argv)

    os.environ.setdefault("MINIDL_OPENCL_TUNE", "0")
    # Oclgrind 21.10 aborts on the `freeze` instruction of LLVM's optimized builds; pyopencl's
    # binary cache would hand back programs built without the option.
    os.environ.setdefault("MINIDL_OPENCL_BUILD_OPTIONS", "-cl-opt-disable")
    os.environ["PYOPENCL_NO_CACHE"] = "1"
    os.environ["MINIDL_OPENCL_PROFILE"] = "gpu"
    from minidl import settings
    settings.reload()
    import test_ops
    from conftest import SMALL_TILES
    from minidl.backends.opencl import create
    from minidl.backends.opencl.gemm import direct_default, Gemm
    from minidl.backends.opencl.runtime import Runtime

    launched = set()
    launch = Runtime.launch

    def counting_launch(self, kernel, *rest):
        launched.add(kernel.function_name)
        return launch(self, kernel, *rest)

    Runtime.launch = counting_launch
    # Oclgrind 21.10 reports reads of a buffer made after another was released as uninitialized
    # (it reuses the address and keeps the old shadow state): no buffer is released here.
    kept = []
    alloc = Runtime.alloc

    def keeping_alloc(self, *args, **kwargs):
        tensor = alloc(self, *args, **kwargs)
        kept.append(tensor.buffer)
        return tensor

    Runtime.alloc = keeping_alloc
    gpu = create(gemm_params=dict(SMALL_TILES))
    os.environ["MINIDL_OPENCL_PROFILE"] = "cpu"   # the CPU profile's kernels, on a runtime of their own
    settings.reload()
    cpu = create(runtime=Runtime(), gemm_params=direct_default(4))
    os.environ["MINIDL_OPENCL_PROFILE"] = "gpu"
    settings.reload()
    # the implicit-GEMM tiles (conv_tiled.cl), which the GPU profile runs where the direct
    # convolutions do not fit the device
    gemm_conv = create(runtime=gpu.rt, gemm_params=dict(SMALL_TILES, conv=False))
    runs, failed = [], []
    rows = test_ops.CASES if args.all else select_rows(test_ops, args.match)
    for case in rows:
        variants = (("gpu", gpu), ("cpu", cpu)) + ((("gpu-gemm-conv", gemm_conv),) if case.op == "conv2d" else ())
        for label, backend in variants:
            try:
                test_ops.check_case(backend, case)
            except BaseException as exc:  # noqa: BLE001 - pytest.skip and assertion errors alike
                if type(exc).__name__ == "Skipped":
                    continue
                failed.append({"row": case.id, "family": label,
                               "error": "".join(traceback.format_exception_only(type(exc), exc))})
            runs.append(f"{case.id} [{label}]")
    if not args.match:
        rng = np.random.default_rng(0)
        m, n, k = LONG_K
        a, b = rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32)
        c = cpu.zeros((m, n))
        Gemm(cpu.rt, direct_default(4)).run(c, cpu.from_numpy(a), cpu.from_numpy(b),
                                            m, n, k, False, 1.0, 0.0)
        if not np.allclose(cpu.to_numpy(c), a @ b, rtol=1e-4, atol=1e-3):
            failed.append({"row": f"split-k gemm {LONG_K}", "family": "direct", "error": "wrong"})
        runs.append(f"split-k gemm {LONG_K} [cpu]")
        failed += [{"row": f"int8 {name}", "family": "qgemm.cl", "error": "differs from the reference"}
                   for name in run_int8_ops(gpu)]
        runs.append("int8 ops [qgemm.cl]")
    census = {"rows": runs, "failed": failed, "launched": sorted(launched),
              "defined": sorted(kernels_defined((gpu.rt, cpu.rt)))}
    text = json.dumps(census, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        print(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
