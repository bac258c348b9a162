"""The per-call cost of the executable contract (minidl/backends/contract/): the Python around a
kernel, measured on tiny tensors (the kernel itself is negligible) for two source trees of
minidl, e.g. a `git archive` of the commit before a change and one after it, each with its built
minidl/_cpu_kernels*.so. The trees alternate in child processes, best of 30 x 200 calls per
round (robust to a shared machine).

    python benchmarks/bench_contract_overhead.py OLD_TREE NEW_TREE [ROUNDS]
"""

import json
import subprocess
import sys

# One tree's timings: run in a child process whose sys.path starts with that tree.
CHILD = r'''
import json
import sys
import time

sys.path.insert(0, sys.argv[1])
import numpy as np
import minidl
assert minidl.__file__.startswith(sys.argv[1])
from minidl.backends.cpu import create
b = create()
f = lambda *s: np.ones(s, np.float32)
w, g, m, v = f(64), f(64), f(64), f(64)
plan = b.conv2d_plan((1, 4, 4, 2), (3, 3, 2, 2), (1, 1), "same")
x, wt, out, bias = f(1, 4, 4, 2), f(3, 3, 2, 2), f(1, 4, 4, 2), f(2)
bx, bo, c1, c2, c3, c4 = f(8, 4), f(8, 4), f(4), f(4), f(4), f(4)
lm, li = f(8), f(8)
ga = f(4, 4)
dplan = b.depthwise_conv2d_plan((1, 4, 4, 2), (3, 3, 2, 1), (1, 1), "same")
dwt, dout = f(3, 3, 2, 1), f(1, 4, 4, 2)
pool = b.pool2d_plan((1, 4, 4, 2), (2, 2), (2, 2), "valid")
pout, pidx = f(1, 2, 2, 2), np.zeros((1, 2, 2, 2), np.int32)
labels, count = np.zeros(8, np.int32), f(1)
gates, h, c, up = f(8, 16), f(8, 4), f(8, 4), f(1, 8, 8, 2)
seq_gates, hseq, cseq, rk = f(8, 8, 16), f(8, 8, 4), f(8, 8, 4), f(4, 16)   # T = 8 steps, u = 4
cases = {
  "sgd_update": lambda: b.sgd_update(w, g, v, 0.01, 0.9, False, 0.0),
  "adam_update": lambda: b.adam_update(w, g, m, v, 0.001, 0.9, 0.999, 1e-7, 3, 0.0),
  "conv2d_forward": lambda: b.conv2d_forward(out, x, wt, bias, plan),
  "conv2d_backward_filter": lambda: b.conv2d_backward_filter(wt, bias, out, x, plan),
  "batchnorm_forward_train": lambda: b.batchnorm_forward_train(bo, c1, c2, bx, c3, c4, c1, c2, 0.9, 1e-3),
  "layernorm_forward": lambda: b.layernorm_forward(bo, lm, li, bx, c3, c4, 1e-3),
  "max_pool2d_forward": lambda: b.max_pool2d_forward(pout, pidx, x, pool),
  "softmax_cross_entropy_forward": lambda: b.softmax_cross_entropy_forward(bo, lm, bx, labels),
  "categorical_accuracy": lambda: b.categorical_accuracy(count, bx, labels, True),
  "quantize_forward": lambda: b.quantize_forward(bo, bx, "ste_sign"),
  "upsample2d_forward": lambda: b.upsample2d_forward(up, x, (2, 2), "nearest"),
  "lstm_gates_forward": lambda: b.lstm_gates_forward(h, c, gates, c, "tanh", "sigmoid"),
  "lstm_forward (8 steps)": lambda: b.lstm_forward(hseq, cseq, seq_gates, h, c, rk, "tanh", "sigmoid"),
  "add": lambda: b.add(bo, bx, bx),
  "bias_add": lambda: b.bias_add(bo, bx, c1),
  "activation_forward": lambda: b.activation_forward(bo, bx, "relu"),
  "activation_backward": lambda: b.activation_backward(bo, bx, bx, "gelu", 0.0, bx),
  "gemm": lambda: b.gemm(bo, bx, ga),
  "binary": lambda: b.binary(bo, bx, c1, "add"),
  "depthwise_conv2d_forward": lambda: b.depthwise_conv2d_forward(dout, x, dwt, None, dplan),
}
res = {}
for name, fn in cases.items():
    best = 1e9
    for _ in range(30):
        t0 = time.perf_counter()
        for _ in range(200):
            fn()
        best = min(best, (time.perf_counter() - t0) / 200)
    res[name] = best * 1e6
print(json.dumps(res))
'''

old, new = sys.argv[1], sys.argv[2]
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 4
acc = {"old": [], "new": []}
for r in range(rounds):
    for tag, tree in (("old", old), ("new", new)) if r % 2 == 0 else (("new", new), ("old", old)):
        out = subprocess.run([sys.executable, "-c", CHILD, tree], capture_output=True, text=True, cwd="/tmp")
        if out.returncode:
            print(out.stderr[-3000:]); sys.exit(1)
        acc[tag].append(json.loads(out.stdout.strip().splitlines()[-1]))
for name in acc["old"][0]:
    o = min(d[name] for d in acc["old"]); n = min(d[name] for d in acc["new"])
    print(f"{name:30s} old {o:6.2f} us  new {n:6.2f} us  new-old {n - o:+.2f} us")
