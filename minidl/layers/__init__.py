"""Keras-style layers (channels_last)."""

from ..custom_objects import get_registered_object
from .base import KerasTensor, Layer
from .input_layer import Input, InputLayer
from .conv import Conv2D, ZeroPadding2D
from .embedding import Embedding
from .masking import Masking
from .conv1d import Conv1D, Conv1DTranspose, DepthwiseConv1D, SeparableConv1D
from .pooling1d import AveragePooling1D, GlobalAveragePooling1D, GlobalMaxPooling1D, MaxPooling1D
from .conv3d import Conv3D
from .conv3d_transpose import Conv3DTranspose
from .adaptive_pooling import (AdaptiveAveragePooling1D, AdaptiveAveragePooling2D, AdaptiveAveragePooling3D,
                               AdaptiveMaxPooling1D, AdaptiveMaxPooling2D, AdaptiveMaxPooling3D)
from .pooling3d import AveragePooling3D, GlobalAveragePooling3D, GlobalMaxPooling3D, MaxPooling3D
from .reshaping3d import Cropping3D, SpatialDropout3D, UpSampling3D, ZeroPadding3D
from .reshaping1d import Cropping1D, SpatialDropout1D, UpSampling1D, ZeroPadding1D
from .depthwise import DepthwiseConv2D, SeparableConv2D
from .conv_transpose import Conv2DTranspose
from .upsampling import UpSampling2D
from .core import Activation, Dense, Dropout, Flatten, LeakyReLU, ReLU, Reshape
from .lambda_layer import Lambda
from .op_nodes import OpNode as _OpNode, record_op as _record_op
from ..ops.symbolic_dispatch import register_symbolic as _register_symbolic
from .attention import AdditiveAttention, Attention, GroupQueryAttention, MultiHeadAttention
from .dot import Dot, dot
from .einsum_dense import EinsumDense
from .normalization_extra import GroupNormalization, Identity, RMSNormalization, UnitNormalization
from .merge import (Add, Average, Concatenate, Maximum, Minimum, Multiply, Subtract, add,
                    average, concatenate, maximum, minimum, multiply, subtract)
from .noise import GaussianNoise, SpatialDropout2D
from .regularization_layers import ActivityRegularization, AlphaDropout, GaussianDropout
from .wrapper_layers import SpectralNormalization, Wrapper
from .reversible_embedding import ReversibleEmbedding
from .input_spec import InputSpec
from .activation_layers import ELU, PReLU, Softmax
from .normalization import BatchNormalization, LayerNormalization
from .pooling import AveragePooling2D, GlobalAveragePooling2D, GlobalMaxPooling2D, MaxPooling2D
from .reshaping import Cropping2D, Permute, RepeatVector
from .recurrent_layers import GRU, LSTM, SimpleRNN
from .wrappers import Bidirectional, TimeDistributed
from .rnn_cells import RNN, GRUCell, LSTMCell, SimpleRNNCell, StackedRNN, StackedRNNCells
from .conv_lstm import ConvLSTM1D, ConvLSTM2D
from .conv_lstm3d import ConvLSTM3D
from .preprocessing import CenterCrop, Normalization, Rescaling, Resizing
from .preprocessing_random import (RandomBrightness, RandomContrast, RandomCrop, RandomFlip,
                                   RandomRotation, RandomTranslation, RandomZoom)
from .preprocessing_color import (AutoContrast, RandomColorDegeneration, RandomGrayscale, RandomHue, RandomInvert,
                                  RandomPosterization, RandomSaturation, Solarization)
from .preprocessing_jitter import RandomColorJitter
from .preprocessing_shear import RandomShear
from .augment_erasing import RandomErasing
from .augment_filters import RandomGaussianBlur, RandomSharpness
from .augment_elastic import RandomElasticTransform
from .augment_mixing import CutMix, MixUp
from .pipeline import Pipeline
from .preprocessing_equalize import ContrastLimitedAdaptiveHistogramEqualization, Equalization
from .preprocessing_perspective import RandomPerspective
from .preprocessing_randaugment import RandAugment
from .preprocessing_augmix import AugMix
from .category_encoding import CategoryEncoding, Discretization
from .hashing import HashedCrossing, Hashing
from .index_lookup import IntegerLookup, StringLookup
from .text_vectorization import TextVectorization

# Keras aliases
MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D
GlobalAvgPool2D = GlobalAveragePooling2D
GlobalMaxPool2D = GlobalMaxPooling2D
Convolution1D = Conv1D
MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalMaxPool1D = GlobalMaxPooling1D
MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool3D = GlobalMaxPooling3D
Convolution3D = Conv3D
Convolution2D = Conv2D
Convolution1DTranspose = Conv1DTranspose
Convolution2DTranspose = Conv2DTranspose
Convolution3DTranspose = Conv3DTranspose
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D

# minidl.ops called on KerasTensors record OpNodes in the graph (op_nodes.py)
_register_symbolic((KerasTensor,), _record_op)

LAYER_CLASSES = {cls.__name__: cls for cls in (
    InputLayer, Dense, Conv2D, ZeroPadding2D, Activation, Dropout, Flatten, LeakyReLU, ReLU,
    ActivityRegularization, AlphaDropout, GaussianDropout, SpectralNormalization, ReversibleEmbedding,
    Reshape, Add, Subtract, Multiply, Average, Maximum, Minimum, Concatenate, Lambda,
    BatchNormalization, AveragePooling2D, GlobalAveragePooling2D, MaxPooling2D, GlobalMaxPooling2D,
    Cropping2D, RepeatVector, ELU, Softmax, LayerNormalization, PReLU, GaussianNoise,
    SpatialDropout2D, Permute, CenterCrop, Normalization, Rescaling, Resizing, RandomBrightness,
    RandomContrast, RandomCrop, RandomFlip, RandomRotation, RandomTranslation, RandomZoom,
    DepthwiseConv2D, SeparableConv2D, Conv2DTranspose, UpSampling2D, SimpleRNN, LSTM, GRU,
    Bidirectional, TimeDistributed, StackedRNN, ConvLSTM1D, ConvLSTM2D, ConvLSTM3D,
    MultiHeadAttention, Attention,
    EinsumDense, RMSNormalization, UnitNormalization, GroupNormalization, Identity,
    GroupQueryAttention, AdditiveAttention, Dot, RandomColorDegeneration, RandomGrayscale, RandomHue, RandomInvert,
    RandomPosterization, RandomSaturation, Solarization, RandomColorJitter, AutoContrast,
    RandomShear, RandomErasing, RandomGaussianBlur, RandomSharpness, RandomElasticTransform, MixUp, CutMix, Pipeline,
    Equalization, ContrastLimitedAdaptiveHistogramEqualization, RandomPerspective, RandAugment, AugMix,
    Conv1D, Conv1DTranspose, DepthwiseConv1D, SeparableConv1D, AveragePooling1D,
    GlobalAveragePooling1D, GlobalMaxPooling1D, MaxPooling1D, Cropping1D, SpatialDropout1D,
    UpSampling1D, ZeroPadding1D, Embedding, Masking, AveragePooling3D, GlobalAveragePooling3D,
    GlobalMaxPooling3D, MaxPooling3D, Cropping3D, SpatialDropout3D, UpSampling3D, ZeroPadding3D,
    Conv3D, AdaptiveAveragePooling1D, AdaptiveAveragePooling2D, AdaptiveMaxPooling1D,
    AdaptiveMaxPooling2D, AdaptiveAveragePooling3D, AdaptiveMaxPooling3D, Conv3DTranspose,
    CategoryEncoding, Discretization, Hashing, HashedCrossing, IntegerLookup, StringLookup,
    TextVectorization)}


# the classes a model file may name: the layers, the graph nodes of minidl.ops calls (which
# are not a keras.layers name), and Keras's RNN with the cells a config nests in it
FILE_CLASSES = dict(LAYER_CLASSES, OpNode=_OpNode, RNN=RNN, StackedRNNCells=StackedRNNCells,
                    SimpleRNNCell=SimpleRNNCell, LSTMCell=LSTMCell, GRUCell=GRUCell)


def serialize(layer):
    """Keras 3's {"module", "class_name", "config", "registered_name"} dict of a layer."""
    from ..serialization import serialize_keras_object
    if not isinstance(layer, Layer):
        raise TypeError(f"layers.serialize: expected a layer, got {type(layer).__name__}")
    return serialize_keras_object(layer)


def deserialize(class_name, config=None, custom_objects=None):
    """A layer from its class name and get_config() dict, or (Keras 3's form) from one
    serialize() dict: deserialize({"class_name": ..., "config": ...}, custom_objects).
    Classes of your own are found through custom_objects, a custom_object_scope or
    @register_keras_serializable."""
    if isinstance(class_name, dict):
        custom_objects = config if custom_objects is None else custom_objects
        spec = class_name
        if not isinstance(spec.get("class_name"), str) or not isinstance(spec.get("config"), dict):
            raise ValueError(f"layers.deserialize: expected a dict with 'class_name' and "
                             f"'config', got {spec!r:.200}")
        class_name = spec.get("registered_name") or spec["class_name"]
        if get_registered_object(class_name, custom_objects, FILE_CLASSES) is None:
            class_name = spec["class_name"]
        config = spec["config"]
    cls = get_registered_object(class_name, custom_objects, FILE_CLASSES)
    if cls is None:
        # the hint first: a message quoting this one may be cut after a few hundred characters
        raise ValueError(f"unknown layer class {class_name!r} (register a class of your own with "
                         "@minidl.saving.register_keras_serializable or pass custom_objects); "
                         f"known: {sorted(LAYER_CLASSES)}")
    return cls.from_config(config)


__all__ = sorted(LAYER_CLASSES) + ["Input", "KerasTensor", "Layer", "MaxPool2D", "AvgPool2D",
                                   "GlobalAvgPool2D", "GlobalMaxPool2D", "Convolution1D", "MaxPool1D",
                                   "AvgPool1D", "GlobalAvgPool1D", "GlobalMaxPool1D", "MaxPool3D",
                                   "AvgPool3D", "GlobalAvgPool3D", "GlobalMaxPool3D", "Convolution3D",
                                   "deserialize", "serialize", "add",
                                   "subtract", "multiply", "average", "maximum", "minimum",
                                   "concatenate", "RNN", "SimpleRNNCell", "LSTMCell", "GRUCell",
                                   "StackedRNNCells", "dot", "Convolution2D", "Convolution1DTranspose",
                                   "Convolution2DTranspose", "Convolution3DTranspose",
                                   "SeparableConvolution1D", "SeparableConvolution2D", "Wrapper",
                                   "InputSpec"]
