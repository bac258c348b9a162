"""What Keras's applications share: the `weights` argument, the input shape rules
(keras.src.applications.imagenet_utils.obtain_input_shape, channels_last), the input tensor,
the head (classifier or pooling) and the ImageNet input preprocessing.

weights=None builds the network with random initial weights, weights=<path> loads a weights
file (Keras's published .h5 files, or one written by model.save_weights), and
weights="imagenet" reads Keras's published file from Keras's cache folder; minidl downloads
nothing (minidl/keras_files/pretrained.py).
"""

import os
import warnings

import numpy as np

from .. import layers
from ..layers.base import KerasTensor
from ..models import Model

MODES = ("caffe", "tf", "torch")
CAFFE_MEAN_BGR = (103.939, 116.779, 123.68)
TORCH_MEAN, TORCH_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def start(owner, weights, include_top, input_tensor, input_shape, pooling, classes,
          default_size=224, min_size=32, imagenet_file=None):
    """Check the arguments every application takes and return the network's input tensor;
    imagenet_file: (Keras's file name, its family), found before anything is built."""
    check_weights(owner, weights)
    if weights == "imagenet":
        from ..keras_files import pretrained
        pretrained.cached_file(owner, *imagenet_file)
    if weights == "imagenet" and include_top and classes != 1000:
        raise ValueError(f"{owner}: weights='imagenet' with include_top=True needs classes=1000 "
                         f"(the ImageNet classifier), got classes={classes!r}")
    check_pooling(owner, pooling)
    check_classes(owner, classes)
    if input_tensor is not None and input_shape is None:
        input_shape = getattr(input_tensor, "sample_shape", None)
    shape = obtain_input_shape(owner, input_shape, default_size, min_size, include_top)
    return image_input(owner, input_tensor, shape)


def check_weights(owner, weights):
    """None, "imagenet" (Keras's published file, read from Keras's cache folder by finish),
    or the path of an existing weights file."""
    if weights is None or (isinstance(weights, str) and weights == "imagenet"):
        return
    if not isinstance(weights, (str, os.PathLike)) or not os.path.isfile(weights):
        raise ValueError(f"{owner}: weights must be None (random initialization), 'imagenet' "
                         "(Keras's published file, from Keras's cache folder) or the path of "
                         f"a weights file; got weights={weights!r}")


def obtain_input_shape(owner, input_shape, default_size, min_size, include_top):
    """Keras's rules: without input_shape, (default_size, default_size, 3) when the classifier
    is included and (None, None, 3) without it; a given shape has three entries, each side at
    least min_size."""
    if not input_shape:
        return (default_size, default_size, 3) if include_top else (None, None, 3)
    input_shape = tuple(input_shape)
    if len(input_shape) != 3:
        raise ValueError(f"{owner}: input_shape must be a tuple of three integers (height, "
                         f"width, channels), got input_shape={input_shape!r}")
    if any(d is not None and d < min_size for d in input_shape[:2]):
        raise ValueError(f"{owner}: input size must be at least {min_size}x{min_size}; got "
                         f"input_shape={input_shape!r}")
    if input_shape[-1] not in (1, 3):
        warnings.warn(f"{owner}: this model usually expects 1 or 3 input channels; got an "
                      f"input_shape with {input_shape[-1]} channels", stacklevel=3)
    if include_top and None in input_shape:
        raise ValueError(f"{owner}: with include_top=True, input_shape must be static (no "
                         f"None); got input_shape={input_shape!r}")
    return input_shape


def image_input(owner, input_tensor, input_shape):
    """The network's input tensor: input_tensor (a symbolic tensor of a minidl graph) or a new
    Input(input_shape)."""
    if input_tensor is None:
        return layers.Input(shape=input_shape)
    if not isinstance(input_tensor, KerasTensor):
        raise ValueError(f"{owner}: input_tensor must be a symbolic tensor (layers.Input(...) or "
                         f"a layer's output), got {type(input_tensor).__name__}")
    shape = input_tensor.sample_shape
    if len(shape) != 3:
        raise ValueError(f"{owner}: input_tensor must be an image tensor (None, height, width, "
                         f"channels), got shape {input_tensor.shape}")
    if input_shape is not None and tuple(input_shape) != shape:
        raise ValueError(f"{owner}: input_shape {tuple(input_shape)} does not match the "
                         f"input_tensor's shape {input_tensor.shape}")
    return input_tensor


def source_inputs(tensor):
    """The Input tensors that `tensor` is computed from, in the order they are first met."""
    found, stack, seen = [], [tensor], set()
    while stack:
        t = stack.pop()
        if id(t) in seen:
            continue
        seen.add(id(t))
        node = t.node
        if node is None or not node.inputs:
            found.append(t)
        else:
            stack.extend(reversed(node.inputs))
    return found[0] if len(found) == 1 else found


def check_pooling(owner, pooling):
    if pooling not in (None, "avg", "max"):
        raise ValueError(f"{owner}: pooling must be None, 'avg' or 'max', got {pooling!r}")


def head(x, include_top, pooling, classes, classifier_activation, pool_names=(None, None),
         dense_initializer="glorot_uniform"):
    """Keras's top: global average pooling and the 'predictions' layer, or (include_top=False)
    the optional global pooling. pool_names are the (average, maximum) pooling layers' names,
    None for an automatic one."""
    if include_top:
        x = layers.GlobalAveragePooling2D(name=pool_names[0])(x)
        return classifier(x, classes, classifier_activation, dense_initializer)
    if pooling == "avg":
        return layers.GlobalAveragePooling2D(name=pool_names[0])(x)
    if pooling == "max":
        return layers.GlobalMaxPooling2D(name=pool_names[1])(x)
    return x


def classifier(x, classes, classifier_activation, kernel_initializer="glorot_uniform"):
    return layers.Dense(classes, activation=classifier_activation,
                        kernel_initializer=kernel_initializer, name="predictions")(x)


def finish(img_input, input_tensor, outputs, name, weights, imagenet_file=None):
    """The model from its input (the input_tensor's sources) to outputs, with the weights file
    loaded when one was given; imagenet_file: (Keras's file name, its family) for
    weights="imagenet"."""
    from ..keras_files import pretrained
    inputs = img_input if input_tensor is None else source_inputs(input_tensor)
    model = Model(inputs, outputs, name=name)
    owner = f"applications {name!r}"
    if weights == "imagenet":     # start() found it
        weights = pretrained.cached_file(owner, *imagenet_file)
    if weights is not None:
        pretrained.load_pretrained(model, weights, owner)
    return model


def check_classes(owner, classes):
    if isinstance(classes, bool) or not isinstance(classes, int) or classes < 1:
        raise ValueError(f"{owner}: classes must be a positive int, got {classes!r}")


def correct_pad(shape, kernel_size):
    """The ((top, bottom), (left, right)) zero padding before a stride-2 'valid' convolution
    that reproduces TensorFlow's 'same' (Keras's imagenet_utils.correct_pad); shape is
    (height, width, ...)."""
    k = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
    adjust = (1, 1) if shape[0] is None else (1 - shape[0] % 2, 1 - shape[1] % 2)
    return ((k[0] // 2 - adjust[0], k[0] // 2), (k[1] // 2 - adjust[1], k[1] // 2))


def preprocess_input(x, data_format=None, mode="caffe"):
    """Keras's ImageNet input preprocessing of a NumPy batch (or one image), returned as a new
    array (Keras changes a float array in place; minidl never does):
    'caffe' RGB -> BGR, then minus the ImageNet mean pixel; 'tf' to [-1, 1]; 'torch' to [0, 1],
    then each channel standardized with ImageNet's mean and deviation."""
    if mode not in MODES:
        raise ValueError(f"preprocess_input: mode must be one of {list(MODES)}, got {mode!r}")
    if data_format not in (None, "channels_last", "channels_first"):
        raise ValueError("preprocess_input: data_format must be None, 'channels_last' or "
                         f"'channels_first', got {data_format!r}")
    if isinstance(x, KerasTensor):
        raise TypeError("preprocess_input works on NumPy arrays; inside a model use "
                        "layers.Rescaling / layers.Normalization")
    x = np.asarray(x)
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float32
    x = x.astype(dtype, copy=True)
    if mode == "tf":
        return (x / 127.5 - 1.0).astype(dtype)
    axis = -1 if data_format != "channels_first" else (0 if x.ndim == 3 else 1)
    if x.ndim < 3 or x.shape[axis] != 3:
        raise ValueError(f"preprocess_input: mode {mode!r} needs images with 3 channels on axis "
                         f"{axis}, got shape {x.shape}")
    shape = [1] * x.ndim
    shape[axis] = 3
    if mode == "torch":
        x = (x / 255.0 - np.reshape(TORCH_MEAN, shape)) / np.reshape(TORCH_STD, shape)
    else:
        x = np.flip(x, axis) - np.reshape(CAFFE_MEAN_BGR, shape)
    return x.astype(dtype)


def decode_predictions(preds, top=5):
    """Keras decodes ImageNet predictions with ImageNet's class index, a file it downloads;
    minidl ships no such file and downloads nothing, so this checks `preds` and says so."""
    shape = np.shape(preds)
    if len(shape) != 2 or shape[1] != 1000:
        raise ValueError("decode_predictions expects a batch of ImageNet predictions (a 2D array "
                         f"of shape (samples, 1000)), got an array of shape {shape}")
    raise RuntimeError(
        "decode_predictions needs ImageNet's class index (Keras's imagenet_class_index.json), "
        "which minidl does not ship or download (nor any ImageNet weights); map the top "
        f"{top} indices, np.argsort(preds, axis=1)[:, ::-1][:, :top], to your own class names")
