"""Checking the data given to a model: x (one array per input) and y (one per output), as
one array, a list in order or a dict keyed by input / output names (structure.py)."""

import numpy as np

from ..string_tensors import string_batch
from . import structure


def _array(x, argument, check_finite):
    if isinstance(x, (list, tuple)):
        x = np.asarray(x)
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{argument}: expected a numpy array, got {type(x).__name__}")
    if x.dtype == object or not (np.issubdtype(x.dtype, np.number) or x.dtype == bool):
        raise TypeError(f"{argument}: expected numeric data, got dtype {x.dtype}")
    if np.iscomplexobj(x):
        raise TypeError(f"{argument}: complex values (dtype {x.dtype}) are not supported; "
                        "pass the part you mean, e.g. x.real or np.abs(x)")
    if x.ndim == 0 or len(x) == 0:
        raise ValueError(f"{argument}: expected a non-empty batch of samples, got shape "
                         f"{tuple(x.shape)}")
    x = np.ascontiguousarray(x, dtype=np.float32)
    if check_finite and not np.all(np.isfinite(x)):
        raise ValueError(f"{argument}: contains NaN or infinite values")
    return x


def _string_array(x, argument):
    """The data of a string input: an array of str kept on the host (string_tensors.py)."""
    x = string_batch(x, argument)
    if x.ndim == 0 or len(x) == 0:
        raise ValueError(f"{argument}: expected a non-empty batch of samples, got shape "
                         f"{tuple(x.shape)}")
    return x


def _batch_array(x, string, argument):
    """One input of an iterator's batch: strings as they are, numbers as float32."""
    if string:
        return string_batch(x, argument)
    return np.ascontiguousarray(x, dtype=np.float32)


class DataValidation:
    """Mixed into Model: x and y checked and converted to lists of host arrays."""

    def _argument(self, argument, names, i):
        return argument if len(names) == 1 else f"{argument}[{names[i]!r}]"

    def _validate_x(self, x, argument="x", check_finite=True):
        """x as a list of float32 arrays, one per model input, shapes checked."""
        g = self.graph
        names = g.input_names
        xs = structure.flatten_data(x, names, argument, self.describe())
        out = []
        strings = g.string_inputs
        for i, xi in enumerate(xs):
            where = self._argument(argument, names, i)
            xi = g.adjust_rank(_string_array(xi, where) if strings[i] else
                               _array(xi, where, check_finite), i)
            g.check_input(xi.shape, where, i)
            out.append(xi)
        if any(len(xi) != len(out[0]) for xi in out):
            raise ValueError(f"{argument}: the inputs have different numbers of samples: "
                             f"{[len(xi) for xi in out]}")
        if g.unknown_dims:   # a shape that fits Input but not a layer fails here, named
            g.output_shapes_for([xi.shape[1:] for xi in out])
        return out

    def _head_shapes(self, xs):
        """Each head's output shape for the inputs xs: the declared ones, or with unknown
        (None) dims those that xs's shapes give."""
        if not self._dynamic_heads:
            return [h.shape for h in self._heads]
        outs = self.graph.output_shapes_for([x.shape[1:] for x in xs])
        return [outs[h.index] for h in self._heads]

    def _resolve_heads(self, xs):
        """Give the heads with unknown dims the shapes of this batch (a new shape drops the
        step's buffer views; the buffers themselves are resized in place, see buffers.py)."""
        shapes = [x.shape[1:] for x in xs]
        if shapes == getattr(self, "_heads_resolved_for", None):
            return
        for h, shape in zip(self._heads, self._head_shapes(xs)):
            if h.unknown:
                h.resolve(shape)
        self._heads_resolved_for, self._step_views = shapes, None

    def _validate_y(self, y, n, argument="y", x_argument="x", xs=None):
        if y is None and not self._heads:   # compiled without a loss: the layers add theirs
            return []
        if y is None:
            raise ValueError(f"{argument}: targets are required")
        names = self.graph.output_names
        ys = structure.flatten_data(self.graph.per_output(y, argument), names, argument,
                                    self.describe())
        out = []
        shapes = self._head_shapes(xs) if xs is not None else [h.shape for h in self._heads]
        for i, (h, yi, shape) in enumerate(zip(self._heads, ys, shapes)):
            where = self._argument(argument, names, i)
            yi = h.loss.prepare_targets(yi, shape, where)
            if h.take_targets(yi.shape[1:], shape, where):
                self._step_views = None
            if len(yi) != n:
                raise ValueError(f"{x_argument} and {where} must have the same length, got "
                                 f"{n} samples and {len(yi)} targets")
            out.append(yi)
        return out

    def _validate_xy(self, x, y, x_argument="x", y_argument="y"):
        xs = self._validate_x(x, x_argument)
        return xs, self._validate_y(y, len(xs[0]), y_argument, x_argument, xs)

    def _sample_weights(self, sample_weight, class_weight, ys, owner, argument="sample_weight"):
        """One float32 array of per-sample weights for each output, or None when neither
        sample_weight (one array for every output, a list or a dict by output name) nor
        class_weight ({class index: weight}, a model with one output) is given."""
        if sample_weight is None and class_weight is None:
            return None
        names, n = self.graph.output_names, len(ys[0])
        if sample_weight is not None and class_weight is not None:
            raise ValueError(f"{owner}: give sample_weight or class_weight, not both")
        if class_weight is not None:
            return [self._class_weights(class_weight, ys, owner)]
        if isinstance(sample_weight, np.ndarray) or len(names) == 1:
            per = [sample_weight] * len(names)
        else:
            per = structure.flatten_data(self.graph.per_output(sample_weight, argument), names,
                                         argument, owner)
        out = []
        for name, w in zip(names, per):
            w = np.ones(n, np.float32) if w is None else np.asarray(w, dtype=np.float64)
            if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError(f"{owner}: {argument} for output {name!r} must hold {n} finite "
                                 f"weights >= 0 (one per sample), got shape {w.shape}")
            out.append(w.astype(np.float32))
        return out

    def _class_weights(self, class_weight, ys, owner):
        if len(self._heads) != 1:
            raise ValueError(f"{owner}: class_weight is only supported for models with one "
                             "output (as Keras); pass sample_weight per output")
        if not isinstance(class_weight, dict):
            raise TypeError(f"{owner}: class_weight must be a dict {{class index: weight}}, "
                            f"got {type(class_weight).__name__}")
        h, y = self._heads[0], ys[0]
        classes = y.reshape(len(y), -1)[:, 0] if h.loss.sparse else (
            y.reshape(len(y), -1, h.shape[-1])[:, 0].argmax(-1) if h.shape[-1] > 1
            else (y.reshape(len(y), -1)[:, 0] > 0.5))
        table = np.ones(max(int(h.shape[-1]), 2), np.float64)
        for k, w in class_weight.items():
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) \
                    or not 0 <= k < len(table) or isinstance(w, bool) \
                    or not isinstance(w, (int, float, np.number)) or not np.isfinite(w) or w < 0:
                raise ValueError(f"{owner}: class_weight maps class indices 0..{len(table) - 1} "
                                 f"to weights >= 0, got {k!r}: {w!r}")
            table[int(k)] = w
        return table[classes.astype(np.int64)].astype(np.float32)

    def _validate_batch(self, batch, owner):
        """(xs, ys, sample weights or None) of a batch (x, y) or (x, y, sample_weight) from
        a batch source (arrays were validated once up front; iterator batches now)."""
        if not isinstance(batch, (tuple, list)) or len(batch) not in (2, 3):
            raise ValueError(f"{owner}: the data iterator must yield (x, y) or "
                             "(x, y, sample_weight) batches")
        xb, yb = batch[0], batch[1]
        if yb is None:
            raise ValueError(f"{owner}: the data iterator yielded a batch without targets")
        g = self.graph
        xs = structure.flatten_data(xb, g.input_names, "the data iterator's x batch", owner)
        for i, xi in enumerate(xs):
            if np.iscomplexobj(xi):
                raise TypeError(f"{owner}: the data iterator's x batch is complex "
                                f"({xi.dtype}); minidl trains on real numbers only")
            xi = xs[i] = g.adjust_rank(_batch_array(xi, g.string_inputs[i], owner), i)
            if xi.shape[1:] != g.inputs[i].sample_shape or len(xi) == 0:
                g.check_input(xi.shape, "the data iterator's x batch", i)
        ys = structure.flatten_data(g.per_output(yb, "the data iterator's y batch"),
                                    g.output_names, "the data iterator's y batch", owner)
        for i, (h, yi, shape) in enumerate(zip(self._heads, ys, self._head_shapes(xs))):
            yi = np.asarray(yi)
            if yi.dtype != np.dtype(h.loss.target_dtype) or yi.shape != \
                    h.loss.target_shape(len(xs[0]), shape):
                yi = h.loss.prepare_targets(yi, shape, "the data iterator's y batch")
                if h.take_targets(yi.shape[1:], shape, "the data iterator's y batch"):
                    self._step_views = None
            if len(yi) != len(xs[0]):
                raise ValueError(f"{owner}: a batch has {len(xs[0])} samples and {len(yi)} "
                                 "targets")
            ys[i] = yi
        sw = batch[2] if len(batch) == 3 else None
        if sw is not None and not (isinstance(sw, list) and len(sw) == len(ys)
                                   and all(a.dtype == np.float32 for a in sw)):
            sw = self._sample_weights(sw, None, ys, owner)
        return xs, ys, sw

    def _check_batch_x(self, batch):
        """A predict batch from an iterator (x, or (x, y)) as checked input arrays."""
        xb = batch[0] if isinstance(batch, tuple) else batch
        xs = structure.flatten_data(xb, self.graph.input_names, "x", self.describe())
        strings = self.graph.string_inputs
        xs = [self.graph.adjust_rank(_batch_array(xi, strings[i], "x"), i)
              for i, xi in enumerate(xs)]
        for i, xi in enumerate(xs):
            self.graph.check_input(xi.shape, "x", i)
        if self.graph.unknown_dims:
            self.graph.output_shapes_for([xi.shape[1:] for xi in xs])
        return xs
