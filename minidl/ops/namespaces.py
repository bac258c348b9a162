"""The names of Keras's ops namespaces (keras.ops.nn, .linalg, .math, .core), as Keras 3 groups
them. minidl.ops defines every function once; minidl.ops.nn, .linalg and .core are also the
modules that implement some of them, and resolve the rest of their namespace's names here
(module __getattr__), so that `ops.nn.elu` and `ops.linalg.svd` work as in Keras."""

import importlib

NN = (
    "adaptive_average_pool", "adaptive_max_pool", "average_pool", "batch_normalization",
    "binary_crossentropy", "categorical_crossentropy", "celu", "conv", "conv_transpose",
    "ctc_decode", "ctc_loss", "depth_to_space", "depthwise_conv", "dot_product_attention", "elu",
    "fold", "gelu", "glu", "hard_shrink", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "layer_normalization", "leaky_relu", "log_sigmoid", "log_softmax", "max_pool", "moments",
    "multi_hot", "normalize", "one_hot", "psnr", "relu", "relu6", "rms_normalization", "selu",
    "separable_conv", "sigmoid", "silu", "soft_shrink", "softmax", "softplus", "softsign",
    "space_to_depth", "sparse_categorical_crossentropy", "sparse_plus", "sparse_sigmoid",
    "sparsemax", "squareplus", "swish", "tanh_shrink", "threshold", "unfold",
)

LINALG = (
    "cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "lstsq", "lu_factor",
    "matrix_rank", "norm", "pinv", "qr", "solve", "solve_triangular", "svd",
)

MATH = (
    "cdist", "erf", "erfc", "erfinv", "extract_sequences", "fft", "fft2", "ifft2", "in_top_k",
    "irfft", "logdet", "logsumexp", "rfft", "rsqrt", "segment_max", "segment_min", "segment_prod",
    "segment_sum", "top_k",
)

CORE = (
    "associative_scan", "cast", "cond", "convert_to_numpy", "convert_to_tensor", "custom_gradient",
    "dtype", "fori_loop", "is_tensor", "map", "saturate_cast", "scan", "scatter", "scatter_update",
    "shape", "slice", "slice_update", "stop_gradient", "switch", "unstack", "vectorized_map",
    "while_loop",
)

BY_MODULE = {"minidl.ops.nn": NN, "minidl.ops.linalg": LINALG, "minidl.ops.core": CORE}


def resolve(module, name):
    """`name` of keras.ops's namespace that `module` stands for, from minidl.ops."""
    if name in BY_MODULE.get(module, ()):
        return getattr(importlib.import_module("minidl.ops"), name)
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


def names(module, defined):
    return sorted(set(defined) | set(BY_MODULE.get(module, ())))
