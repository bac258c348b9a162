"""Attention layers (Keras 3's): MultiHeadAttention, GroupQueryAttention and Attention on the
backends' fused attention_forward / attention_backward ops (scores, mask, softmax and the
weighted sum of values in one op), and AdditiveAttention, written with minidl.ops."""

import math

from ..arguments import number
from .attention_scores import add_scores_gradient, scores_given
from .base import Layer, format_shape


def _check_seed(layer, seed):
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"{layer.describe()}: seed must be None or an int >= 0, got {seed!r}")
    return seed


class _AttentionCall(Layer):
    """What the fused-op attention layers share: inputs taken as a list in a fixed order
    (query, value, key, mask: key is present whenever the mask is, the value standing in for
    it), use_causal_mask and return_attention_scores as options of each call (its node or
    eager context: a call with scores has two outputs, layers/attention_scores.py), and
    dropout masks on the probabilities."""

    multiple_inputs = True
    needs_step_seed = True
    call_options = ("use_causal_mask", "return_attention_scores")

    @staticmethod
    def _options(causal, scores):
        options = {"use_causal_mask": bool(causal)}
        if scores:
            options["return_attention_scores"] = True
        return options

    def _call(self, inputs, training, causal, scores):
        out = Layer.__call__(self, inputs, training=training, **self._options(causal, scores))
        return tuple(out) if scores else out

    @staticmethod
    def _causal(call):
        return bool(call.options.get("use_causal_mask", False))

    @staticmethod
    def _scores(call):
        return bool(call.options.get("return_attention_scores", False))

    def node_arguments_from_file(self, args, kwargs):
        """A saved node's inputs and options. Files written before the call options moved to
        the nodes recorded the key and mask as flags ("key", "attention_mask"), with a mask
        but no key saved as [query, value, mask]: the value then stands in for the key."""
        args = list(args)
        if kwargs.get("attention_mask") and not kwargs.get("key") and len(args) == 3:
            args.insert(2, args[1])
        return args, {k: v for k, v in kwargs.items() if k in self.call_options}

    def _dropout_mask(self, call, shape, training):
        """The (B, H, Tq, Tk) multipliers of attention dropout in training, else None."""
        if not (training and self.dropout > 0):
            return None
        b = self.backend
        ones = call.buffer("dropout_ones", shape)
        b.fill(ones, 1.0)
        mask = call.buffer("dropout_mask", shape)
        b.dropout_forward(call.buffer("dropout_out", shape), mask, ones, self.dropout,
                          call.step_seed)
        return mask



class MultiHeadAttention(_AttentionCall):
    """Keras MultiHeadAttention: query (B, Tq, dq), value (B, Tv, dv), key (B, Tv, dk),
    default value. Weights in Keras's order and layouts: query/kernel (dq, heads, key_dim),
    query/bias (heads, key_dim), key/kernel, key/bias, value/kernel (dv, heads, value_dim),
    value/bias, output/kernel (heads, value_dim, out), output/bias (out,); out is
    output_shape or dq. Scores are scaled by 1 / sqrt(key_dim); attention_mask (B, Tq, Tv)
    (nonzero: attend) and use_causal_mask restrict them; dropout applies to the attention
    probabilities in training. attention_axes other than the sequence axis are not supported."""

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, flash_attention=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, seed=None, name=None,
                 trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, activity_regularizer=activity_regularizer,
                         **kwargs)
        self._set_weight_options(kernel_regularizer, bias_regularizer, kernel_constraint, bias_constraint)
        for arg, value in (("num_heads", num_heads), ("key_dim", key_dim),
                           ("value_dim", key_dim if value_dim is None else value_dim)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{self.describe()}: {arg} must be a positive int, got {value!r}")
        if attention_axes is not None and tuple(
                [attention_axes] if isinstance(attention_axes, int) else attention_axes) not in ((1,), (-2,)):
            raise ValueError(f"{self.describe()}: minidl attends over the sequence axis only "
                             f"(attention_axes None, 1 or -2), got {attention_axes!r}")
        self.num_heads, self.key_dim = num_heads, key_dim
        self.value_dim = key_dim if value_dim is None else value_dim
        self.dropout = number(dropout, "dropout", self.describe(), low=0, high=1)
        self.use_bias = bool(use_bias)
        if output_shape is not None and not isinstance(output_shape, int):
            shape = tuple(output_shape)
            if len(shape) != 1:
                raise ValueError(f"{self.describe()}: output_shape must be an int or a 1-tuple "
                                 f"(the output's last axis), got {output_shape!r}")
            output_shape = shape[0]
        self._output_dim = output_shape
        self.attention_axes = attention_axes
        self.flash_attention = flash_attention
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.seed = _check_seed(self, seed)
        self.step_seed = 0

    def get_config(self):
        return dict(super().get_config(), num_heads=self.num_heads, key_dim=self.key_dim,
                    value_dim=self.value_dim, dropout=self.dropout, use_bias=self.use_bias,
                    output_shape=self._output_dim, attention_axes=self.attention_axes,
                    flash_attention=self.flash_attention,
                    kernel_initializer=str(self.kernel_initializer),
                    bias_initializer=str(self.bias_initializer), seed=self.seed,
                    **self._weight_options_config())

    def __call__(self, query, value=None, key=None, query_mask=None, value_mask=None, key_mask=None,
                 attention_mask=None, return_attention_scores=False, training=None,
                 use_causal_mask=False):
        if isinstance(query, (list, tuple)) and value is None:   # a model replaying [q, v, ...]
            return self._call(query, training, use_causal_mask, return_attention_scores)
        if value is None:
            raise TypeError(f"{self.describe()} needs query and value: layer(query, value)")
        if any(m is not None for m in (query_mask, value_mask, key_mask)):
            raise ValueError(f"{self.describe()}: query_mask / value_mask / key_mask are not supported "
                             "by minidl; pass attention_mask (B, Tq, Tv) instead")
        if attention_mask is not None and key is None:
            key = value   # the key's place in the inputs, so that the mask's is fixed
        inputs = [query, value] + ([key] if key is not None else []) + (
            [attention_mask] if attention_mask is not None else [])
        return self._call(inputs, training, use_causal_mask, return_attention_scores)

    @staticmethod
    def _split_inputs(items):
        """query, value, key (the value when not given), attention mask (or None)."""
        query, value = items[0], items[1]
        key = items[2] if len(items) > 2 else value
        mask = items[3] if len(items) > 3 else None
        return query, value, key, mask

    def build(self, input_shape):
        if len(input_shape) not in (2, 3, 4):
            raise ValueError(f"{self.describe()} takes [query, value], [query, value, key] or "
                             f"[query, value, key, attention_mask], got {len(input_shape)} inputs")
        query, value, key, mask = self._split_inputs(input_shape)
        for name, shape in (("query", query), ("value", value), ("key", key)):
            if len(shape) != 2 or shape[-1] is None:
                raise ValueError(f"{self.describe()}: {name} must be (batch, time, features) with known "
                                 f"features, got {format_shape(shape)}")
        if key[0] != value[0] and None not in (key[0], value[0]):
            raise ValueError(f"{self.describe()}: key and value must have one length, got key "
                             f"{format_shape(key)} and value {format_shape(value)}")
        if mask is not None and len(mask) != 2:
            raise ValueError(f"{self.describe()}: attention_mask must be (batch, Tq, Tv), got "
                             f"{format_shape(mask)}")
        h, dk, dv = self.num_heads, self.key_dim, self.value_dim
        out = self._output_dim or query[-1]
        self._out_features = out
        weight_options = dict(regularizer=self.kernel_regularizer, constraint=self.kernel_constraint)
        bias_options = dict(regularizer=self.bias_regularizer, constraint=self.bias_constraint)
        self._projections = {}
        kv = self._kv_heads()
        for part, features, heads, width in (("query", query[-1], h, dk), ("key", key[-1], kv, dk),
                                             ("value", value[-1], kv, dv)):
            kernel = self.add_weight(f"{part}/kernel", (features, heads, width), self.kernel_initializer,
                                     **weight_options)
            bias = (self.add_weight(f"{part}/bias", (heads, width), self.bias_initializer, **bias_options)
                    if self.use_bias else None)
            self._projections[part] = (kernel, bias, features, heads * width)
        kernel = self.add_weight("attention_output/kernel", (h, dv, out), self.kernel_initializer, **weight_options)
        bias = self.add_weight("attention_output/bias", (out,), self.bias_initializer, **bias_options) \
            if self.use_bias else None
        self._projections["output"] = (kernel, bias, h * dv, out)

    def _kv_heads(self):
        """Key / value heads: one per query head here (GroupQueryAttention has fewer)."""
        return self.num_heads

    def _repeat_heads(self, call, name, t):
        """t (B, T, K, D) with each of its K heads repeated for its num_heads / K query heads, as
        (B, T, num_heads, D); t itself when K = num_heads."""
        b = self.backend
        batch, steps, kv, dim = b.shape(t)
        if kv == self.num_heads:
            return t
        group = self.num_heads // kv
        out = call.buffer(("repeated", name), (batch, steps, kv, group, dim))
        b.strided_copy(out, t, 0, (steps * kv * dim, kv * dim, dim, 0, 1))   # stride 0 repeats
        return b.reshape(out, (batch, steps, self.num_heads, dim))

    def _sum_heads(self, call, name, d, kv):
        """The gradient of _repeat_heads: d (B, T, num_heads, D) summed over each group."""
        b = self.backend
        batch, steps, heads, dim = b.shape(d)
        if kv == heads:
            return d
        out = call.buffer(("summed", name), (batch, steps, kv, 1, dim))
        b.reduce(out, b.reshape(d, (batch, steps, kv, heads // kv, dim)), "sum")
        return b.reshape(out, (batch, steps, kv, dim))

    def compute_output_shape(self, input_shape):
        query = input_shape[0]
        return tuple(query[:-1]) + (self._output_dim or query[-1],)

    def options_output_shape(self, input_shape, options):
        if not options.get("return_attention_scores"):
            return None
        query, value = input_shape[0], input_shape[1]
        return [self.compute_output_shape(input_shape), (self.num_heads, query[0], value[0])]

    def _project(self, call, part, x2):
        b = self.backend
        kernel, bias, k, n = self._projections[part]
        z = call.buffer(("z", part), (b.shape(x2)[0], n))
        b.gemm(z, x2, b.reshape(kernel.value, (k, n)))
        if bias is not None:
            b.bias_add(z, z, b.reshape(bias.value, (n,)))
        return z

    def _project_backward(self, call, part, dz, x2):
        """Weight gradients of one projection, and its input's gradient (rows, features)."""
        b = self.backend
        kernel, bias, k, n = self._projections[part]
        if self.trainable:
            b.gemm(b.reshape(call.grad(kernel), (k, n)), x2, dz, trans_a=True)
            if bias is not None:
                b.bias_grad(b.reshape(call.grad(bias), (n,)), dz)
        dx = call.buffer(("dx", part), (b.shape(dz)[0], k))
        b.gemm(dx, dz, b.reshape(kernel.value, (k, n)), trans_b=True)
        return dx

    def forward(self, call, inputs, training):
        b = self.backend
        query, value, key, mask = self._split_inputs(inputs)
        (batch, tq, _), tv = b.shape(query), b.shape(value)[1]
        h, dk, dv = self.num_heads, self.key_dim, self.value_dim
        rows = call.rows = {"query": b.reshape(query, (batch * tq, b.shape(query)[-1])),
                            "key": b.reshape(key, (batch * tv, b.shape(key)[-1])),
                            "value": b.reshape(value, (batch * tv, b.shape(value)[-1]))}
        q = b.reshape(self._project(call, "query", rows["query"]), (batch, tq, h, dk))
        kv = self._kv_heads()
        k = self._repeat_heads(call, "key", b.reshape(self._project(call, "key", rows["key"]),
                                                      (batch, tv, kv, dk)))
        v = self._repeat_heads(call, "value", b.reshape(self._project(call, "value", rows["value"]),
                                                        (batch, tv, kv, dv)))
        call.attention_mask = mask
        call.drop = self._dropout_mask(call, (batch, h, tq, tv), training)
        heads_out = call.buffer("heads_out", (batch, tq, h, dv))
        call.probs = call.buffer("probs", (batch, h, tq, tv))
        call.scale = 1.0 / math.sqrt(dk)
        b.attention_forward(heads_out, call.probs, q, k, v, mask, call.drop, call.scale,
                            self._causal(call))
        call.qkv = (q, k, v)
        call.inputs = len(inputs)
        rows["output"] = b.reshape(heads_out, (batch * tq, h * dv))
        out = b.reshape(self._project(call, "output", rows["output"]), (batch, tq, self._out_features))
        return [out, call.probs] if self._scores(call) else out

    def backward(self, call, dout):
        b = self.backend
        dscores = None
        if self._scores(call):
            dout, dscores = dout
        q, k, v = call.qkv
        rows = call.rows
        h, dv = self.num_heads, self.value_dim
        batch, tq = b.shape(q)[0], b.shape(q)[1]
        dout2 = b.reshape(dout, (batch * tq, self._out_features))
        dheads = b.reshape(self._project_backward(call, "output", dout2, rows["output"]),
                           (batch, tq, h, dv))
        dq, dk, dvv = (call.buffer(("d", name), b.shape(t)) for name, t in zip("qkv", (q, k, v)))
        b.attention_backward(dq, dk, dvv, dheads, q, k, v, call.probs, call.attention_mask,
                             call.drop, call.scale, self._causal(call))
        if dscores is not None and scores_given(call):
            add_scores_gradient(self, call, dq, dk, dscores, q, k)
        grads = {}
        kv = self._kv_heads()
        dk, dvv = self._sum_heads(call, "key", dk, kv), self._sum_heads(call, "value", dvv, kv)
        for part, d in (("query", dq), ("key", dk), ("value", dvv)):
            count = b.shape(rows[part])[0]
            grads[part] = self._project_backward(
                call, part, b.reshape(d, (count, b.shape(d)[2] * b.shape(d)[3])), rows[part])
        has_key, has_mask = call.inputs > 2, call.inputs > 3
        dquery = b.reshape(grads["query"], (batch, tq, b.shape(rows["query"])[1]))
        tv = b.shape(k)[1]
        dvalue = b.reshape(grads["value"], (batch, tv, b.shape(rows["value"])[1]))
        dkey = b.reshape(grads["key"], (batch, tv, b.shape(rows["key"])[1]))
        result = [dquery]
        if has_key:
            result += [dvalue, dkey]
        else:   # the value served as key too: both paths' gradients
            total = call.buffer("dvalue_total", b.shape(dvalue))
            b.add(total, dvalue, dkey)
            result.append(total)
        if has_mask:
            dmask = call.buffer("dmask", b.shape(call.attention_mask))
            b.fill(dmask, 0.0)   # a mask is not differentiable
            result.append(dmask)
        return result


class Attention(_AttentionCall):
    """Keras Attention (Luong's dot-product attention): inputs [query (B, Tq, d), value
    (B, Tv, d)] or [query, value, key]; scores = query . key (times the learned scalar
    `scale` when use_scale), softmax over Tv, then the weighted sum of values. use_causal_mask
    and return_attention_scores are call arguments as in Keras; dropout applies to the
    attention weights in training. score_mode "dot" only ("concat" is refused)."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, name=None,
                 trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        if score_mode not in ("dot", "concat"):
            raise ValueError(f"{self.describe()}: score_mode must be 'dot' or 'concat', got {score_mode!r}")
        if score_mode == "concat":
            raise ValueError(f"{self.describe()}: score_mode='concat' is not supported by minidl; use 'dot'")
        self.use_scale, self.score_mode = bool(use_scale), score_mode
        self.dropout = number(dropout, "dropout", self.describe(), low=0, high=1)
        self.seed = _check_seed(self, seed)
        self.step_seed = 0

    def get_config(self):
        return dict(super().get_config(), use_scale=self.use_scale, score_mode=self.score_mode,
                    dropout=self.dropout, seed=self.seed)

    def __call__(self, inputs, mask=None, training=None, return_attention_scores=False,
                 use_causal_mask=False):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(f"{self.describe()} takes a list [query, value] or [query, value, key], "
                             f"got {type(inputs).__name__}")
        if mask is not None and any(m is not None for m in mask):
            raise ValueError(f"{self.describe()}: mask=[query_mask, value_mask] is not supported by minidl")
        return self._call(list(inputs), training, use_causal_mask, return_attention_scores)

    def build(self, input_shape):
        query, value = input_shape[0], input_shape[1]
        key = input_shape[2] if len(input_shape) == 3 else value
        if any(len(s) != 2 for s in (query, value, key)) or query[-1] != key[-1] or key[0] != value[0]:
            raise ValueError(f"{self.describe()} needs query (B, Tq, d), value (B, Tv, dv) and key (B, Tv, d), "
                             "got " + ", ".join(format_shape(s) for s in input_shape))
        self.scale = self.add_weight("scale", (), "ones") if self.use_scale else None

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:-1]) + (input_shape[1][-1],)

    def options_output_shape(self, input_shape, options):
        if not options.get("return_attention_scores"):
            return None
        return [self.compute_output_shape(input_shape), (input_shape[0][0], input_shape[1][0])]

    def forward(self, call, inputs, training):
        b = self.backend
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) == 3 else value
        call.has_key = len(inputs) == 3
        (batch, tq, d), (_, tv, dv) = b.shape(query), b.shape(value)
        # one head: (B, T, d) is (B, T, 1, d) in the fused op's layout
        call.qkv = (b.reshape(query, (batch, tq, 1, d)), b.reshape(key, (batch, tv, 1, d)),
                    b.reshape(value, (batch, tv, 1, dv)))
        # the learned scale is read once per step: the fused op takes it as a number
        call.scale = float(b.to_numpy(self.scale.value)) if self.use_scale else 1.0
        call.drop = self._dropout_mask(call, (batch, 1, tq, tv), training)
        out = call.buffer("out", (batch, tq, 1, dv))
        call.probs = call.buffer("probs", (batch, 1, tq, tv))
        b.attention_forward(out, call.probs, *call.qkv, None, call.drop, call.scale,
                            self._causal(call))
        call.attention_mask = None
        out = b.reshape(out, (batch, tq, dv))
        # Keras's scores here are (B, Tq, Tv): the one head's
        return [out, b.reshape(call.probs, (batch, tq, tv))] if self._scores(call) else out

    def backward(self, call, dout):
        b = self.backend
        dscores = None
        if self._scores(call):
            dout, dscores = dout
        q, k, v = call.qkv
        dq, dk, dv = (call.buffer(("d", name), b.shape(t)) for name, t in zip("qkv", (q, k, v)))
        b.attention_backward(dq, dk, dv, b.reshape(dout, b.shape(dout)[:2] + (1, b.shape(dout)[2])),
                             q, k, v, call.probs, None, call.drop, call.scale, self._causal(call))
        if dscores is not None and scores_given(call):
            batch, tq, tv = b.shape(dscores)
            add_scores_gradient(self, call, dq, dk, b.reshape(dscores, (batch, 1, tq, tv)), q, k)
        if self.use_scale and self.trainable:
            # dq = scale * dS k, so sum(dq * q) = scale * sum(dS * q.k) = scale * dscale
            product = call.buffer("dq_q", b.shape(q))
            b.multiply(product, dq, q)
            total = call.buffer("dscale_sum", (1,))
            b.sum(total, product)
            grad = b.reshape(call.grad(self.scale), (1,))
            b.axpby(grad, 1.0 / call.scale, total, 0.0, total)
        squeeze = [b.reshape(t, b.shape(t)[:2] + (b.shape(t)[3],)) for t in (dq, dv, dk)]
        if call.has_key:
            return squeeze
        total = call.buffer("dvalue_total", b.shape(squeeze[1]))
        b.add(total, squeeze[1], squeeze[2])
        return [squeeze[0], total]


class GroupQueryAttention(MultiHeadAttention):
    """Keras GroupQueryAttention: num_query_heads query heads of head_dim share
    num_key_value_heads key / value heads (each serves num_query_heads / num_key_value_heads of
    them). Weights query/kernel (dq, Nq, head_dim), key/kernel and value/kernel (d, Nkv,
    head_dim), attention_output/kernel (Nq, head_dim, dq), with biases; the call is
    MultiHeadAttention's. sliding_window and use_gate are not supported."""

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0, use_bias=True,
                 sliding_window=None, flash_attention=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 use_gate=False, seed=None, name=None, trainable=True, **kwargs):
        super().__init__(num_query_heads, head_dim, dropout=dropout, use_bias=use_bias,
                         flash_attention=flash_attention, kernel_initializer=kernel_initializer,
                         bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, seed=seed,
                         name=name, trainable=trainable, **kwargs)
        kv = num_key_value_heads
        if isinstance(kv, bool) or not isinstance(kv, int) or kv < 1 or num_query_heads % kv:
            raise ValueError(f"{self.describe()}: num_key_value_heads must be a positive int dividing "
                             f"num_query_heads ({num_query_heads}), got {kv!r}")
        if sliding_window is not None or use_gate:
            raise ValueError(f"{self.describe()}: sliding_window and use_gate are not supported by minidl, "
                             f"got sliding_window={sliding_window!r}, use_gate={use_gate!r}")
        self.head_dim, self.num_query_heads, self.num_key_value_heads = head_dim, num_query_heads, kv

    def _kv_heads(self):
        return self.num_key_value_heads

    def get_config(self):
        config = super().get_config()
        for key in ("num_heads", "key_dim", "value_dim", "output_shape", "attention_axes"):
            config.pop(key)
        return dict(config, head_dim=self.head_dim, num_query_heads=self.num_query_heads,
                    num_key_value_heads=self.num_key_value_heads, sliding_window=None, use_gate=False)


class AdditiveAttention(Layer):
    """Keras AdditiveAttention (Bahdanau): scores[i, j] = sum(scale * tanh(query_i + key_j)) over
    the features, softmax over the values, then their weighted sum; inputs [query, value] or
    [query, value, key] of one feature size, weight `scale` (d,) when use_scale. The scores are
    not dot products, so this layer is written with minidl.ops (the backend's elementwise ops,
    reductions and GEMM) rather than the fused op. use_causal_mask is a call argument as in
    Keras; attention dropout is not supported (dropout must be 0)."""

    multiple_inputs = True

    def __init__(self, use_scale=True, dropout=0.0, name=None, trainable=True, **kwargs):
        super().__init__(name=name, trainable=trainable, **kwargs)
        self.use_scale = bool(use_scale)
        self.dropout = number(dropout, "dropout", self.describe(), low=0, high=1)
        if self.dropout:
            raise ValueError(f"{self.describe()}: attention dropout is not supported by minidl's "
                             f"AdditiveAttention, got dropout={dropout!r}")

    def get_config(self):
        return dict(super().get_config(), use_scale=self.use_scale, dropout=self.dropout)

    def __call__(self, inputs, mask=None, training=None, return_attention_scores=False,
                 use_causal_mask=False):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(f"{self.describe()} takes a list [query, value] or [query, value, key], "
                             f"got {type(inputs).__name__}")
        if (mask is not None and any(m is not None for m in mask)) or return_attention_scores:
            raise ValueError(f"{self.describe()}: mask and return_attention_scores are not supported by "
                             "minidl's AdditiveAttention")
        return Layer.__call__(self, list(inputs), training=training, use_causal_mask=bool(use_causal_mask))

    def build(self, input_shape):
        query, value = input_shape[0], input_shape[1]
        key = input_shape[2] if len(input_shape) == 3 else value
        if any(len(s) != 3 for s in (query, value, key)) or query[-1] != key[-1] or key[1] != value[1]:
            raise ValueError(f"{self.describe()} needs query (B, Tq, d), value (B, Tv, dv) and key (B, Tv, d), "
                             "got " + ", ".join(format_shape(s[1:]) for s in input_shape))
        self.scale = self.add_weight("scale", (query[-1],), "glorot_uniform") if self.use_scale else None

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:-1]) + (input_shape[1][-1],)

    def call(self, inputs, training=None, use_causal_mask=False):
        from .. import ops
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) == 3 else value
        terms = ops.tanh(ops.expand_dims(query, 2) + ops.expand_dims(key, 1))   # (B, Tq, Tv, d)
        if self.use_scale:
            terms = terms * self.scale
        scores = ops.sum(terms, axis=-1)                                         # (B, Tq, Tv)
        if use_causal_mask:
            tq, tv = scores.shape[1], scores.shape[2]
            # Keras subtracts 1e9 where the mask forbids
            scores = scores - (1.0 - ops.tri(tq, tv)) * 1e9
        return ops.matmul(ops.softmax(scores, axis=-1), value)
