"""A subclassed model that overrides compute_loss only (Keras 3's knowledge-distillation recipe):
fit runs the default train_step with it, compile needs no loss, the weights without a gradient
(the teacher's) are left as they are with a warning, as Keras's optimizer does; every backend."""

import warnings

import numpy as np
import pytest

import minidl
from minidl import layers, ops


class Distiller(minidl.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher, self.student = teacher, student

    def compile(self, optimizer, student_loss_fn, distillation_loss_fn, alpha=0.1, temperature=3):
        super().compile(optimizer=optimizer)
        self.student_loss_fn, self.distillation_loss_fn = student_loss_fn, distillation_loss_fn
        self.alpha, self.temperature = alpha, temperature

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, allow_empty=False):
        teacher_pred = self.teacher(x, training=False)
        t = self.temperature
        distillation = self.distillation_loss_fn(ops.softmax(teacher_pred / t, axis=1),
                                                 ops.softmax(y_pred / t, axis=1)) * t ** 2
        return self.alpha * self.student_loss_fn(y, y_pred) + (1 - self.alpha) * distillation

    def call(self, x):
        return self.student(x)


def test_distiller_overriding_compute_loss_trains_the_student(backend):
    rng = np.random.default_rng(0)
    x = rng.random((64, 8)).astype("float32")
    y = (x[:, 0] * 3).astype(int)
    teacher = minidl.Sequential([layers.Input((8,)), layers.Dense(16, activation="relu"), layers.Dense(3)])
    student = minidl.Sequential([layers.Input((8,)), layers.Dense(8, activation="relu"), layers.Dense(3)])
    teacher.compile("adam", minidl.losses.SparseCategoricalCrossentropy(from_logits=True))
    teacher.fit(x, y, epochs=2, verbose=0)
    before = [w.copy() for w in teacher.get_weights()]
    distiller = Distiller(student, teacher)
    distiller.compile(minidl.optimizers.Adam(1e-2),
                      student_loss_fn=minidl.losses.SparseCategoricalCrossentropy(from_logits=True),
                      distillation_loss_fn=minidl.losses.KLDivergence(), alpha=0.1, temperature=10)
    with pytest.warns(UserWarning, match="gradients do not exist for .*kernel"):
        history = distiller.fit(x, y, epochs=4, verbose=0)
    losses = history.history["loss"]
    assert list(history.history) == ["loss"] and losses[-1] < losses[0]
    for a, b in zip(before, teacher.get_weights()):   # the teacher's weights stay
        np.testing.assert_array_equal(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # warned once
        distiller.fit(x, y, epochs=1, verbose=0)
