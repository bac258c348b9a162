"""CategoryEncoding and Discretization: integer categories and bucketed numbers.

Called on numpy data they are host preprocessing layers (host_preprocessing.py) and return
numpy arrays with Keras 3's dtypes (float32 encodings, int32 bucket indices). Unlike the
string layers they may also sit inside a model, as in Keras: on a model's tensors (float32
holding the integer values, as minidl feeds integer inputs) they run on the backend with
elementwise compares and reductions, and have no gradient (their inputs are categories).

In a model the shapes are per sample, as for every minidl layer: one_hot maps (k,) to
(k, depth) and (1,) or () to (depth,); multi_hot and count map (k,) to (depth,). Category
values outside [0, depth) count nowhere there (checking them would stop the device).
"""

import numpy as np

from .base import Layer
from .host_preprocessing import (HostPreprocessingLayer, as_array, encode_categorical,
                                 encoded_sample_shape)
from .nodes import KerasTensor


class ModelUsable:
    """A host layer that a model's tensors may also go through (on the backend)."""

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, KerasTensor) or type(inputs).__name__ == "Tensor":
            return Layer.__call__(self, inputs, training=kwargs.get("training"))
        return super().__call__(inputs, *args, **kwargs)

    def encoded_shape(self, input_shape, depth, mode):
        """The per-sample output shape of encoding per-sample indices of `input_shape`."""
        return encoded_sample_shape(input_shape, depth, mode, self.describe())

    def encode_on_backend(self, call, indices, depth, mode):
        """Encode the float32 category indices (n,) + input_shape with backend ops."""
        if mode == "int":
            return indices
        b = self.backend
        n = b.shape(indices)[0]
        tokens = call.buffer("tokens", (depth,))
        b.arange(tokens, 0.0, 1.0)
        if mode == "one_hot":
            out_shape = (n,) + self.output_shape
            out = call.buffer("encoded", out_shape)
            b.binary(out, b.reshape(indices, out_shape[:-1] + (1,)), tokens, "equal")
            return out
        k = self.input_shape[0]
        hot = call.buffer("one_hot", (n, k, depth))
        b.binary(hot, b.reshape(indices, (n, k, 1)), tokens, "equal")
        out = call.buffer("encoded", (n, 1, depth))
        b.reduce(out, hot, "max" if mode == "multi_hot" else "sum")
        return b.reshape(out, (n, depth))

    def backward(self, call, dout):
        return None   # category indices have no gradient


class CategoryEncoding(ModelUsable, HostPreprocessingLayer):
    """One-hot, multi-hot or count encoding of integer categories in [0, num_tokens)."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if output_mode == "binary":
            output_mode = "multi_hot"
        self.check_choice("output_mode", output_mode, ("count", "one_hot", "multi_hot"))
        if num_tokens is None:
            raise ValueError("CategoryEncoding: num_tokens must be set to use this layer. If the "
                             "number of tokens is not known beforehand, use the IntegerLookup "
                             "layer instead.")
        if isinstance(num_tokens, bool) or not isinstance(num_tokens, (int, np.integer)) or num_tokens < 1:
            raise ValueError(f"CategoryEncoding: num_tokens must be an int >= 1. Received: "
                             f"num_tokens={num_tokens!r}.")
        if sparse:
            raise ValueError("CategoryEncoding: sparse=True needs sparse tensors, which minidl "
                             "does not have; use sparse=False")
        self.num_tokens = int(num_tokens)
        self.output_mode = output_mode
        self.sparse = sparse

    def compute(self, inputs, count_weights=None):
        if count_weights is not None and self.output_mode != "count":
            raise ValueError("`count_weights` is not used when `output_mode` is not `'count'`. "
                             f"Received `count_weights={count_weights}`.")
        x = as_array(inputs, self.describe())
        if x.dtype.kind not in "iuf" or (x.dtype.kind == "f" and not np.all(np.mod(x, 1) == 0)):
            raise ValueError(f"{self.describe()} expects integer category indices, got {x.dtype} "
                             f"values of shape {x.shape}")
        if x.size and (x.min() < 0 or x.max() >= self.num_tokens):
            raise ValueError(f"{self.describe()}: input values must be in the range "
                             f"0 <= values < num_tokens with num_tokens={self.num_tokens}; got "
                             f"values from {x.min()} to {x.max()} (input shape {x.shape})")
        weights = None
        if count_weights is not None:
            weights = np.asarray(count_weights, dtype=np.float32)
            if weights.shape != x.shape:
                raise ValueError(f"{self.describe()}: count_weights must have the inputs' shape "
                                 f"{x.shape}, got {weights.shape}")
        return encode_categorical(x, self.output_mode, self.num_tokens, "float32", weights)

    def compute_output_shape(self, input_shape):
        """The per-sample output shape in a model (see the module docstring)."""
        return self.encoded_shape(input_shape, self.num_tokens, self.output_mode)

    def forward(self, call, x, training):
        return self.encode_on_backend(call, x, self.num_tokens, self.output_mode)

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode, "sparse": self.sparse}


class Discretization(ModelUsable, HostPreprocessingLayer):
    """Bucket numbers by bin_boundaries, or by num_bins quantiles learned with adapt()."""

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, dtype=None, name=None):
        super().__init__(name=name)
        if sparse:
            raise ValueError("Discretization: sparse=True needs sparse tensors, which minidl does "
                             "not have; use sparse=False")
        self.check_choice("output_mode", output_mode, ("int", "one_hot", "multi_hot", "count"))
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: "
                             f"`num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. Received: "
                             f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = None if bin_boundaries is None else [float(b) for b in bin_boundaries]
        if self.bin_boundaries is not None and np.any(np.diff(self.bin_boundaries) < 0):
            raise ValueError(f"Discretization: bin_boundaries must be sorted, got {bin_boundaries}")
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.output_mode = output_mode
        self.sparse = sparse
        self.summary = None if self.bin_boundaries else np.zeros((2, 0), dtype=np.float32)

    def adapt(self, data, steps=None):
        """Learn num_bins - 1 boundaries at approximate quantiles of `data` (an array, or an
        iterable of batches, the first `steps` of them)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized with "
                             "`bin_boundaries`, use `num_bins` instead.")
        self.reset_state()
        if isinstance(data, np.ndarray) or not hasattr(data, "__iter__"):
            self.update_state(data)
        else:
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self.update_state(batch)
        self.finalize_state()

    def update_state(self, data):
        values = np.array(data).astype("float32")
        self.summary = merge_summaries(summarize(values, self.epsilon), self.summary, self.epsilon)

    def finalize_state(self):
        if self.num_bins is not None:
            self.bin_boundaries = bin_boundaries_of(self.summary, self.num_bins).tolist()

    def reset_state(self):
        if self.num_bins is not None:
            self.summary = np.zeros((2, 0), dtype=np.float32)

    def compute(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at "
                             "construction time or call `adapt(dataset)` before you can start "
                             "using the `Discretization` layer.")
        x = as_array(inputs, self.describe())
        if x.dtype.kind not in "biuf":
            raise ValueError(f"{self.describe()} expects numbers, got {x.dtype} of shape {x.shape}")
        # Keras computes in float32 (its input dtype), against float32 boundaries
        indices = np.digitize(x.astype(np.float32), np.asarray(self.bin_boundaries, np.float32))
        if self.output_mode == "int":
            return indices.astype(np.int32)
        return encode_categorical(indices, self.output_mode, len(self.bin_boundaries) + 1)

    def compute_output_shape(self, input_shape):
        """The per-sample output shape in a model (see the module docstring)."""
        if self.bin_boundaries is None:
            raise ValueError(f"{self.describe()}: pass bin_boundaries, or adapt() the layer, "
                             "before using it in a model")
        return self.encoded_shape(input_shape, len(self.bin_boundaries) + 1, self.output_mode)

    def forward(self, call, x, training):
        """The bucket of each value (the number of boundaries <= it, as np.digitize), encoded."""
        b = self.backend
        shape = b.shape(x)
        count = len(self.bin_boundaries)
        indices = call.buffer("bucket", shape)
        if count == 0:
            b.fill(indices, 0.0)
        else:
            bounds = call.buffer("boundaries", (count,))
            b.copy_from_host(bounds, np.asarray(self.bin_boundaries, dtype=np.float32))
            above = call.buffer("at_or_above", shape + (count,))
            b.binary(above, b.reshape(x, shape + (1,)), bounds, "greater_equal")
            b.reduce(b.reshape(indices, shape + (1,)), above, "sum")
        return self.encode_on_backend(call, indices, count + 1, self.output_mode)

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode, "sparse": self.sparse,
                "name": self.name, "dtype": None}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("trainable", None)
        if config.get("bin_boundaries") is not None and config.get("num_bins") is not None:
            boundaries = config.pop("bin_boundaries")   # learned by adapt: restored as such
            layer = cls(**config)
            layer.bin_boundaries = boundaries
            return layer
        return cls(**config)


# Keras's approximate quantiles: a summary is a (2, k) array of sorted values and weights.

def summarize(values, epsilon):
    """About 1/epsilon evenly spaced order statistics of `values`, each weighing the
    number of values it stands for."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(values.size / (1.0 / epsilon), 1)
    boundaries = values[int(step - 1)::int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def merge_summaries(first, second, epsilon):
    merged = np.concatenate((first, second), axis=1)
    merged = np.take(merged, np.argsort(merged[0]), axis=1)
    return compress_summary(merged, epsilon)


def compress_summary(summary, epsilon):
    """Re-sample the summary at quantiles epsilon, 2 epsilon, ... 1 (when it is longer)."""
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_percents, summary[0])
    cum_weights = np.interp(percents, cum_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights)).astype("float32")


def bin_boundaries_of(summary, num_bins):
    return compress_summary(summary, 1.0 / num_bins)[0, :-1]
