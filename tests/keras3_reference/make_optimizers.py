"""Writes optimizers.json: Keras 3.15.1's Lamb, Adafactor, Muon and ScheduleFreeAdamW (weights after each of three steps
on fixed gradients) and its learning-rate schedules (values at fixed steps, configs), for
tests/test_schedules_optimizers_keras3.py.
Run: KERAS_BACKEND=torch /work/kvenv/bin/python tests/keras3_reference/make_optimizers.py"""
import json
import os

import keras
import numpy as np

rng = np.random.default_rng(11)
W = [rng.normal(size=(3, 4)), rng.normal(size=(4,)), rng.normal(size=(2, 3, 2)), rng.normal(size=(5, 3)),
     rng.normal(size=(6, 2))]
# the weights' paths: Muon steps 2-D weights but embeddings with AdamW
NAMES = ["dense_kernel", "dense_bias", "conv_kernel", "embedding_embeddings", "dense_1_kernel"]
G = [[rng.normal(size=w.shape) for w in W] for _ in range(3)]
G[1][1] = np.zeros(4)           # a zero gradient: Lamb's ratio falls back to 1

OPTIMIZERS = [("Lamb", {}), ("Lamb", {"learning_rate": 0.01, "beta_1": 0.8, "weight_decay": 0.1}),
              ("Adafactor", {}), ("Adafactor", {"learning_rate": 0.05, "relative_step": False, "clip_threshold": 0.5}),
              ("Adafactor", {"learning_rate": 0.01, "beta_2_decay": -0.5, "epsilon_2": 0.01, "weight_decay": 0.05}),
              ("Muon", {"learning_rate": 0.01}),
              ("Muon", {"learning_rate": 0.02, "nesterov": False, "weight_decay": 0.1, "adam_weight_decay": None,
                        "exclude_layers": ["dense_1"], "adam_lr_ratio": 0.5, "ns_steps": 3}),
              ("ScheduleFreeAdamW", {}),
              ("ScheduleFreeAdamW", {"learning_rate": 0.01, "beta_1": 0.8, "warmup_steps": 2, "weight_decay": 0.1})]
optimizers = []
for name, kwargs in OPTIMIZERS:
    opt = getattr(keras.optimizers, name)(**kwargs)
    variables = [keras.Variable(w.astype("float32"), name=n) for w, n in zip(W, NAMES)]
    steps = []
    for grads in G:
        opt.apply_gradients(zip([g.astype("float32") for g in grads], variables))
        steps.append([np.asarray(v).tolist() for v in variables])
    config = {k: v for k, v in opt.get_config().items() if k != "loss_scale_factor" and k != "gradient_accumulation_steps"}
    optimizers.append({"class": name, "kwargs": kwargs, "steps": steps, "config": config})

S = keras.optimizers.schedules
SCHEDULES = [
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5}),
    ("ExponentialDecay", {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5, "staircase": True}),
    ("PiecewiseConstantDecay", {"boundaries": [5, 10], "values": [1.0, 0.5, 0.1]}),
    ("CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 20}),
    ("CosineDecay", {"initial_learning_rate": 0.1, "decay_steps": 20, "alpha": 0.1, "warmup_target": 0.5,
                     "warmup_steps": 5}),
    ("CosineDecay", {"initial_learning_rate": 0.0, "decay_steps": 20, "warmup_target": 0.2, "warmup_steps": 10}),
    ("PolynomialDecay", {"initial_learning_rate": 0.1, "decay_steps": 20}),
    ("PolynomialDecay", {"initial_learning_rate": 0.1, "decay_steps": 8, "end_learning_rate": 0.01, "power": 2.0,
                         "cycle": True}),
    ("InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5}),
    ("InverseTimeDecay", {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.5, "staircase": True}),
    ("CosineDecayRestarts", {"initial_learning_rate": 0.1, "first_decay_steps": 5}),
    ("CosineDecayRestarts", {"initial_learning_rate": 0.1, "first_decay_steps": 4, "t_mul": 1.0, "m_mul": 0.5,
                             "alpha": 0.1}),
]
STEPS = [0, 1, 3, 4, 5, 6, 9, 10, 11, 15, 19, 20, 25, 40]
schedules = []
for name, kwargs in SCHEDULES:
    schedule = getattr(S, name)(**kwargs)
    schedules.append({"class": name, "kwargs": kwargs, "steps": STEPS,
                      "values": [float(schedule(step)) for step in STEPS],
                      "serialized": S.serialize(schedule)})

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "optimizers.json.tmp"), "w") as f:
    json.dump({"keras": keras.__version__, "weights": [w.tolist() for w in W], "names": NAMES,
               "gradients": [[g.tolist() for g in grads] for grads in G], "optimizers": optimizers,
               "schedules": schedules}, f)
os.replace(os.path.join(here, "optimizers.json.tmp"), os.path.join(here, "optimizers.json"))
