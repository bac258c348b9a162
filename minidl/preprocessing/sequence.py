"""keras.preprocessing.sequence: pad_sequences (the same function as minidl.utils.pad_sequences)."""

from ..utils.sequences import pad_sequences

__all__ = ["pad_sequences"]
