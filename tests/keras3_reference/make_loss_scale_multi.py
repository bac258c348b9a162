"""Writes loss_scale_multi.json: Keras 3.15.1's LossScaleOptimizer (dynamic loss scaling in
train_on_batch: scale, counter, iterations and weights after every step, steps skipped on
overflow included) and MultiOptimizer / OptimizerMap (weights after each step, the
sub-optimizers' step counts, configs), for tests/test_loss_scale_multi.py.
Run: KERAS_BACKEND=torch /work/kvenv/bin/python tests/keras3_reference/make_loss_scale_multi.py"""
import json
import os

import keras
import numpy as np

rng = np.random.default_rng(5)
X = rng.normal(size=(8, 4)).astype("float32")
# targets far from the predictions: gradients of about 1e3, so that scales above ~2^118
# overflow float32 and the optimizer skips steps
Y_BIG = (1000 * rng.normal(size=(8, 3))).astype("float32")
Y = rng.normal(size=(8, 2)).astype("float32")
K1, B1 = rng.normal(size=(4, 3)).astype("float32"), rng.normal(size=(3,)).astype("float32")
K2, B2 = rng.normal(size=(3, 2)).astype("float32"), rng.normal(size=(2,)).astype("float32")


def lso_case(initial_scale, growth, steps, regularized):
    inp = keras.Input((4,))
    dense = keras.layers.Dense(3, name="dense", kernel_regularizer=keras.regularizers.L2(0.01) if regularized else None)
    model = keras.Model(inp, dense(inp))
    model.set_weights([K1, B1])
    opt = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(1e-4, momentum=0.9),
                                              initial_scale=initial_scale, dynamic_growth_steps=growth)
    model.compile(optimizer=opt, loss="mse")
    record = []
    for _ in range(steps):
        model.train_on_batch(X, Y_BIG)
        record.append({"dynamic_scale": float(opt.dynamic_scale.numpy()), "step_counter": int(opt.step_counter.numpy()),
                       "iterations": int(opt.iterations.numpy()),
                       "weights": [w.tolist() for w in model.get_weights()]})
    config = opt.get_config()
    return {"initial_scale": initial_scale, "growth": growth, "regularized": regularized, "steps": record,
            "config": {"name": config["name"], "initial_scale": config["initial_scale"],
                       "dynamic_growth_steps": config["dynamic_growth_steps"],
                       "inner_class": config["inner_optimizer"]["class_name"]}}


def multi_case(kind):
    inp = keras.Input((4,))
    hidden = keras.layers.Dense(3, name="encoder")(inp)
    model = keras.Model(inp, keras.layers.Dense(2, name="head")(hidden))
    model.set_weights([K1, B1, K2, B2])
    adam, sgd = keras.optimizers.Adam(0.01), keras.optimizers.SGD(0.1, momentum=0.5)
    if kind == "map":
        opt = keras.optimizers.MultiOptimizer(keras.optimizers.OptimizerMap(sgd, {"encoder/.*": adam}))
    else:
        opt = keras.optimizers.MultiOptimizer(lambda v: adam if "encoder" in v.path else sgd)
    model.compile(optimizer=opt, loss="mse")
    steps = []
    for _ in range(3):
        model.train_on_batch(X, Y)
        steps.append([w.tolist() for w in model.get_weights()])
    out = {"kind": kind, "steps": steps, "iterations": int(opt.iterations.numpy()),
           "sub_iterations": [int(o.iterations.numpy()) for o in opt.optimizers],
           "sub_classes": [type(o).__name__ for o in opt.optimizers]}
    if kind == "map":
        config = opt.get_config()
        out["config_keys"] = sorted(config)
        out["map_config_keys"] = sorted(config["optimizer_map"]["config"])
    return out


def map_lookups():
    opt_adam, opt_sgd, opt_rms = keras.optimizers.Adam(), keras.optimizers.SGD(), keras.optimizers.RMSprop()
    m = keras.optimizers.OptimizerMap(default_optimizer=opt_rms)
    m["encoder/layer_0/dense"] = opt_adam
    m["encoder/.*"] = opt_sgd
    m["decoder"] = opt_adam
    keys = ["decoder", "encoder/layer_0/dense", "encoder/layer_0/attention/query", "decoder/layer_0/dense"]
    errors = {}
    for label, action in [("duplicate", lambda: m.__setitem__("decoder", opt_sgd)),
                          ("not_string", lambda: m.__setitem__(3, opt_sgd)),
                          ("not_optimizer", lambda: m.__setitem__("x", "sgd")),
                          ("loss_scale", lambda: m.__setitem__("y", keras.optimizers.LossScaleOptimizer(opt_sgd))),
                          ("two_matches", lambda: keras.optimizers.OptimizerMap(opt_rms, {"a.*": opt_sgd, ".*b": opt_adam})["ab"]),
                          ("bad_default", lambda: keras.optimizers.OptimizerMap("sgd")),
                          ("lso_dynamic", lambda: keras.optimizers.LossScaleOptimizer(opt_sgd, dynamic=False)),
                          ("lso_clipnorm", lambda: keras.optimizers.LossScaleOptimizer(opt_sgd, clipnorm=1.0)),
                          ("lso_unknown", lambda: keras.optimizers.LossScaleOptimizer(opt_sgd, foo=1))]:
        try:
            action()
            errors[label] = None
        except Exception as exc:  # noqa: BLE001 - the type and message are what we record
            errors[label] = [type(exc).__name__, str(exc)]
    return {"lookups": {k: type(m[k]).__name__ for k in keys}, "errors": errors}


result = {"keras": keras.__version__, "x": X.tolist(), "y_big": Y_BIG.tolist(), "y": Y.tolist(),
          "weights": [K1.tolist(), B1.tolist(), K2.tolist(), B2.tolist()],
          "loss_scale": [lso_case(2.0 ** 125, 2, 14, False), lso_case(2.0 ** 124, 3, 10, True),
                         lso_case(2.0 ** 15, 2000, 3, False)],
          "multi": [multi_case("map"), multi_case("callable")], "map": map_lookups()}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "loss_scale_multi.json")
with open(path + ".tmp", "w") as f:
    json.dump(result, f)
os.replace(path + ".tmp", path)
print("wrote", path)
