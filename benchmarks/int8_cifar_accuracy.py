"""Top-1 test accuracy of keras_cnn in float32 and int8 on real CIFAR-10, after a brief training.

    python benchmarks/int8_cifar_accuracy.py [--data /tmp/cifar_data/cifar-10-batches-py]
        [--train 10000] [--epochs 2]

Trains keras_cnn (minidl.zoo) on the first --train training images for --epochs epochs (Adam,
batch 128, seed 0) on the cpu backend, quantizes it with 512 training images as calibration
data (minmax and percentile 99.99), and prints the float and int8 top-1 accuracy on the 10,000
test images, with the predict time of each.
"""

import argparse
import time

import numpy as np

import minidl
from minidl import zoo
from minidl.datasets import cifar10
from minidl.quantization import quantize


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="/tmp/cifar_data/cifar-10-batches-py")
    parser.add_argument("--train", type=int, default=10000)
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    minidl.set_backend("cpu")
    minidl.set_seed(0)
    (x, y), (xt, yt) = cifar10.load_data(args.data)
    x, y = x[:args.train].astype(np.float32) / 255, y[:args.train].ravel()
    xt, yt = xt.astype(np.float32) / 255, yt.ravel()
    model = zoo.keras_cnn()
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    start = time.perf_counter()
    model.fit(x, y, batch_size=128, epochs=args.epochs, verbose=0)
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
