"""larq's API on minidl: `import minidl.larq as lq` runs larq scripts for binary and ternary
networks (quantizers, Quant* layers, WeightClip, math.sign, models.summary, Bop and
CaseOptimizer, convert and the bit-packed save_converted / load_converted).

Quantizers are backend ops (numpy, cpu, opencl), so training runs on every backend with latent
float weights and straight-through gradients.
"""

from . import callbacks, constraints, layers, math, models, optimizers, quantizers
from .binary_files import load_converted, save_converted
from .binary_inference import convert

__all__ = ["callbacks", "constraints", "convert", "layers", "load_converted", "math", "models", "optimizers",
           "quantizers", "save_converted"]
