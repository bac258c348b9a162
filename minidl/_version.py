"""minidl's version: one place (minidl.__version__ and minidl.version() read it)."""

__version__ = "0.1.0"
