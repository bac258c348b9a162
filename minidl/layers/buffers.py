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


class LentBuffers:
    """Storages lent for one pass of a model's graph, shared by the tensors that need not
    outlive it: every gradient of a backward pass (dL/d of a node's output is dead once the
    nodes that made it have been back-propagated) and the forward outputs no backward reads
    (a convolution's output that only a max pool reads). Keeping one storage per role instead
    (BufferSet) holds every layer's dL/dinput at once: twice the activations' memory.

    lend(shape, dtype) gives a view of a free storage (the smallest that fits; a free one too
    small is replaced by a larger one, so the pool holds at most as many storages as were
    ever busy at once); the graph marks storages free again with release(tensor) (a
    transient output whose readers have run) or release_unreferenced(tensors) (after each
    backward step: the pending gradients are all that may still point into the pool), and
    release_all() at the start of a pass.
    """

    def __init__(self, backend=None):
        self.backend = backend
        self._slots = []   # [storage, capacity, dtype, busy]

    def reset(self, backend):
        self.backend = backend
        self._slots = []

    def release_all(self):
        for slot in self._slots:
            slot[3] = False

    def lend(self, shape, dtype="float32"):
        size = max(math.prod(shape), 1)
        free = [s for s in self._slots if not s[3] and s[2] == dtype]
        fits = [s for s in free if s[1] >= size]
        if fits:
            slot = min(fits, key=lambda s: s[1])
        else:
            if free:   # the largest free storage is too small: replace it
                largest = max(free, key=lambda s: s[1])
                self._slots = [s for s in self._slots if s is not largest]
            slot = [self.backend.empty((size,), dtype), size, dtype, False]
            self._slots.append(slot)
        slot[3] = True
        return self.backend.view(slot[0], tuple(shape))

    def release(self, tensor):
        """Mark the storage under `tensor` free (its readers have run)."""
        key = self.backend.storage(tensor)
        for slot in self._slots:
            if slot[3] and self.backend.storage(slot[0]) is key:
                slot[3] = False

    def release_unreferenced(self, tensors):
        """Mark free every busy storage that none of `tensors` (backend tensors) is in."""
        busy = [s for s in self._slots if s[3]]
        if not busy:
            return
        held = {id(self.backend.storage(t)) for t in tensors}
        for slot in busy:
            if id(self.backend.storage(slot[0])) not in held:
                slot[3] = False
