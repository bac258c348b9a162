"""Keras losses: the classes, their function forms, and get / serialize / deserialize.

One definition per loss. A loss with a backend kernel (the contract's losses section: the
cross-entropies, the mean squared error and the row losses) is computed by that kernel
everywhere: by model.fit, by a direct call loss(y_true, y_pred) and by its function form
losses.mean_absolute_error(y_true, y_pred), the last two as one differentiable op
(kernel_op.py). The Keras 3 losses without a kernel are written once with minidl.ops
(composed.py). Keras's ops.categorical_crossentropy & co. (minidl.ops) stay the
ops-composed form for code of your own.

    base.py          Loss (configuration, targets, the kernel dispatch), LossFunctionWrapper
    kernel_op.py     a kernel loss called directly, as a differentiable op
    crossentropy.py  CategoricalCrossentropy, SparseCategoricalCrossentropy, BinaryCrossentropy
    row_losses.py    MeanSquaredError and the losses of the row_loss kernels (MAE, Huber, ...)
    composed.py      the Keras 3 losses written with minidl.ops (focal, Dice, Tversky, Circle, ...)
    ctc.py           CTC and ctc, a loss of the whole sample (per_sample) on ops.ctc_loss
    functions.py     the function forms of the kernel losses
    lookup.py        get, serialize, deserialize
"""

from .base import REDUCTIONS, Loss, LossFunctionWrapper
from .composed import (BinaryFocalCrossentropy, CategoricalFocalCrossentropy, CategoricalGeneralizedCrossEntropy,
                       Circle, Dice, Tversky, binary_focal_crossentropy, categorical_focal_crossentropy,
                       categorical_generalized_cross_entropy, circle, dice, tversky)
from .composed import CLASSES as KERAS3_CLASSES
from .ctc import CTC, ctc
from .crossentropy import BinaryCrossentropy, CategoricalCrossentropy, SparseCategoricalCrossentropy
from .functions import (MAE, MSE, binary_crossentropy, categorical_crossentropy, categorical_hinge,
                        cosine_similarity, hinge, huber, kl_divergence, log_cosh, mae,
                        mean_absolute_error, mean_absolute_percentage_error, mean_squared_error,
                        mean_squared_logarithmic_error, mse, poisson, sparse_categorical_crossentropy,
                        squared_hinge)
from .lookup import _CLASSES  # noqa: F401 - every class by name (the config readers use it)
from .lookup import FUNCTIONS, deserialize, get, serialize
from .row_losses import (CategoricalHinge, CosineSimilarity, Hinge, Huber, KLDivergence, LogCosh,
                         MeanAbsoluteError, MeanAbsolutePercentageError, MeanSquaredError,
                         MeanSquaredLogarithmicError, Poisson, SquaredHinge)

__all__ = ["REDUCTIONS", "Loss", "LossFunctionWrapper", "KERAS3_CLASSES", "FUNCTIONS", "get", "serialize",
           "deserialize",
           "BinaryCrossentropy", "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "MeanSquaredError",
           "MeanAbsoluteError", "MeanAbsolutePercentageError", "MeanSquaredLogarithmicError", "Huber", "LogCosh",
           "Poisson", "KLDivergence", "Hinge", "SquaredHinge", "CategoricalHinge", "CosineSimilarity",
           "BinaryFocalCrossentropy", "CategoricalFocalCrossentropy", "CategoricalGeneralizedCrossEntropy",
           "Circle", "Dice", "Tversky", "CTC", "ctc",
           "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy",
           "mean_squared_error", "mean_absolute_error", "mean_absolute_percentage_error",
           "mean_squared_logarithmic_error", "huber", "log_cosh", "poisson", "kl_divergence", "hinge",
           "squared_hinge", "categorical_hinge", "cosine_similarity", "binary_focal_crossentropy",
           "categorical_focal_crossentropy", "categorical_generalized_cross_entropy", "circle", "dice", "tversky",
           "mse", "MSE", "mae", "MAE"]
