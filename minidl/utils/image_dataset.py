"""keras.utils.image_dataset_from_directory: a folder of class folders of images as batches.

The images are decoded (Pillow), resized (bilinear or nearest, TensorFlow's half-pixel
convention, as minidl's Resizing layer: the same C kernel) and kept in memory as one float32
array of 0..255 values; the result is a minidl.data.ArrayIterator, which fit / evaluate /
predict take, with `class_names` and `file_paths` attributes as Keras's dataset has.
"""

import os

import numpy as np

from ..data import ArrayIterator
from ..layers.image_steps import smart_resize_steps
from ..preprocessing.image import transform_images
from ..preprocessing.image_files import convert_image, img_to_array, open_image

EXTENSIONS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
LABEL_MODES = ("int", "categorical", "binary", None)
COLOR_CHANNELS = {"grayscale": 1, "rgb": 3, "rgba": 4}
# labels given as a list name classes 0..max(labels): bound the class list (and one-hot rows)
MAX_CLASSES = 65536


def _image_files(directory, follow_links, visited, extensions=EXTENSIONS):
    """The image files under `directory`, sorted, regular files only (a FIFO named x.png would
    block the reader). With follow_links, a folder whose real path is in `visited` (an
    ancestor: a link loop; another class's folder; one already walked) is not walked again."""
    found = []
    for root, dirs, files in os.walk(directory, followlinks=follow_links):
        if follow_links:
            kept = []
            for name in sorted(dirs):
                real = os.path.realpath(os.path.join(root, name))
                if real not in visited:
                    visited.add(real)
                    kept.append(name)
            dirs[:] = kept
        else:
            dirs.sort()
        found += [path for path in (os.path.join(root, f) for f in sorted(files)
                                    if f.lower().endswith(extensions)) if os.path.isfile(path)]
    return found


def _files_and_labels(directory, labels, class_names, follow_links, extensions=EXTENSIONS,
                      where="image_dataset_from_directory"):
    """(file paths, int labels or None, class names) in Keras's alphanumerical order; the
    files are those ending in one of `extensions` (text_dataset.py passes ".txt")."""
    if labels == "inferred":
        subfolders = sorted(d for d in os.listdir(directory)
                            if os.path.isdir(os.path.join(directory, d)))
        if class_names is not None:
            missing = sorted(set(class_names) - set(subfolders))
            if missing or len(set(class_names)) != len(class_names):
                raise ValueError(f"{where}: class_names {list(class_names)} must "
                                 f"name distinct subfolders of {directory!r}, which has {subfolders}")
            subfolders = list(class_names)
        paths, ints = [], []
        visited = {os.path.realpath(p) for p in
                   [directory] + [os.path.join(directory, name) for name in subfolders]}
        for index, name in enumerate(subfolders):
            found = _image_files(os.path.join(directory, name), follow_links, visited, extensions)
            paths += found
            ints += [index] * len(found)
        return paths, np.asarray(ints, np.int32), list(subfolders)
    if class_names is not None:
        raise ValueError(f"{where}: class_names is only valid with labels='inferred'")
    paths = _image_files(directory, follow_links, {os.path.realpath(directory)}, extensions)
    if labels is None:
        return paths, None, None
    given = np.asarray(labels)
    if given.ndim != 1 or given.dtype.kind not in "iu" or len(given) != len(paths):
        raise ValueError(f"{where}: labels must be 'inferred', None or one int "
                         f"per file ({len(paths)} found in {directory!r}), got {labels!r}")
    if not len(given):
        return paths, given.astype(np.int32), []
    if given.min() < 0 or given.max() >= MAX_CLASSES:
        raise ValueError(f"{where}: labels must be class indices in "
                         f"0..{MAX_CLASSES - 1}, got values from {given.min()} to {given.max()}")
    return paths, given.astype(np.int32), [str(c) for c in range(int(given.max()) + 1)]


def _split(paths, labels, validation_split, subset, seed, shuffle):
    if shuffle:
        seed = np.random.randint(1e6) if seed is None else seed
        order = np.random.RandomState(seed).permutation(len(paths))
        paths = [paths[i] for i in order]
        labels = None if labels is None else labels[order]
    if not validation_split:
        return {None: (paths, labels)}
    count = int(validation_split * len(paths))
    parts = {"training": (paths[:len(paths) - count], None if labels is None else labels[:len(paths) - count]),
             "validation": (paths[len(paths) - count:], None if labels is None else labels[len(paths) - count:])}
    return parts if subset == "both" else {subset: parts[subset]}


def _load(paths, image_size, color_mode, interpolation, crop_to_aspect_ratio):
    height, width = image_size
    out = np.empty((len(paths), height, width, COLOR_CHANNELS[color_mode]), np.float32)
    for i, path in enumerate(paths):
        # 16-bit images become 8-bit values (/ 256), as TensorFlow's decode_image gives Keras
        img = convert_image(open_image(path, "image_dataset_from_directory"), color_mode)
        pixels = img_to_array(img)[None]
        steps = smart_resize_steps(pixels.shape[1:3], image_size, interpolation, crop_to_aspect_ratio)
        for row, (oh, ow), step_interpolation, fill_mode in steps:
            resized = np.empty((1, oh, ow, pixels.shape[3]), np.float32)
            transform_images(resized, pixels, np.asarray([row], np.float32), step_interpolation,
                             fill_mode, 0.0)
            pixels = resized
        out[i] = pixels[0]
    return out


def _encode(labels, label_mode, classes):
    if label_mode == "int":
        return labels
    if label_mode == "binary":
        return labels.astype(np.float32)[:, None]
    return np.eye(classes, dtype=np.float32)[labels]


def _shard(paths, labels, shard, where):
    """rank's part of a subset's files and labels; shard = (rank, size)."""
    from ..distributed.data import shard as shard_arrays
    try:
        rank, size = shard
    except (TypeError, ValueError):
        raise ValueError(f"{where}: shard must be (rank, size), got {shard!r}") from None
    index = shard_arrays(np.arange(len(paths)), rank=rank, size=size)
    return [paths[i] for i in index], None if labels is None else np.asarray(labels)[index]


def image_dataset_from_directory(directory, labels="inferred", label_mode="int", class_names=None,
                                 color_mode="rgb", batch_size=32, image_size=(256, 256),
                                 shuffle=True, seed=None, validation_split=None, subset=None,
                                 interpolation="bilinear", follow_links=False,
                                 crop_to_aspect_ratio=False, verbose=True, shard=None):
    """Batches (x float32 (B, H, W, C) in 0..255, labels) of the images under `directory`
    (Keras 3): labels "inferred" (one class per subfolder), None, or one int per file in
    sorted order; label_mode "int", "categorical", "binary" or None; subset "training",
    "validation" or "both" (a pair) with validation_split. shard=(rank, size) (a minidl
    extension, for minidl.distributed): each subset keeps rank's equal, interleaved part of its
    files (minidl.distributed.shard), and only those images are read."""
    where = "image_dataset_from_directory"
    if not os.path.isdir(directory):
        raise ValueError(f"{where}: directory {directory!r} is not a folder")
    if label_mode not in LABEL_MODES:
        raise ValueError(f"{where}: label_mode must be one of {list(LABEL_MODES)}, got {label_mode!r}")
    if color_mode not in COLOR_CHANNELS:
        raise ValueError(f"{where}: color_mode must be one of {list(COLOR_CHANNELS)}, got {color_mode!r}")
    if interpolation not in ("bilinear", "nearest"):
        raise ValueError(f"{where}: interpolation must be 'bilinear' or 'nearest', got {interpolation!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"{where}: batch_size must be a positive int, got {batch_size!r}")
    size = tuple(image_size)
    if len(size) != 2 or not all(isinstance(v, int) and v > 0 for v in size):
        raise ValueError(f"{where}: image_size must be (height, width) of positive ints, got {image_size!r}")
    if validation_split:
        if not 0 < validation_split < 1:
            raise ValueError(f"{where}: validation_split must be in (0, 1), got {validation_split!r}")
        if subset not in ("training", "validation", "both"):
            raise ValueError(f"{where}: with validation_split, subset must be 'training', "
                             f"'validation' or 'both', got {subset!r}")
        if shuffle and seed is None:
            raise ValueError(f"{where}: with validation_split and shuffle=True, pass a seed so that "
                             "the training and validation subsets do not overlap")
    elif subset is not None:
        raise ValueError(f"{where}: subset {subset!r} needs a validation_split")
    if labels is None:
        label_mode = None
    if shard is not None and shuffle and seed is None:
        raise ValueError(f"{where}: with shard and shuffle=True, pass a seed so that every rank "
                         "shuffles the files the same way (the shards must not overlap)")
    paths, ints, names = _files_and_labels(directory, labels, class_names, follow_links)
    if not paths:
        raise ValueError(f"{where}: no images ({', '.join(EXTENSIONS)}) found in {directory!r}")
    if label_mode == "binary" and len(names) != 2:
        raise ValueError(f"{where}: label_mode='binary' needs exactly 2 classes, found {len(names)}: {names}")
    if verbose:
        found = f"{len(paths)} files" + (f" belonging to {len(names)} classes" if names else "")
        print(f"Found {found}.")
    datasets = []
    for part, (part_paths, part_labels) in _split(paths, ints, validation_split, subset, seed, shuffle).items():
        if shard is not None:
            part_paths, part_labels = _shard(part_paths, part_labels, shard, where)
        if verbose and part is not None:
            print(f"Using {len(part_paths)} files for {part}.")
        if not part_paths:
            raise ValueError(f"{where}: the {part} subset is empty ({len(paths)} files, "
                             f"validation_split={validation_split})")
        x = _load(part_paths, size, color_mode, interpolation, crop_to_aspect_ratio)
        y = None if label_mode is None else _encode(part_labels, label_mode, len(names))
        dataset = ArrayIterator(x, y, batch_size=batch_size, shuffle=shuffle, seed=seed)
        dataset.class_names, dataset.file_paths = names, part_paths
        datasets.append(dataset)
    return tuple(datasets) if subset == "both" else datasets[0]
