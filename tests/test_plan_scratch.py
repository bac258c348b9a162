"""A Window2D plan keeps each backend's per-plan data in that backend's own dataclass
(plan.scratch_for(kind)): made once, reused by every later call, kept apart from another
backend's, and nothing else on the plan is written by an op."""

import numpy as np

from minidl.backends.window import make_window


def scratch_type(backend):
    if backend.name == "numpy":
        from minidl.backends.numpy_ops.windows import NumpyPlanScratch
        return NumpyPlanScratch
    if backend.name == "cpu":
        from minidl.backends.cpu._ffi import CpuPlanScratch
        return CpuPlanScratch
    from minidl.backends.opencl.conv import OpenCLPlanScratch
    return OpenCLPlanScratch


def run_conv(backend, plan, rng):
    """A padded stride-1 convolution's three ops on `plan`."""
    x = backend.from_numpy(rng.standard_normal(plan.in_shape).astype(np.float32))
    weight = backend.from_numpy(rng.standard_normal(plan.kernel_shape).astype(np.float32))
    dout = backend.from_numpy(rng.standard_normal(plan.out_shape).astype(np.float32))
    backend.conv2d_forward(backend.empty(plan.out_shape), x, weight, None, plan)
    backend.conv2d_backward_data(backend.empty(plan.in_shape), dout, weight, plan)
    backend.conv2d_backward_filter(backend.empty(plan.kernel_shape), None, dout, x, plan)
    backend.to_numpy(x)   # drains an asynchronous queue


def test_each_backend_keeps_its_plan_data_in_its_own_type(backend):
    rng = np.random.default_rng(0)
    plan = backend.conv2d_plan((2, 6, 5, 9), (3, 3, 9, 10), (1, 1), "same")
    fields = dict(vars(plan))
    run_conv(backend, plan, rng)
    kind = scratch_type(backend)
    held = plan.scratch_for(kind)
    assert isinstance(held, kind)
    kept = dict(vars(held))
    assert any(v is not None and v != {} for v in kept.values())   # the ops used it
    run_conv(backend, plan, rng)
    assert plan.scratch_for(kind) is held
    assert all(getattr(held, k) is v for k, v in kept.items())   # reused, not remade
    assert vars(plan).keys() == fields.keys()                     # no other field appeared
    assert all(vars(plan)[k] == v for k, v in fields.items() if k != "_per_backend")


def test_two_backends_on_one_plan_keep_their_data_apart():
    from minidl.backends.cpu._ffi import CpuPlanScratch
    from minidl.backends.numpy_backend import NumpyBackend
    from minidl.backends.numpy_ops.windows import NumpyPlanScratch
    plan = make_window((1, 4, 4, 2), (3, 3), (1, 1), "same", 3)
    NumpyBackend().conv2d_forward(np.empty(plan.out_shape, np.float32),
                                  np.ones(plan.in_shape, np.float32),
                                  np.ones(plan.kernel_shape, np.float32), None, plan)
    assert plan.scratch_for(NumpyPlanScratch).padded
    assert plan.scratch_for(CpuPlanScratch) == CpuPlanScratch()   # untouched by numpy's op
