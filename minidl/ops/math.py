"""keras.ops.math: the same functions as minidl.ops.<name>, under Keras's namespace."""

from .composite import (  # noqa: F401
    in_top_k, logsumexp, rsqrt)
from .control_flow import (  # noqa: F401
    segment_max, segment_min, segment_prod, segment_sum)
from .core import (  # noqa: F401
    erf)
from .decompositions import (  # noqa: F401
    fft, fft2, ifft2, irfft, logdet, rfft)
from .math_functions import (  # noqa: F401
    cdist, erfc, erfinv, extract_sequences)
from .ordering import (  # noqa: F401
    top_k)
