"""keras.ops.math: the same functions as minidl.ops.<name>, under Keras's namespace."""

from . import (  # noqa: F401
    cdist, erf, erfc, erfinv, extract_sequences, fft, fft2, ifft2, in_top_k,
    irfft, logdet, logsumexp, rfft, rsqrt, segment_max, segment_min, segment_prod,
    segment_sum, top_k,
)
