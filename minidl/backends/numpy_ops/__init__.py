"""Vectorized numpy kernels used by the numpy reference backend (minidl.backends.numpy_backend)."""
