"""Test-session settings, applied before any test module imports minidl."""

import os
import tempfile

# The OpenCL GEMM tuner takes ~15 s and its choice depends on machine load: tests use the
# default kernels (the tuner's own tests switch it on explicitly).
os.environ.setdefault("MINIDL_OPENCL_TUNE", "0")
# Keep tests away from the user's ~/.minidl (dataset cache, tuning results).
os.environ.setdefault("MINIDL_HOME", tempfile.mkdtemp(prefix="minidl-tests-"))
