"""TensorBoard: training curves, weight histograms and the model's config as TensorBoard
event files, as Keras's callback writes them (needs the optional `tensorboard` package:
pip install minidl[tensorboard]).

    model.fit(x, y, epochs=5, validation_data=(xv, yv),
              callbacks=[TensorBoard(log_dir="logs", histogram_freq=1, update_freq="batch")])
    # then: tensorboard --logdir logs

log_dir/train and log_dir/validation each get one event file. Written there, with Keras's
tags: "epoch_<metric>" per epoch (learning_rate included; validation values under
validation/ without their val_ prefix), "batch_<metric>" every update_freq batches (a
number, or "batch": every batch), "evaluation_<metric>_vs_iterations" when evaluate runs
with the callback, "<layer>/<weight>/histogram" every histogram_freq epochs, and the model's
JSON config as the text summary "keras" (write_graph). Reading the batch values forces the
device to finish the step, so batch curves cost a little speed; epoch curves cost nothing.
"""

import os
import time

import numpy as np

from .base import Callback

_MISSING = ("TensorBoard needs the `tensorboard` package to write event files: "
            "pip install minidl[tensorboard] (or pip install tensorboard)")


def _protos():
    """The tensorboard modules the writer uses (ImportError with the install hint if absent)."""
    try:
        from tensorboard.compat.proto import (event_pb2, summary_pb2, tensor_pb2,
                                              tensor_shape_pb2, types_pb2)
        from tensorboard.summary.writer.event_file_writer import EventFileWriter
    except ImportError as exc:
        raise ImportError(f"{_MISSING} ({exc})") from None
    return event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2, EventFileWriter


class _Writer:
    """One run's event file: scalars, histograms and text, each at a step."""

    def __init__(self, logdir):
        (self.event_pb2, self.summary_pb2, self.tensor_pb2, self.tensor_shape_pb2,
         self.types_pb2, writer_class) = _protos()
        os.makedirs(logdir, exist_ok=True)
        self._writer = writer_class(logdir, filename_suffix=".v2")

    def _add(self, value, step):
        summary = self.summary_pb2.Summary(value=[value])
        self._writer.add_event(self.event_pb2.Event(wall_time=time.time(), step=int(step),
                                                    summary=summary))

    def scalar(self, tag, value, step):
        self._add(self.summary_pb2.Summary.Value(tag=tag, simple_value=float(value)), step)

    def histogram(self, tag, values, step, bins=30):
        values = np.asarray(values, dtype=np.float64).ravel()
        if values.size == 0:
            return
        counts, edges = np.histogram(values, bins=bins)
        histo = self.summary_pb2.HistogramProto(
            min=float(values.min()), max=float(values.max()), num=float(values.size),
            sum=float(values.sum()), sum_squares=float(np.dot(values, values)),
            bucket_limit=[float(e) for e in edges[1:]], bucket=[float(c) for c in counts])
        self._add(self.summary_pb2.Summary.Value(tag=tag, histo=histo), step)

    def text(self, tag, text, step):
        tensor = self.tensor_pb2.TensorProto(
            dtype=self.types_pb2.DT_STRING, string_val=[text.encode()],
            tensor_shape=self.tensor_shape_pb2.TensorShapeProto())
        metadata = self.summary_pb2.SummaryMetadata(
            plugin_data=self.summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
        self._add(self.summary_pb2.Summary.Value(tag=tag, metadata=metadata, tensor=tensor), step)

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()


class TensorBoard(Callback):
    """TensorBoard(log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
    write_steps_per_second=False, update_freq="epoch", profile_batch=0, embeddings_freq=0,
    embeddings_metadata=None); see the module docstring. write_images, profile_batch and
    embeddings_freq (TensorFlow's image, profiler and projector plugins) must stay off."""

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None):
        super().__init__()
        _protos()   # a missing package is reported now, not at the first epoch
        owner = "TensorBoard"
        if isinstance(histogram_freq, bool) or not isinstance(histogram_freq, int) \
                or histogram_freq < 0:
            raise ValueError(f"{owner}: histogram_freq must be an int >= 0, got {histogram_freq!r}")
        if update_freq not in ("epoch", "batch") and (
                isinstance(update_freq, bool) or not isinstance(update_freq, int)
                or update_freq < 1):
            raise ValueError(f"{owner}: update_freq must be 'epoch', 'batch' or an int >= 1, "
                             f"got {update_freq!r}")
        for name, value in (("write_images", write_images), ("profile_batch", profile_batch),
                            ("embeddings_freq", embeddings_freq)):
            if value:
                raise ValueError(f"{owner}: {name}={value!r} is not supported by minidl (it needs "
                                 "TensorFlow's image, profiler or projector plugins); leave it off")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = bool(write_graph)
        self.write_images = write_images
        self.write_steps_per_second = bool(write_steps_per_second)
        self.update_freq = 1 if update_freq == "batch" else update_freq
        self.profile_batch = profile_batch
        self.embeddings_freq = embeddings_freq
        self.embeddings_metadata = embeddings_metadata
        self._writers = {}
        self._global_train_batch = 0
        self._epoch_start = self._batch_start = 0.0
        self._epoch_steps = 0

    def _writer(self, run):
        if run not in self._writers:
            self._writers[run] = _Writer(os.path.join(self.log_dir, run))
        return self._writers[run]

    def _close(self):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    # ------------------------------------------------------------------ fit
    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        if self.write_graph and hasattr(self.model, "to_json"):
            self._writer("train").text("keras", self.model.to_json(), 0)

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch_start = time.time()
        self._epoch_steps = 0

    def on_train_batch_begin(self, batch, logs=None):
        self._batch_start = time.time()

    def on_train_batch_end(self, batch, logs=None):
        self._global_train_batch += 1
        self._epoch_steps += 1
        if self.update_freq == "epoch" or self._global_train_batch % self.update_freq:
            return
        writer, step = self._writer("train"), self._global_train_batch
        if self.write_steps_per_second:
            writer.scalar("batch_steps_per_second",
                          1.0 / max(time.time() - self._batch_start, 1e-9), step)
        for name in logs or {}:
            if name not in ("batch", "size"):
                writer.scalar(f"batch_{name}", logs[name], step)

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        train = {k: v for k, v in logs.items() if not k.startswith("val_")}
        if "learning_rate" not in train and getattr(self.model, "optimizer", None) is not None:
            train["learning_rate"] = self.model.optimizer.current_learning_rate()
        if self.write_steps_per_second:
            train["steps_per_second"] = self._epoch_steps / max(time.time() - self._epoch_start,
                                                                1e-9)
        writer = self._writer("train")
        for name, value in train.items():
            writer.scalar(f"epoch_{name}", value, epoch)
        validation = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        if validation:
            val_writer = self._writer("validation")
            for name, value in validation.items():
                val_writer.scalar(f"epoch_{name}", value, epoch)
            val_writer.flush()
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)
        writer.flush()

    def _log_weights(self, epoch):
        writer = self._writer("train")
        for layer in self.model.layers:
            for weight in layer.weights:
                writer.histogram(f"{weight.path.replace(':', '_')}/histogram", weight.numpy(),
                                 epoch)

    def on_train_end(self, logs=None):
        self._close()

    def on_interrupt(self, epoch, logs=None):
        for writer in self._writers.values():
            writer.flush()

    # ------------------------------------------------------------- evaluate
    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None or not logs:
            return
        writer = self._writer("validation")
        for name, value in logs.items():
            writer.scalar(f"evaluation_{name}_vs_iterations", value, optimizer.iterations)
        writer.flush()
