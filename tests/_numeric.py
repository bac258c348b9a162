"""Central differences for the float64 gradient checks (tests/test_losses.py,
test_regularizers.py), and the check of a layer's backward the recurrent tests share."""

import numpy as np


def central_differences(f, array, step=1e-6):
    """d f() / d array for every element of `array` (changed in place, then restored)."""
    numeric = np.empty_like(array)
    for i in range(array.size):
        old = array.flat[i]
        array.flat[i] = old + step
        up = f()
        array.flat[i] = old - step
        down = f()
        array.flat[i] = old
        numeric.flat[i] = (up - down) / (2 * step)
    return numeric


def check_layer_run_gradients(run, inputs, rng, before_each=None):
    """Float64 check of a layer's backward (tests/layer_runs.LayerRun `run`, training mode):
    with L = sum over its outputs of output * a random dout (drawn from `rng`), the dL/dinput it
    returns (one per input when `inputs` is a list) and every weight's gradient equal central
    differences of L. before_each() runs before every forward (a stateful layer's states put
    back)."""
    several = isinstance(inputs, list)

    def outputs():
        if before_each is not None:
            before_each()
        ys = run.forward(inputs, True)
        return list(ys) if isinstance(ys, list) else [ys]

    douts = [rng.standard_normal(y.shape) for y in outputs()]
    returned = run.backward(douts if len(douts) > 1 else douts[0])
    dinputs = [d.copy() for d in (returned if several else [returned])]
    grads = [w.grad.copy() for w in run.layer.weights]

    def loss():
        return float(sum(np.sum(y * d) for y, d in zip(outputs(), douts)))
    for i, (d, a) in enumerate(zip(dinputs, inputs if several else [inputs])):
        np.testing.assert_allclose(d, central_differences(loss, a), rtol=1e-6, atol=1e-8,
                                   err_msg=f"input {i}")
    for w, g in zip(run.layer.weights, grads):
        np.testing.assert_allclose(g, central_differences(loss, w.value), rtol=1e-6, atol=1e-8,
                                   err_msg=w.name)
