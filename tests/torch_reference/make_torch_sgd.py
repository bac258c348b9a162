"""Writes torch_sgd.json: torch.optim.SGD's weights after each of six steps under a changing
learning rate (nesterov / plain momentum / none, weight decay, parameter groups with lr * 64 and
weight_decay / 64), for tests/test_torch_sgd.py (which also compares live where torch is
installed; torch is not a test dependency).
Run: PYTHONPATH=. python tests/torch_reference/make_torch_sgd.py"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from test_torch_sgd import CASES, problem, torch_steps  # noqa: E402

result = {"torch": torch.__version__, "cases": []}
for hp, groups, seed in CASES:
    weights, grads = problem(seed)
    result["cases"].append({"hp": hp, "groups": groups, "seed": seed,
                            "weights": [w.tolist() for w in torch_steps(weights, grads, groups, **hp)]})
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_sgd.json")
with open(path + ".tmp", "w") as f:
    json.dump(result, f)
os.replace(path + ".tmp", path)
print("wrote", path)
