"""keras.backend.clear_session / keras.utils.clear_session (one function for both)."""

from . import naming


def clear_session(free_memory=True):
    """Forget the automatic layer and model names, as Keras does: the next Dense is 'dense'
    again and the next Sequential 'sequential'. Models already made keep their names and
    weights (minidl has no global graph to drop). `free_memory` is accepted for Keras
    compatibility."""
    naming.reset()
