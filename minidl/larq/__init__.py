"""larq's API on minidl: `import minidl.larq as lq` runs larq scripts for binary and ternary
networks (quantizers, Quant* layers, WeightClip, math.sign, models.summary, Bop and
CaseOptimizer, the flip_ratio metric with context.metrics_scope, convert and the bit-packed
save_converted / load_converted).

Quantizers are backend ops (numpy, cpu, opencl), so training runs on every backend with latent
float weights and straight-through gradients.
"""

from . import callbacks, constraints, context, layers, math, metrics, models, optimizers, quantizers
from .binary_files import load_converted, save_converted
from .binary_inference import convert

__all__ = ["callbacks", "constraints", "context", "convert", "layers", "load_converted", "math", "metrics",
           "models", "optimizers", "quantizers", "save_converted"]
