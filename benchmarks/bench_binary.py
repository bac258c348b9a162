"""Binary (xnor-popcount) inference against float, beside PyTorch, in one run.

    python benchmarks/bench_binary.py [--backend cpu] [--rounds 7] [--json out.json]

Rows:
  layer  - a binary 3x3 QuantConv2D 256->256 on 16x16, batch 32 (sign input and kernel,
           pad_values=1, converted with lq.convert) against the float Conv2D of the same shape;
  model  - a BinaryNet-style CIFAR-10 model (minidl.zoo.binarynet) converted (BatchNormalization
           between binary layers folded into integer thresholds), the same converted with
           fold_batchnorm=False, and its float twin (the same topology with plain Conv2D / Dense).
Each contender's predict is timed once per round, the contenders alternating (the machine is
shared and noisy); the median of the rounds is reported, with PyTorch's float conv2d
(channels_last, same threads) as the outside yardstick. The cpu's ISA and popcount path are
printed with the figures.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE)]

import minidl  # noqa: E402
import minidl.larq as lq  # noqa: E402


def layer_models(channels=256, size=16):
    signs = dict(input_quantizer="ste_sign", kernel_quantizer="ste_sign", kernel_constraint="weight_clip")
    binary = minidl.Sequential([minidl.layers.Input((size, size, channels)),
                                lq.layers.QuantConv2D(channels, 3, padding="same", pad_values=1.0, **signs)])
    lq.convert(binary)
    float_ = minidl.Sequential([minidl.layers.Input((size, size, channels)),
                                minidl.layers.Conv2D(channels, 3, padding="same")])
    return binary, float_


def model_trio():
    """(converted with folded BatchNormalizations, converted without, float twin)."""
    from minidl import zoo
    binary = zoo.binarynet(binary=True)
    unfolded = zoo.binarynet(binary=True)
    unfolded.set_weights(binary.get_weights())
    lq.convert(binary)
    lq.convert(unfolded, fold_batchnorm=False)
    return binary, unfolded, zoo.binarynet(binary=False)


def torch_conv(x, channels, threads):
    import torch
    torch.set_num_threads(threads)
    conv = torch.nn.Conv2d(channels, channels, 3, padding=1).eval()
    conv = conv.to(memory_format=torch.channels_last)
    tx = torch.from_numpy(x.transpose(0, 3, 1, 2).copy()).contiguous(memory_format=torch.channels_last)

    def run():
        with torch.no_grad():
            conv(tx)
    return run


def timed(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def measure(contenders, rounds):
    for run in contenders.values():   # warm up: plans, packed kernels, compiled programs
        run()
    times = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            times[name].append(timed(run))
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--skip-model", action="store_true")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    minidl.set_backend(args.backend)
    minidl.set_seed(0)
    backend = minidl.get_backend()
    info = backend.info()
    if args.backend == "cpu":
        from minidl._cpu_kernels import lib
        info["popcount"] = ("generic", "avx2 vpshufb", "avx512 vpopcntdq")[lib.minidl_binary_popcount_path()]
    threads = int(info.get("threads", os.cpu_count() or 1))
    print(f"backend: {info}")
    rng = np.random.default_rng(0)
    results = {"info": {k: str(v) for k, v in info.items()}}

    x = rng.standard_normal((args.batch, 16, 16, 256)).astype(np.float32)
    binary, float_ = layer_models()
    contenders = {"binary": lambda: binary.predict(x, batch_size=args.batch, verbose=0),
                  "float": lambda: float_.predict(x, batch_size=args.batch, verbose=0)}
    try:
        contenders["torch float"] = torch_conv(x, 256, threads)
    except ImportError:
        pass
    ms = measure(contenders, args.rounds)
    results["layer"] = ms
    print(f"binary 3x3 QuantConv2D 256->256 16x16 batch {args.batch}: "
          + ", ".join(f"{k} {v:.2f} ms" for k, v in ms.items())
          + f"; float / binary = {ms['float'] / ms['binary']:.1f}x"
          + (f", torch / binary = {ms['torch float'] / ms['binary']:.1f}x" if "torch float" in ms else ""))

    if not args.skip_model:
        images = rng.standard_normal((args.batch * 4, 32, 32, 3)).astype(np.float32)
        binary, unfolded, float_ = model_trio()
        ms = measure({"binary": lambda: binary.predict(images, batch_size=args.batch, verbose=0),
                      "binary unfolded": lambda: unfolded.predict(images, batch_size=args.batch, verbose=0),
                      "float": lambda: float_.predict(images, batch_size=args.batch, verbose=0)}, args.rounds)
        results["model"] = ms
        print(f"binarynet predict, {len(images)} images: binary (BN folded) {ms['binary']:.1f} ms, "
              f"binary (BN not folded) {ms['binary unfolded']:.1f} ms, float twin {ms['float']:.1f} ms; "
              f"float / binary = {ms['float'] / ms['binary']:.1f}x, "
              f"not folded / folded = {ms['binary unfolded'] / ms['binary']:.2f}x")
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump(results, f, indent=1)
        os.replace(tmp, args.json)


if __name__ == "__main__":
    main()
