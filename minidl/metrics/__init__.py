"""Keras metrics: the Metric classes, the metric functions, get / serialize / deserialize, and
what compile(metrics=[...]) runs in a model.

    classes.py         the Metric base (update_state, result, reset_state), Mean,
                       MeanMetricWrapper, the accuracies, Precision, Recall, AUC, CosineSimilarity
    confusion.py       the confusion-count metrics (TruePositives, ..., *AtRecall, F-scores, IoUs)
    function_means.py  the means of a function of (y_true, y_pred): the regression, probabilistic
                       and hinge metrics (on the loss functions), Accuracy, Sum, RMSE, R2Score,
                       the correlations
    lookup.py          get, serialize, deserialize, FUNCTIONS
    compiled.py        compile's metrics in a model: fused accuracy counts or a Metric's state
"""

from .. import losses as _losses
from .classes import (AUC, CLASSES, BinaryAccuracy, CategoricalAccuracy, CosineSimilarity, Mean,
                      MeanMetricWrapper, Metric, Precision, Recall, SparseCategoricalAccuracy,
                      SparseTopKCategoricalAccuracy, TopKCategoricalAccuracy, binary_accuracy,
                      categorical_accuracy, cosine_similarity, sparse_categorical_accuracy,
                      sparse_top_k_categorical_accuracy, top_k_categorical_accuracy)
from .compiled import CountingMetric, StatefulMetric, for_model
from .confusion import (BinaryIoU, F1Score, FalseNegatives, FalsePositives, FBetaScore, IoU, MeanIoU,
                        OneHotIoU, OneHotMeanIoU, PrecisionAtRecall, RecallAtPrecision,
                        SensitivityAtSpecificity, SpecificityAtSensitivity, TrueNegatives, TruePositives)
from .function_means import (Accuracy, BinaryCrossentropy, CategoricalCrossentropy, CategoricalHinge,
                             ConcordanceCorrelation, Hinge, KLDivergence, LogCoshError, MeanAbsoluteError,
                             MeanAbsolutePercentageError, MeanSquaredError, MeanSquaredLogarithmicError,
                             PearsonCorrelation, Poisson, R2Score, RootMeanSquaredError,
                             SparseCategoricalCrossentropy, SquaredHinge, Sum, concordance_correlation,
                             pearson_correlation)
from .lookup import ALL_CLASSES, FUNCTIONS, deserialize, get, saved_name, serialize

# Keras's metric functions that are its loss functions (keras.metrics.mean_squared_error is
# keras.losses.mean_squared_error)
binary_crossentropy = _losses.binary_crossentropy
binary_focal_crossentropy = _losses.binary_focal_crossentropy
categorical_crossentropy = _losses.categorical_crossentropy
categorical_focal_crossentropy = _losses.categorical_focal_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
mean_squared_error = _losses.mean_squared_error
mean_absolute_error = _losses.mean_absolute_error
mean_absolute_percentage_error = _losses.mean_absolute_percentage_error
mean_squared_logarithmic_error = _losses.mean_squared_logarithmic_error
log_cosh = _losses.log_cosh
huber = _losses.huber
kl_divergence = _losses.kl_divergence
poisson = _losses.poisson
hinge = _losses.hinge
squared_hinge = _losses.squared_hinge
categorical_hinge = _losses.categorical_hinge

__all__ = sorted(set(ALL_CLASSES) | set(FUNCTIONS) | {"MeanMetricWrapper", "Metric", "get", "serialize",
                                                       "deserialize"})
