"""TorchSGD against torch.optim.SGD, step for step under a changing learning rate, on every
backend: against torch_reference/torch_sgd.json (written by torch_reference/make_torch_sgd.py
with torch 2.x) everywhere, and against torch itself where it is installed (torch is not a test
dependency)."""

import json
import os

import numpy as np
import pytest

from minidl import optimizers, schedules

try:
    import torch
except ImportError:   # the recorded numbers still test
    torch = None

SHAPES = [(6, 5), (5,), (3, 3, 2, 4)]
LRS = [0.05, 0.2, 0.5, 0.3, 0.1, 0.01]   # a schedule: the two SGD forms differ under it


def problem(seed=0):
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in LRS]
    return weights, grads


# (hyperparameters, per weight lr multiplier (weight decay divided by it), problem seed)
CASES = [(dict(momentum=0.85, nesterov=True, weight_decay=0.02), [1.0, 1.0, 1.0], 0),
         (dict(momentum=0.9, nesterov=False, weight_decay=0.0), [1.0, 1.0, 1.0], 0),
         (dict(momentum=0.0, nesterov=False, weight_decay=0.1), [1.0, 1.0, 1.0], 0),
         (dict(momentum=0.85, nesterov=True, weight_decay=0.03), [1.0, 64.0, 1.0], 1)]   # airbench's groups


def torch_steps(weights, grads, groups, **hp):
    """torch.optim.SGD over `weights`; groups: per weight (lr multiplier, weight-decay divisor)."""
    params = [torch.nn.Parameter(torch.tensor(w)) for w in weights]
    param_groups = [dict(params=[p], lr=LRS[0] * m, weight_decay=hp["weight_decay"] / m)
                    for p, m in zip(params, groups)]
    opt = torch.optim.SGD(param_groups, momentum=hp["momentum"], nesterov=hp["nesterov"])
    for step, step_grads in enumerate(grads):
        for group, m in zip(opt.param_groups, groups):
            group["lr"] = LRS[step] * m
        for p, g in zip(params, step_grads):
            p.grad = torch.tensor(g)
        opt.step()
    return [p.detach().numpy() for p in params]


def minidl_steps(backend, weights, grads, multipliers=None, **hp):
    schedule = schedules.PiecewiseConstantDecay(list(range(len(LRS) - 1)), LRS)
    opt = optimizers.TorchSGD(schedule, learning_rate_multipliers=multipliers, **hp)
    tensors = [backend.from_numpy(w) for w in weights]
    opt.build(backend, tensors, names=["a/kernel", "norm/beta", "c/kernel"])
    for step_grads in grads:
        opt.apply_gradients([(backend.from_numpy(g), t) for g, t in zip(step_grads, tensors)])
    return [backend.to_numpy(t) for t in tensors]


def minidl_case(backend, hp, groups, seed):
    weights, grads = problem(seed)
    multipliers = {"norm/beta$": groups[1]} if groups[1] != 1.0 else None
    return minidl_steps(backend, weights, grads, multipliers=multipliers, **hp)


def recorded_cases():
    with open(os.path.join(os.path.dirname(__file__), "torch_reference", "torch_sgd.json")) as f:
        return json.load(f)["cases"]


@pytest.mark.parametrize("index", range(len(CASES)))
def test_matches_recorded_torch_sgd(backend, index):
    hp, groups, seed = CASES[index]
    recorded = recorded_cases()[index]
    assert (recorded["hp"], recorded["groups"], recorded["seed"]) == (hp, groups, seed)
    for got, want in zip(minidl_case(backend, hp, groups, seed), recorded["weights"]):
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(torch is None, reason="torch is not installed (the recorded numbers test it)")
@pytest.mark.parametrize("index", range(len(CASES)))
def test_matches_torch_sgd_live(backend, index):
    hp, groups, seed = CASES[index]
    weights, grads = problem(seed)
    expected = torch_steps(weights, grads, groups, **hp)
    for got, want in zip(minidl_case(backend, hp, groups, seed), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_differs_from_keras_sgd_under_a_schedule(backend):
    """Why the class exists: with the same hyperparameters and a schedule, Keras's SGD (rate
    folded into the velocity) moves the weights elsewhere."""
    hp = dict(momentum=0.85, nesterov=True)
    weights, grads = problem()
    torch_form = minidl_steps(backend, weights, grads, **hp)
    schedule = schedules.PiecewiseConstantDecay(list(range(len(LRS) - 1)), LRS)
    keras = optimizers.SGD(schedule, **hp)
    tensors = [backend.from_numpy(w) for w in weights]
    keras.build(backend, tensors)
    for step_grads in grads:
        keras.apply_gradients([(backend.from_numpy(g), t) for g, t in zip(step_grads, tensors)])
    assert not np.allclose(backend.to_numpy(tensors[0]), torch_form[0], rtol=1e-3)


def test_config_state_and_errors():
    opt = optimizers.TorchSGD(0.1, momentum=0.9, nesterov=True, weight_decay=5e-4, name="sgd_torch")
    config = optimizers.serialize(opt)
    assert config["class_name"] == "TorchSGD"
    again = optimizers.deserialize(config)
    assert again.get_config() == opt.get_config() and again.nesterov and again.weight_decay == 5e-4
    assert optimizers.get("torchsgd").momentum == 0.0
    with pytest.raises(ValueError, match="nesterov=True requires a momentum"):
        optimizers.TorchSGD(0.1, nesterov=True)
    with pytest.raises(ValueError, match="momentum"):
        optimizers.TorchSGD(0.1, momentum=1.5)
    with pytest.raises(TypeError, match="nesterov"):
        optimizers.TorchSGD(0.1, momentum=0.5, nesterov="yes")
    assert optimizers.TorchSGD(0.1)._active_slots() == ()
