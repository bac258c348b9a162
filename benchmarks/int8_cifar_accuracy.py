"""Top-1 test accuracy of a CIFAR-10 model in float32 and int8 on real CIFAR-10.

    python benchmarks/int8_cifar_accuracy.py [--data /tmp/cifar_data/cifar-10-batches-py]
        [--train 10000] [--epochs 2]
    python benchmarks/int8_cifar_accuracy.py --model-file run.minidl [--data DIR]

Without --model-file: trains keras_cnn (minidl.zoo) on the first --train training images for
--epochs epochs (Adam, batch 128, seed 0) on the cpu backend, on images scaled to [0, 1].
With --model-file: a model trained by `examples/cifar10.py --checkpoint PATH` (any --model),
fed as that script feeds it (x / 255 standardized by the training set's channel statistics).
Either is quantized with 512 training images as calibration data (minmax and percentile
99.99); the float and int8 top-1 accuracy on the 10,000 test images are printed, with the
predict time of each.
"""

import argparse
import time

import numpy as np

import minidl
from minidl import zoo
from minidl.data import channel_stats
from minidl.datasets import cifar10
from minidl.models import load_model
from minidl.quantization import quantize


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="/tmp/cifar_data/cifar-10-batches-py")
    parser.add_argument("--train", type=int, default=10000)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--model-file", help="a model saved by examples/cifar10.py --checkpoint")
    args = parser.parse_args()
    minidl.set_backend("cpu")
    minidl.set_seed(0)
    (x, y), (xt, yt) = cifar10.load_data(args.data)
    y, yt = y.ravel(), yt.ravel()
    if args.model_file:
        mean, std = channel_stats(x)   # examples/cifar10.py's normalization
        x = ((x[:args.train].astype(np.float32) / 255 - mean) / std).astype(np.float32)
        xt = ((xt.astype(np.float32) / 255 - mean) / std).astype(np.float32)
        model = load_model(args.model_file)
        # the float reference computes in float32 whatever policy trained it (a model trained
        # under mixed_bfloat16 has float32 weights; its layers' saved policy would round them)
        for layer in model.graph.primitive_layers:
            layer._dtype_policy = None
        print(f"loaded {args.model_file} ({model.count_params():,} weights, "
              f"{model.trained_epochs} epochs trained)")
    else:
        x, xt = x[:args.train].astype(np.float32) / 255, xt.astype(np.float32) / 255
        model = zoo.keras_cnn()
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
        start = time.perf_counter()
        model.fit(x, y[:args.train], batch_size=128, epochs=args.epochs, verbose=0)
        print(f"trained {args.epochs} epochs on {len(x)} images in {time.perf_counter() - start:.0f} s")
    start = time.perf_counter()
    pf = model.predict(xt, batch_size=256)
    print(f"float32: top-1 {100 * (pf.argmax(1) == yt).mean():.2f}%  "
          f"({time.perf_counter() - start:.1f} s for the test set)")
    for method in ("minmax", "percentile"):
        qmodel = quantize(model, x[:512], method=method)
        start = time.perf_counter()
        pq = qmodel.predict(xt, batch_size=256)
        print(f"int8 {method}: top-1 {100 * (pq.argmax(1) == yt).mean():.2f}%  "
              f"({time.perf_counter() - start:.1f} s), agreement with float "
              f"{100 * (pq.argmax(1) == pf.argmax(1)).mean():.2f}%  [{qmodel.info()['kernel']}]")


if __name__ == "__main__":
    main()
