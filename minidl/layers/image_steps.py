"""Fixed image resampling steps shared by Resizing, CenterCrop and RandomCrop.

A step is one image_transform op with a transform row computed from the shapes when the layer
is built (a crop is an integer shift read with "nearest", exact; a resize maps output pixel
centres onto input ones, TensorFlow's half-pixel convention, clamped at the edges). The rows
are uploaded once, at attach; forward and backward only launch the ops.
"""

import numpy as np


def crop_row(top, left):
    return [1, 0, left, 0, 1, top, 0, 0]


def resize_row(in_hw, out_hw):
    sy, sx = in_hw[0] / out_hw[0], in_hw[1] / out_hw[1]
    return [sx, 0, 0.5 * sx - 0.5, 0, sy, 0.5 * sy - 0.5, 0, 0]


def aspect_crop(height, width, target_height, target_width):
    """(top, left, crop_height, crop_width) of the largest centred window of the target's
    aspect ratio (Keras's crop_to_aspect_ratio)."""
    # at least one row and column, as Keras: (1, 100) of a 10x10 image is 1x10, not 0x10
    crop_height = max(min(height, int(float(width * target_height) / target_width)), 1)
    crop_width = max(min(width, int(float(height * target_width) / target_height)), 1)
    return (int(float(height - crop_height) / 2), int(float(width - crop_width) / 2),
            crop_height, crop_width)


def aspect_pad(height, width, target_height, target_width):
    """(top, left, padded_height, padded_width) of Keras's pad_to_aspect_ratio: the image
    centred in a frame of the target's aspect ratio, the same margin on both sides (so the
    frame may be one pixel short of the exact ratio, as Keras's concatenation makes it)."""
    pad_height = max(height, int(float(width * target_height) / target_width))
    pad_width = max(width, int(float(height * target_width) / target_height))
    top, left = int(float(pad_height - height) / 2), int(float(pad_width - width) / 2)
    return top, left, height + 2 * top, width + 2 * left


def smart_resize_steps(in_hw, out_hw, interpolation, crop_to_aspect_ratio,
                       pad_to_aspect_ratio=False):
    """[(row, (oh, ow), interpolation, fill_mode)] taking images of in_hw to out_hw; a pad
    step reads outside the image: its fill_mode is "constant" (ImageSteps' fill_value)."""
    steps, hw = [], tuple(in_hw)
    if crop_to_aspect_ratio:
        top, left, ch, cw = aspect_crop(*hw, *out_hw)
        if (ch, cw) != hw:
            steps.append((crop_row(top, left), (ch, cw), "nearest", "nearest"))
            hw = (ch, cw)
    elif pad_to_aspect_ratio:
        top, left, ph, pw = aspect_pad(*hw, *out_hw)
        if (ph, pw) != hw:
            steps.append((crop_row(-top, -left), (ph, pw), "nearest", "constant"))
            hw = (ph, pw)
    if hw != tuple(out_hw):
        steps.append((resize_row(hw, out_hw), tuple(out_hw), interpolation, "nearest"))
    return steps


class ImageSteps:
    """Runs a list of steps forward (through per-step buffers of the layer call `call`) and
    backward; fill_value is what "constant" steps read outside the image. The transform rows
    are constants of the steps, uploaded once."""

    def __init__(self, steps, role, fill_value=0.0):
        self.steps, self.role, self.fill_value = steps, role, float(fill_value)
        self.rows = []

    def attach(self, backend):
        self.rows = [backend.from_numpy(np.asarray([row], np.float32)) for row, *_ in self.steps]

    def forward(self, call, x):
        b = call.backend
        call.step_inputs = []
        for index, ((_, (oh, ow), interpolation, fill_mode), row) in enumerate(zip(self.steps, self.rows)):
            n, _, _, c = b.shape(x)
            out = call.buffer(f"{self.role}{index}", (n, oh, ow, c))
            b.image_transform_forward(out, x, row, interpolation, fill_mode, self.fill_value)
            call.step_inputs.append(b.shape(x))
            x = out
        return x

    def backward(self, call, dout):
        b = call.backend
        for index in reversed(range(len(self.steps))):
            _, _, interpolation, fill_mode = self.steps[index]
            dx = call.buffer(f"d{self.role}{index}", call.step_inputs[index])
            b.image_transform_backward(dx, dout, self.rows[index], interpolation, fill_mode)
            dout = dx
        return dout
