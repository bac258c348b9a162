"""Keras's published pretrained weights for minidl.applications.

weights="imagenet" reads the file Keras itself downloads, under the name Keras gives it, from
Keras's cache folder ($KERAS_HOME/models, else ~/.keras/models): minidl downloads nothing, so
a missing file is an error naming the file, the folder and where Keras fetches it from.
weights="<path>" reads such a file (or one minidl wrote) from anywhere.

Keras's published files are Keras 2 HDF5 weights (layer_names / weight_names). minidl's
applications carry Keras's layer names, so these files are matched by layer name, and every
layer with weights must be found in the file, with the shapes its weights have.
"""

import os


# where Keras downloads each family's files from (keras/src/applications/*.py)
SOURCES = {
    "resnet": "https://storage.googleapis.com/tensorflow/keras-applications/resnet/",
    "vgg16": "https://storage.googleapis.com/tensorflow/keras-applications/vgg16/",
    "mobilenet_v2": "https://storage.googleapis.com/tensorflow/keras-applications/mobilenet_v2/",
    "efficientnet": "https://storage.googleapis.com/keras-applications/",
}
SOURCES.update({family: f"https://storage.googleapis.com/tensorflow/keras-applications/{family}/"
                for family in ("vgg19", "densenet", "mobilenet", "mobilenet_v3", "xception",
                               "inception_v3", "inception_resnet_v2", "efficientnet_v2",
                               "convnext", "nasnet")})


def keras_cache_folder():
    """Keras's cache of downloaded models: $KERAS_HOME/models, else ~/.keras/models."""
    home = os.environ.get("KERAS_HOME") or os.path.join(os.path.expanduser("~"), ".keras")
    return os.path.join(home, "models")


def cached_file(owner, file_name, family):
    """The path of Keras's published weights file `file_name` in Keras's cache folder."""
    folder = keras_cache_folder()
    path = os.path.join(folder, file_name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{owner}: weights='imagenet' reads Keras's published weights file {file_name} "
            f"from Keras's cache folder {folder} (set KERAS_HOME to use another), and it is not "
            f"there; minidl downloads nothing. Put the file there (Keras fetches it from "
            f"{SOURCES[family]}{file_name}), pass weights='<path of the file>', or "
            "weights=None for random initial weights")
    return path


def load_pretrained(model, path, owner):
    """Load an application's weights file: Keras 2 HDF5 (Keras's published files) matched by
    layer name, every weighted layer required (or, when automatic names differ but the
    counts agree, by position in Keras's layer order, as Keras reads them); any other file as
    model.load_weights."""
    from . import kind_of_file
    if kind_of_file(path) != "h5":
        model.load_weights(path)
        return
    from .state_walk import keras_functional_order
    from .weights_h5 import h5py, read_legacy_weights, require_every_layer
    with h5py().File(path, "r") as f:
        if "layer_names" not in f.attrs and "model_weights" not in f:
            model.load_weights(path)        # Keras 3's layout: by structure
            return
        group = f["model_weights"] if "layer_names" not in f.attrs else f
        if not by_name_fits(group, model, path):
            # automatic names (conv2d_7, ...) depend on what the session built before;
            # Keras reads these files by position in its layer order, so does minidl then
            read_legacy_weights(group, model, path, layers=keras_functional_order(model))
            return
        require_every_layer(group, model, path, owner)
        read_legacy_weights(group, model, path, by_name=True)


def by_name_fits(group, model, path):
    """Whether a Keras 2 weights group names every weighted layer of `model`; when it does
    not but holds as many weighted layers, the file is read by position."""
    from ..layers.input_layer import InputLayer
    from .weights_h5 import _flat_weights, legacy_layers
    stored = {name for name, _ in legacy_layers(group, path)}
    wanted = [item.name for item in model.layers
              if not isinstance(item, InputLayer) and _flat_weights(item)]
    return all(name in stored for name in wanted) or len(stored) != len(wanted)
