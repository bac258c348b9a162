"""Corpus example: knowledge distillation.

Modeled on keras-team/keras-io examples/vision/knowledge_distillation.py (commit 501fb4c): a
Distiller Model subclass holding a teacher and a student, overriding compile(optimizer,
metrics, student_loss_fn, distillation_loss_fn, alpha, temperature) (calling super().compile
with only optimizer and metrics) and train_step / test_step: the teacher's predictions, a
GradientTape over the student's, the student loss plus KLDivergence between temperature-softened
softmaxes times T**2, gradients for the student's trainable_variables only, compiled metrics
updated and returned with student_loss / distillation_loss; teacher and student Sequentials with
Conv2D / LeakyReLU(alpha=...) / MaxPooling2D(strides=(1, 1), padding="same") / Flatten / Dense;
models.clone_model of the student trained from scratch for comparison. Written anew for
minidl's corpus with the same Keras 3 API (minidl.GradientTape, ops.softmax,
compute_metrics in place of compiled_metrics); synthetic digits, small models, 2 epochs."""

import numpy as np

import minidl as keras
from minidl import layers, ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


class Distiller(keras.Model):
    def __init__(self, student, teacher):
        super().__init__()
        self.teacher = teacher
        self.student = student

    def compile(self, optimizer, metrics, student_loss_fn, distillation_loss_fn, alpha=0.1, temperature=3):
        super().compile(optimizer=optimizer, metrics=metrics)
        self.student_loss_fn = student_loss_fn
        self.distillation_loss_fn = distillation_loss_fn
        self.alpha = alpha
        self.temperature = temperature

    def call(self, x):
        return self.student(x)

    def train_step(self, data):
        x, y = data
        teacher_predictions = self.teacher(x, training=False)
        with keras.GradientTape() as tape:
            student_predictions = self.student(x, training=True)
            student_loss = self.student_loss_fn(y, student_predictions)
            distillation_loss = self.distillation_loss_fn(
                ops.softmax(teacher_predictions / self.temperature, axis=1),
                ops.softmax(student_predictions / self.temperature, axis=1)) * self.temperature ** 2
            loss = self.alpha * student_loss + (1 - self.alpha) * distillation_loss
        trainable_vars = self.student.trainable_variables
        gradients = tape.gradient(loss, trainable_vars)
        self.optimizer.apply_gradients(zip(gradients, trainable_vars))
        results = self.compute_metrics(x, y, student_predictions)
        results.update({"student_loss": student_loss, "distillation_loss": distillation_loss})
        return results

    def test_step(self, data):
        x, y = data
        y_prediction = self.student(x, training=False)
        student_loss = self.student_loss_fn(y, y_prediction)
        results = self.compute_metrics(x, y, y_prediction)
        results.update({"student_loss": student_loss})
        return results


def convnet(name, width):
    return keras.Sequential([
        keras.Input(shape=(28, 28, 1)),
        layers.Conv2D(width, (3, 3), strides=(2, 2), padding="same"),
        layers.LeakyReLU(negative_slope=0.2),
        layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
        layers.Conv2D(2 * width, (3, 3), strides=(2, 2), padding="same"),
        layers.Flatten(),
        layers.Dense(10),
    ], name=name)


teacher, student = convnet("teacher", 32), convnet("student", 8)
student_scratch = keras.models.clone_model(student)
assert student_scratch.count_params() == student.count_params()

(x_train, y_train), (x_test, y_test) = digits(1200, 1), digits(300, 2)
x_train = np.reshape(x_train.astype("float32") / 255.0, (-1, 28, 28, 1))
x_test = np.reshape(x_test.astype("float32") / 255.0, (-1, 28, 28, 1))

teacher.compile(optimizer=keras.optimizers.Adam(), loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=[keras.metrics.SparseCategoricalAccuracy()])
teacher.fit(x_train, y_train, epochs=2, verbose=0)
_, teacher_accuracy = teacher.evaluate(x_test, y_test, verbose=0)
print("teacher accuracy", teacher_accuracy)
assert teacher_accuracy > 0.9

distiller = Distiller(student=student, teacher=teacher)
distiller.compile(optimizer=keras.optimizers.Adam(), metrics=[keras.metrics.SparseCategoricalAccuracy()],
                  student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  distillation_loss_fn=keras.losses.KLDivergence(), alpha=0.1, temperature=10)
teacher_before = teacher.get_weights()[0].copy()
history = distiller.fit(x_train, y_train, epochs=2, verbose=0)
print({k: [round(float(v), 3) for v in vs] for k, vs in history.history.items()})
assert {"sparse_categorical_accuracy", "student_loss", "distillation_loss"} <= set(history.history)
np.testing.assert_array_equal(teacher.get_weights()[0], teacher_before)   # only the student learns
results = distiller.evaluate(x_test, y_test, verbose=0, return_dict=True)
print("distilled student", results)
assert results["sparse_categorical_accuracy"] > 0.8

student_scratch.compile(optimizer=keras.optimizers.Adam(),
                        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                        metrics=[keras.metrics.SparseCategoricalAccuracy()])
student_scratch.fit(x_train, y_train, epochs=2, verbose=0)
print("student from scratch", student_scratch.evaluate(x_test, y_test, verbose=0))
