"""Keras 3's Pipeline: a plain layer applying a list of layers in order (an augmentation
pipeline), in a model or on data.

In a model each layer runs on a child context of the pipeline's call and back-propagates in
reverse order; the pipeline hands its layers distinct seeds every step (as the wrappers do).
On data (`pipeline(x)`, `pipeline({"images": x, "labels": y})`, as in a tf.data map) it calls
each layer on the data in training mode unless told otherwise (Keras's call(training=True));
a layer that takes no dict gets the images only (the labels pass unchanged), an unbatched
image (H, W, C) runs as a batch of one, and each call draws new numbers (as Keras's layers'
SeedGenerators advance).
"""

import numpy as np

from ..seed_state import mix_seed
from .augment_base import DATA_KEYS, HostDrawnAugment, _is_data, next_data_seed
from .base import Layer
from .wrappers import _Wrapper, wrapped_layer


class Pipeline(_Wrapper):
    """Applies `layers` (a list of layers) in order."""

    def __init__(self, layers, name=None):
        super().__init__(name=name)
        if not isinstance(layers, (list, tuple)) or not all(isinstance(l, Layer) for l in layers):
            raise ValueError(f"{self.describe()}: layers must be a list of layers, got {layers!r:.200}")
        self._subs = list(layers)

    @property
    def layers(self):
        return self._subs

    def _inner(self):
        return self._subs

    def _seed_sublayers(self):
        # a layer's own seed changes its draws (mixed with the pipeline's step seed, which
        # keeps them new at every step)
        for index, sub in enumerate(self._subs):
            if sub.needs_step_seed:
                base = self.step_seed if sub.seed is None else mix_seed(sub.seed, self.step_seed)
                sub.step_seed = mix_seed(base, index) >> 2

    def build(self, input_shape):
        shape = tuple(input_shape)
        for sub in self._subs:
            sub.build_once(shape)
            shape = tuple(sub.output_shape)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        for sub in self._subs:
            shape = tuple(sub.compute_output_shape(shape))
        return shape

    def forward(self, call, x, training):
        self._seed_sublayers()
        for index, sub in enumerate(self._subs):
            x = self._run_inner(call, ("layer", index), sub, x, training)
        return x

    def backward(self, call, dout):
        for index in reversed(range(len(self._subs))):
            dout = self._backward_inner(call, ("layer", index), dout)
        return dout

    def get_config(self):
        from ..serialization import serialize_keras_object   # (not minidl.layers: no cycle)
        return {"layers": [serialize_keras_object(sub) for sub in self._subs], "name": self.name}

    @classmethod
    def from_config(cls, config):
        layers = config.get("layers")
        if not isinstance(layers, (list, tuple)):
            raise ValueError("Pipeline: the config must hold a `layers` key mapping to a list of "
                             f"serialized layers, got layers={layers!r:.200}")
        config = dict(config, layers=[wrapped_layer(spec, "Pipeline") for spec in layers])
        return cls(**config)

    # ------------------------------------------------------------- calls on data
    def __call__(self, inputs, training=None):
        if not isinstance(inputs, dict) and not _is_data(inputs):
            return super().__call__(inputs, training)
        training = True if training is None else bool(training)
        next_data_seed(self)   # new draws for its other random layers at every call
        self._seed_sublayers()
        data = dict(inputs) if isinstance(inputs, dict) else {"images": inputs}
        if isinstance(inputs, dict) and ("images" not in data or set(data) - set(DATA_KEYS)):
            raise ValueError(f"{self.describe()}: a dict input holds 'images' and optionally "
                             f"'labels', got keys {sorted(data)}")
        images = np.asarray(data["images"], np.float32)
        unbatched = images.ndim == 3
        data["images"] = images[None] if unbatched else images
        if "labels" in data and unbatched:
            data["labels"] = np.asarray(data["labels"])[None]
        for sub in self._subs:
            if isinstance(sub, (HostDrawnAugment, Pipeline)):
                data = sub(data, training=training)
            else:
                data["images"] = sub(data["images"], training=training)
        if unbatched:
            data = {key: value[0] for key, value in data.items()}
        return data if isinstance(inputs, dict) else data["images"]


__all__ = ["Pipeline"]
