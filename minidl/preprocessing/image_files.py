"""Image files and arrays (Keras 2's keras.preprocessing.image helpers, also keras.utils').

Pillow is an optional dependency, imported when a function needs it. An image is read only
from a regular file (a FIFO named x.png is refused, not waited on) and only once its header's
width x height is within max_image_pixels() (set_max_image_pixels changes it), so a small file
cannot make a huge allocation; any file that cannot be read raises a ValueError naming it.
save_img writes a temporary file beside the target and renames it, so a file a user had is
never left half-written, and keeps the replaced file's mode (a new one gets the umask's).
"""

import os
import stat
import warnings

import numpy as np

from ..io import atomic_write

COLOR_MODES = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}
INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")
# Pillow's modes for 16-bit (and 32-bit integer) single-channel images: PNG's 16-bit grayscale
SIXTEEN_BIT_MODES = ("I;16", "I;16B", "I;16L", "I;16N", "I")

# Pillow's own warning threshold (Image.MAX_IMAGE_PIXELS): 89.5 M pixels, 268 MB as RGB bytes.
DEFAULT_MAX_IMAGE_PIXELS = 89_478_485
_max_image_pixels = DEFAULT_MAX_IMAGE_PIXELS


def max_image_pixels():
    """The most pixels (width x height, from the file's header) an image file may have."""
    return _max_image_pixels


def set_max_image_pixels(limit):
    """Set the largest image (width x height pixels) load_img and image_dataset_from_directory
    decode; a larger file raises ValueError before any pixel is decoded. None: no limit of
    minidl's own (Pillow's Image.MAX_IMAGE_PIXELS still refuses twice its value)."""
    global _max_image_pixels
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, (int, np.integer))
                              or limit <= 0):
        raise ValueError(f"set_max_image_pixels: limit must be a positive int or None, got {limit!r}")
    _max_image_pixels = None if limit is None else int(limit)


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
    aspect ratio first). As Keras's, grayscale keeps a 16-bit image's values; rgb and rgba scale
    them to 8 bits (value / 256) where Pillow would clip them at 255."""
    Image = pil_image()
    if color_mode not in COLOR_MODES:
        raise ValueError(f"load_img: color_mode must be one of {list(COLOR_MODES)}, got {color_mode!r}")
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"load_img: interpolation must be one of {list(INTERPOLATIONS)}, got "
                         f"{interpolation!r}")
    img = open_image(path, "load_img")
    # Keras keeps 16-bit grayscale as it is ("I;16"); other modes would clip it at 255
    if color_mode != "grayscale" or img.mode not in ("L", "I;16", "I"):
        img = convert_image(img, color_mode)
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


def open_image(path, where):
    """The decoded PIL image in the regular file `path`, after checking its header's size
    against max_image_pixels(). Raises ValueError naming `where` and the file when it is not a
    regular file, too large, or not a readable image; FileNotFoundError / PermissionError as open."""
    Image = pil_image()
    path = os.fspath(path)
    # O_NONBLOCK: opening a named pipe must not wait for a writer; fstat then refuses it
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{where}: {path!r} is not a regular file (a FIFO, device or folder)")
        try:
            with warnings.catch_warnings():
                # the size check below replaces Pillow's warning between its limit and twice it
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                img = Image.open(f)
            limit = _max_image_pixels
            if limit is not None and img.width * img.height > limit:
                raise _TooLarge(f"{where}: the image file {path!r} is {img.width}x{img.height} "
                                f"pixels, more than the limit of {limit} (set it with "
                                "minidl.utils.set_max_image_pixels)")
            img.load()
        except _TooLarge as exc:
            raise ValueError(str(exc)) from None
        except Image.DecompressionBombError as exc:
            raise ValueError(f"{where}: the image file {path!r} is larger than Pillow's "
                             f"limit (PIL.Image.MAX_IMAGE_PIXELS): {exc}") from None
        except (OSError, SyntaxError, ValueError, EOFError, IndexError) as exc:
            # what Pillow's decoders raise on a damaged or unknown file
            raise ValueError(f"{where}: cannot read the image file {path!r} "
                             f"({type(exc).__name__}: {exc})") from None
    return img


class _TooLarge(Exception):
    pass


def convert_image(img, color_mode):
    """`img` in color_mode's Pillow mode; 16-bit values are scaled to 8 bits first (value / 256,
    as TensorFlow's decode_image, which Keras's image_dataset_from_directory uses): Pillow's own
    conversion would clip everything above 255 to 255."""
    if img.mode in SIXTEEN_BIT_MODES:
        Image = pil_image()
        wide = np.asarray(img).astype(np.int64)
        img = Image.fromarray((np.clip(wide, 0, 65535) >> 8).astype(np.uint8), "L")
    target = COLOR_MODES[color_mode]
    return img.convert(target) if img.mode != target else img


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
    with atomic_write(path) as f:
        img.save(f, format=file_format, **kwargs)
