"""LambdaCallback: hooks given as functions, as Keras's."""

from .base import Callback

_HOOKS = ("on_epoch_begin", "on_epoch_end", "on_train_begin", "on_train_end",
          "on_train_batch_begin", "on_train_batch_end", "on_test_begin", "on_test_end",
          "on_test_batch_begin", "on_test_batch_end", "on_predict_begin", "on_predict_end",
          "on_predict_batch_begin", "on_predict_batch_end", "on_interrupt")


class LambdaCallback(Callback):
    """LambdaCallback(on_epoch_end=lambda epoch, logs: ..., ...): each hook given runs with
    the hook's arguments ((epoch, logs), (batch, logs) or (logs)); Keras's on_batch_begin /
    on_batch_end are the train batch hooks."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None,
                 on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None,
                 **kwargs):
        super().__init__()
        hooks = dict(on_epoch_begin=on_epoch_begin, on_epoch_end=on_epoch_end,
                     on_train_begin=on_train_begin, on_train_end=on_train_end,
                     on_train_batch_begin=on_train_batch_begin,
                     on_train_batch_end=on_train_batch_end)
        # Keras 2's names for the train batch hooks
        for old, new in (("on_batch_begin", "on_train_batch_begin"),
                         ("on_batch_end", "on_train_batch_end")):
            if old in kwargs:
                if hooks[new] is not None:
                    raise ValueError(f"LambdaCallback: give {old} or {new}, not both")
                hooks[new] = kwargs.pop(old)
        unknown = sorted(set(kwargs) - set(_HOOKS))
        if unknown:
            raise TypeError(f"LambdaCallback: unknown hooks {unknown}; known: {list(_HOOKS)}")
        hooks.update(kwargs)
        for name, fn in hooks.items():
            if fn is None:
                continue
            if not callable(fn):
                raise TypeError(f"LambdaCallback: {name} must be callable, got {fn!r}")
            setattr(self, name, fn)   # the instance attribute shadows the no-op hook
