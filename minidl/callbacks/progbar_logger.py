"""ProgbarLogger: Keras's name for the progress display that fit / evaluate / predict add
with verbose=1 or 2 (minidl's ProgressBar), its verbosity taken from the call's params."""

from .progress_bar import ProgressBar


class ProgbarLogger(ProgressBar):
    """ProgbarLogger(): prints progress as the call's verbose says (params["verbose"])."""

    def __init__(self):
        super().__init__(verbose=None)
