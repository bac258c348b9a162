"""Image files and arrays (Keras 2's keras.preprocessing.image helpers, also keras.utils').

Pillow is an optional dependency, imported when a function needs it. Decoding keeps Pillow's
decompression-bomb limit (Image.MAX_IMAGE_PIXELS) in force, so a small file cannot make a huge
allocation; save_img writes a temporary file beside the target and renames it, so a file a
user had is never left half-written.
"""

import os
import tempfile

import numpy as np

COLOR_MODES = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}
INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")


def pil_image():
    """PIL.Image, or an ImportError saying how to install it."""
    try:
        from PIL import Image
    except ImportError:
        raise ImportError("minidl's image file functions need Pillow: pip install pillow") from None
    return Image


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest",
             keep_aspect_ratio=False):
    """A PIL image from a file (Keras): color_mode "grayscale", "rgb" or "rgba"; target_size
    (height, width) resizes with `interpolation` (keep_aspect_ratio: centre-crop to the target's
    aspect ratio first)."""
    Image = pil_image()
    if color_mode not in COLOR_MODES:
        raise ValueError(f"load_img: color_mode must be one of {list(COLOR_MODES)}, got {color_mode!r}")
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"load_img: interpolation must be one of {list(INTERPOLATIONS)}, got "
                         f"{interpolation!r}")
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    with open(path, "rb") as f:
        img = Image.open(f)
        img.load()
    img = img.convert(COLOR_MODES[color_mode]) if img.mode != COLOR_MODES[color_mode] else img
    if target_size is not None:
        height, width = (int(v) for v in target_size)
        if (img.height, img.width) != (height, width):
            if keep_aspect_ratio:
                crop_h = min(img.height, int(img.width * height / width))
                crop_w = min(img.width, int(img.height * width / height))
                top, left = (img.height - crop_h) // 2, (img.width - crop_w) // 2
                img = img.crop((left, top, left + crop_w, top + crop_h))
            resampling = getattr(Image, "Resampling", Image)   # Pillow < 9.1: module constants
            img = img.resize((width, height), getattr(resampling, interpolation.upper()))
    return img


def img_to_array(img, data_format=None, dtype="float32"):
    """A PIL image as a (H, W, C) array (channels_last; grayscale gets C = 1)."""
    if data_format not in (None, "channels_last"):
        raise ValueError(f"img_to_array: minidl is channels_last, got data_format={data_format!r}")
    x = np.asarray(img, dtype=dtype)
    if x.ndim == 2:
        x = x[:, :, None]
    if x.ndim != 3:
        raise ValueError(f"img_to_array: unsupported image shape {x.shape}")
    return x


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A (H, W, C) array (C = 1, 3 or 4) as a PIL image; scale maps its range onto 0..255."""
    Image = pil_image()
    if data_format not in (None, "channels_last"):
        raise ValueError(f"array_to_img: minidl is channels_last, got data_format={data_format!r}")
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 3 or x.shape[2] not in (1, 3, 4):
        raise ValueError(f"array_to_img: expects an image array (H, W, 1|3|4), got shape {x.shape}")
    if scale:
        x = x - np.min(x)
        top = np.max(x)
        if top != 0:
            x = x / top
        x = x * 255
    pixels = np.clip(np.rint(x), 0, 255).astype(np.uint8)
    if pixels.shape[2] == 1:
        return Image.fromarray(pixels[:, :, 0], "L")
    return Image.fromarray(pixels, "RGB" if pixels.shape[2] == 3 else "RGBA")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Save an image array to `path` (the format from file_format or the extension), through a
    temporary file renamed into place."""
    img = array_to_img(x, data_format=data_format, scale=scale)
    path = os.fspath(path)
    if file_format is None:
        extension = os.path.splitext(path)[1].lower().lstrip(".")
        if not extension:
            raise ValueError(f"save_img: cannot tell the format of {path!r}; pass file_format")
        file_format = {"jpg": "jpeg"}.get(extension, extension)
    if img.mode == "RGBA" and file_format.lower() in ("jpg", "jpeg"):
        img = img.convert("RGB")   # JPEG has no alpha channel (Keras drops it too)
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    try:
        with os.fdopen(handle, "wb") as f:
            img.save(f, format=file_format, **kwargs)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
