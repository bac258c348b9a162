"""Backend tensors kept from step to step: one storage per role, sized for the largest batch.

A model used at several batch sizes (training at 64, predicting at 48, an epoch's short last
batch) must not keep one set of buffers per size. Each role (a layer's "z", the model's
targets, ...) owns one flat storage; a request that fits gets a view of its front (the
backend's `view`), a larger one replaces it. Peak memory therefore follows the largest batch,
not the number of batch sizes used. A request with the shape of the previous one (every
training step after the first) is a dict look-up that returns the same tensor and allocates
nothing.
"""

import math


class BufferSet:
    """Buffers by role on one backend; `reset(backend)` drops them all."""

    def __init__(self, backend=None):
        self.backend = backend
        self._slots = {}   # (role, dtype) -> [storage, view, view shape]

    def reset(self, backend):
        self.backend = backend
        self._slots = {}

    def get(self, role, shape, dtype="float32"):
        """A tensor of `shape` for `role`, valid until the next request for that role."""
        slot = self._slots.get((role, dtype))
        if slot is not None and slot[2] == shape:
            return slot[1]
        size = math.prod(shape)
        if slot is None or math.prod(self.backend.shape(slot[0])) < size:
            slot = [self.backend.empty((size,), dtype), None, None]
            self._slots[(role, dtype)] = slot
        slot[1], slot[2] = self.backend.view(slot[0], shape), shape
        return slot[1]
