"""Callback, the base class of every callback, and CallbackList, which calls them in order."""


class Callback:
    """Base class; every hook does nothing. `model` and `params` are set by the training loop
    (params holds at least "epochs", "steps" and "verbose" during fit, and "initial_epoch"
    and "initial_step": where the first epoch of this fit starts, step > 0 when it resumes
    a saved position inside an epoch)."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        self.params = dict(params or {})

    def on_train_begin(self, logs=None):
        pass

    def on_train_end(self, logs=None):
        pass

    def on_epoch_begin(self, epoch, logs=None):
        pass

    def on_epoch_end(self, epoch, logs=None):
        pass

    def on_train_batch_begin(self, batch, logs=None):
        pass

    def on_train_batch_end(self, batch, logs=None):
        pass

    def on_interrupt(self, epoch, logs=None):
        """fit() got SIGINT or SIGTERM. Called once, after the step in flight (or the epoch
        end in progress) finished and model.fit_state holds the position to resume from,
        before on_train_end and before fit raises KeyboardInterrupt. `epoch` is the 0-based
        epoch in progress (the one that just ended when the signal came at an epoch end);
        `logs` holds that epoch's running loss and metrics (no val_ values)."""

    def on_test_begin(self, logs=None):
        pass

    def on_test_end(self, logs=None):
        pass

    def on_test_batch_begin(self, batch, logs=None):
        pass

    def on_test_batch_end(self, batch, logs=None):
        pass

    def on_predict_begin(self, logs=None):
        pass

    def on_predict_end(self, logs=None):
        pass

    def on_predict_batch_begin(self, batch, logs=None):
        pass

    def on_predict_batch_end(self, batch, logs=None):
        pass


class CallbackList:
    """Dispatches every hook to each callback in order, passing the same logs object along."""

    def __init__(self, callbacks=None, model=None, params=None):
        self.callbacks = []
        self.model = model
        self.params = dict(params or {})
        for callback in callbacks or []:
            self.append(callback)

    def append(self, callback):
        if not isinstance(callback, Callback):
            raise TypeError(f"CallbackList: every callback must be a minidl.callbacks.Callback, "
                            f"got {type(callback).__name__}")
        if self.model is not None:
            callback.set_model(self.model)
        callback.set_params(self.params)
        self.callbacks.append(callback)

    def set_model(self, model):
        self.model = model
        for callback in self.callbacks:
            callback.set_model(model)

    def set_params(self, params):
        self.params = dict(params or {})
        for callback in self.callbacks:
            callback.set_params(self.params)

    def __iter__(self):
        return iter(self.callbacks)

    def __len__(self):
        return len(self.callbacks)

    def _call(self, hook, *args):
        if args[-1] is None:   # as Keras: hooks always get a logs dict, empty at the begin hooks
            args = args[:-1] + ({},)
        for callback in self.callbacks:
            getattr(callback, hook)(*args)

    def on_train_begin(self, logs=None):
        self._call("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._call("on_train_end", logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._call("on_epoch_end", epoch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._call("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._call("on_train_batch_end", batch, logs)

    def on_interrupt(self, epoch, logs=None):
        self._call("on_interrupt", epoch, logs)

    def on_test_begin(self, logs=None):
        self._call("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._call("on_test_end", logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._call("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._call("on_test_batch_end", batch, logs)

    def on_predict_begin(self, logs=None):
        self._call("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._call("on_predict_end", logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._call("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._call("on_predict_batch_end", batch, logs)
