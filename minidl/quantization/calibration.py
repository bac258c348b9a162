"""Activation ranges from calibration batches: each observed tensor's (scale, zero point).

"minmax" takes the smallest and largest value seen; "percentile" the `percentile`-th and
(100 - percentile)-th percentiles of the values seen (a bounded sample of them), which clips
rare outliers so that the 256 levels cover the bulk of the distribution more finely.
"""

import numpy as np

METHODS = ("minmax", "percentile")
SAMPLE_PER_BATCH = 1 << 16   # values kept per tensor and batch for the percentile method


class RangeObserver:
    def __init__(self, method, percentile):
        self.method, self.percentile = method, percentile
        self.low, self.high, self.samples = np.inf, -np.inf, []
        self._rng = np.random.default_rng(0)

    def observe(self, values):
        values = values.reshape(-1)
        finite = values[np.isfinite(values)]
        if finite.size == 0:
            return
        self.low = min(self.low, float(finite.min()))
        self.high = max(self.high, float(finite.max()))
        if self.method == "percentile":
            if finite.size > SAMPLE_PER_BATCH:
                finite = self._rng.choice(finite, SAMPLE_PER_BATCH, replace=False)
            self.samples.append(finite.astype(np.float32))

    def range(self):
        if self.low > self.high:      # nothing finite seen
            return 0.0, 0.0
        if self.method == "minmax":
            return self.low, self.high
        values = np.concatenate(self.samples)
        return (float(np.percentile(values, 100.0 - self.percentile)),
                float(np.percentile(values, self.percentile)))


def qparams(low, high):
    """(scale, zero point) of uint8 covering [low, high] widened to hold 0 (a real zero is
    exactly representable: padding and ReLU need it)."""
    low, high = min(float(low), 0.0), max(float(high), 0.0)
    scale = (high - low) / 255.0
    if not scale > 0:
        return 1.0, 0
    zero_point = int(np.clip(round(-low / scale), 0, 255))
    return float(np.float32(scale)), zero_point
