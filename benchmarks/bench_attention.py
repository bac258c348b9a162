"""MultiHeadAttention (8 heads of 64) on (32, 128, 512) with a causal mask, forward + backward,
on minidl's cpu backend beside PyTorch's nn.MultiheadAttention in the same process.

    python benchmarks/bench_attention.py [--threads 2] [--repeats 10] [--backends cpu,opencl]

Self-attention (query = key = value) as a transformer block runs it. The contenders alternate
run by run (the machine is shared and noisy); each row reports the median ms and minidl / torch.
PyTorch gets the causal mask both as is_causal=True and as a boolean mask (its fused CPU kernel
takes either); need_weights=False so that it may use that kernel.
"""

import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

BATCH, TIME, FEATURES, HEADS, KEY_DIM = 32, 128, 512, 8, 64


def minidl_step(backend_name):
    """A function running one forward + backward of the layer on `backend_name`."""
    import numpy as np
    from minidl.backends import get_backend, set_backend
    from minidl.layers.attention import MultiHeadAttention
    from minidl.layers.calls import LayerCall, run_backward, run_forward
    set_backend(backend_name)
    backend = get_backend()
    rng = np.random.default_rng(0)
    x = backend.from_numpy(rng.standard_normal((BATCH, TIME, FEATURES)).astype(np.float32))
    dout = backend.from_numpy(rng.standard_normal((BATCH, TIME, FEATURES)).astype(np.float32))
    layer = MultiHeadAttention(num_heads=HEADS, key_dim=KEY_DIM)
    layer._options = (False, False, True)   # layer(x, x, use_causal_mask=True)
    layer.build_once([(TIME, FEATURES), (TIME, FEATURES)])
    layer.attach(backend)
    call = LayerCall(layer, backend)   # one call's context, as a model's graph step holds

    from minidl.layers.calls import LayerCall, run_backward, run_forward
    call = LayerCall(layer, layer.backend)   # the context of this one call, reused each step

    def step():
        run_forward(layer, call, [x, x], True)
        run_backward(layer, call, dout, False)
        backend.synchronize()
    return step


def torch_step(is_causal):
    import torch
    mha = torch.nn.MultiheadAttention(FEATURES, HEADS, batch_first=True)
    x = torch.randn(BATCH, TIME, FEATURES, requires_grad=True)
    dout = torch.randn(BATCH, TIME, FEATURES)
    mask = torch.nn.Transformer.generate_square_subsequent_mask(TIME).isinf()   # True: masked

    def step():
        out, _ = mha(x, x, x, attn_mask=mask, need_weights=False, is_causal=is_causal)
        out.backward(dout)
    return step


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--backends", default="cpu")
    args = parser.parse_args()
    os.environ["MINIDL_NUM_THREADS"] = str(args.threads)
    import torch
    torch.set_num_threads(args.threads)
    contenders = {f"minidl {name}": minidl_step(name) for name in args.backends.split(",")}
    contenders["torch is_causal"] = torch_step(True)
    contenders["torch bool mask"] = torch_step(False)
    times = {name: [] for name in contenders}
    for step in contenders.values():   # warm-up: kernels compiled, buffers allocated
        step()
    for _ in range(args.repeats):
        for name, step in contenders.items():
            start = time.perf_counter()
            step()
            times[name].append((time.perf_counter() - start) * 1e3)
    best_torch = min(statistics.median(times[n]) for n in times if n.startswith("torch"))
    print(f"MultiHeadAttention {HEADS}x{KEY_DIM} on ({BATCH}, {TIME}, {FEATURES}), causal, forward + "
          f"backward, {args.threads} threads, median of {args.repeats}")
    for name, ms in times.items():
        median = statistics.median(ms)
        print(f"  {name:18s} {median:8.1f} ms   {median / best_torch:5.2f}x the faster torch")


if __name__ == "__main__":
    main()
