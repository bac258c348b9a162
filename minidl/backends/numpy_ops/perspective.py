"""Keras 3's RandomPerspective transforms on the numpy reference backend
(image_perspective_transforms): per sample, a coin for whether it is transformed and eight
corner displacements, from the Philox uniforms of counters (sample, 0), (sample, 1) and
(sample, 2) (numpy_ops/images.py), then the projective row mapping the displaced corners
back to the image's corners, as Keras's compute_homography_matrix solves it."""

import numpy as np

from .images import sample_uniforms

IDENTITY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)


def corner_points(height, width):
    """Keras's start points (4, 2): (x, y) of the top-left, top-right, bottom-left and
    bottom-right pixel centres."""
    w1, h1 = float(width - 1), float(height - 1)
    return np.array([[0.0, 0.0], [w1, 0.0], [0.0, h1], [w1, h1]])


def perspective_rows(end_points, height, width):
    """(N, 8) rows [a0, a1, a2, b0, b1, b2, c0, c1] mapping each output pixel to its input
    point: the homography taking end_points (N, 4, 2) to the image's corners, in float64.
    Images of one row or column (no quadrilateral to map) get the identity."""
    n = end_points.shape[0]
    rows = np.tile(np.array(IDENTITY), (n, 1))
    if height < 2 or width < 2:
        return rows
    start = corner_points(height, width)
    for s in range(n):
        a = np.zeros((8, 8))
        b = np.zeros(8)
        for i, ((sx, sy), (ex, ey)) in enumerate(zip(start, end_points[s].astype(np.float64))):
            a[2 * i] = [ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey]
            a[2 * i + 1] = [0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey]
            b[2 * i], b[2 * i + 1] = sx, sy
        rows[s] = np.linalg.solve(a, b)
    return rows


def perspective_transforms(transforms, probability, scale, height, width, seed):
    """transforms (N, 8): sample s is transformed when u0 < lower + (upper - lower) u1 (Keras:
    a threshold below a drawn probability), its corner (x, y) moved to (x (1 + f), y (1 + f'))
    with the eight f in [-scale / 2, scale / 2] from counters (s, 1) and (s, 2)."""
    n = transforms.shape[0]
    f = np.float32
    lower, upper = f(probability[0]), f(probability[1])
    coin = sample_uniforms(n, seed, 0)
    apply = coin[:, 0] < lower + (upper - lower) * coin[:, 1]
    u = np.concatenate([sample_uniforms(n, seed, 1), sample_uniforms(n, seed, 2)], axis=1)
    factors = (f(-0.5) * f(scale) + f(scale) * u).reshape(n, 4, 2)
    start = corner_points(height, width).astype(np.float32)
    end = start + start * factors
    rows = perspective_rows(end, height, width)
    rows[~apply] = IDENTITY
    transforms[...] = rows.astype(np.float32)


class NumpyPerspectiveOps:
    """Mixed into NumpyBackend: image_perspective_transforms."""

    def _image_perspective_transforms(self, transforms, probability, scale, height, width, seed, *, sizes):
        lower, upper, scale = sizes
        perspective_transforms(transforms, (lower, upper), scale, int(height), int(width), seed)
