"""Corpus example: a Vision Transformer without attention (ShiftViT).

Modeled on keras-team/keras-io examples/vision/shiftvit.py (commit 079db3b): a data augmentation
Sequential (Resizing, RandomCrop, RandomFlip("horizontal"), Rescaling(1 / 255)); custom layers
built in `build(input_shape)` (an MLP holding a Sequential of gelu Dense / Dropout, a DropPath
layer drawing from keras.random.uniform when `training`, a ShiftViTBlock that splits the channels
with ops.split and shifts four groups by one pixel with ops.image.crop_images / pad_images, then
ops.concatenate, a PatchMerging Conv2D(kernel_size=2, strides=2, padding="same", use_bias=False),
a StackedShiftBlocks layer holding a Python list of blocks, with get_config); a subclassed
keras.Model whose train_step runs a GradientTape over its sublayers' trainable_variables and
apply_gradients on the (grad, variable) pairs and whose test_step computes the loss and metrics;
a custom optimizers.schedules.LearningRateSchedule (warmup then cosine, written with ops.cos /
ops.where / ops.cast, with get_config) handed to AdamW(learning_rate=schedule, weight_decay);
SparseCategoricalCrossentropy(from_logits=True), SparseCategoricalAccuracy(name="accuracy"),
SparseTopKCategoricalAccuracy(5, name="top-5-accuracy"), EarlyStopping(monitor="val_accuracy",
patience=5, mode="auto"), fit with validation_data, evaluate. Written anew for minidl's corpus
with the same Keras 3 API; what differs: synthetic 3-channel digit images 16 x 16 (10 classes)
in place of CIFAR-10, image 16 / patch 4 / 48 projected channels / stages [1, 1], 3 epochs;
tf.split / tf.image.crop_to_bounding_box / pad_to_bounding_box / tf.GradientTape became their
keras.ops / minidl spellings, self.compiled_loss / compiled_metrics became Keras 3's
compute_loss / compute_metrics; model.export (a TF SavedModel) became a save_weights /
load_weights round trip."""

import os
import tempfile

import numpy as np

import minidl as keras
from minidl import layers, ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


class Config:
    batch_size = 64
    input_shape = (16, 16, 3)
    num_classes = 10
    image_size = 16
    patch_size = 4
    projected_dim = 48
    num_shift_blocks_per_stages = [1, 1]
    epsilon = 1e-5
    stochastic_depth_rate = 0.2
    mlp_dropout_rate = 0.2
    num_div = 12
    shift_pixel = 1
    mlp_expand_ratio = 2
    lr_start, lr_max, weight_decay = 1e-5, 3e-3, 1e-4
    epochs = 3


config = Config()


def rgb(n, seed):
    x, y = digits(n, seed, size=config.input_shape[0])
    return np.repeat(x[..., None], 3, axis=-1), y[:, None]        # uint8 HWC, labels (n, 1) as CIFAR's


(x_train, y_train), (x_test, y_test) = rgb(900, 1), rgb(200, 2)
(x_train, y_train), (x_val, y_val) = (x_train[:768], y_train[:768]), (x_train[768:], y_train[768:])


def get_augmentation_model():
    return keras.Sequential([
        layers.Resizing(config.input_shape[0] + 4, config.input_shape[0] + 4),
        layers.RandomCrop(config.image_size, config.image_size),
        layers.RandomFlip("horizontal"),
        layers.Rescaling(1 / 255.0),
    ])


class MLP(layers.Layer):
    def __init__(self, mlp_expand_ratio, mlp_dropout_rate, **kwargs):
        super().__init__(**kwargs)
        self.mlp_expand_ratio = mlp_expand_ratio
        self.mlp_dropout_rate = mlp_dropout_rate

    def build(self, input_shape):
        channels = input_shape[-1]
        self.mlp = keras.Sequential([
            layers.Dense(units=int(self.mlp_expand_ratio * channels), activation=keras.activations.gelu),
            layers.Dropout(rate=self.mlp_dropout_rate),
            layers.Dense(units=channels),
            layers.Dropout(rate=self.mlp_dropout_rate),
        ])

    def call(self, x):
        return self.mlp(x)


class DropPath(layers.Layer):
    def __init__(self, drop_path_prob, **kwargs):
        super().__init__(**kwargs)
        self.drop_path_prob = drop_path_prob

    def call(self, x, training=False):
        if training:
            keep_prob = 1 - self.drop_path_prob
            shape = (ops.shape(x)[0],) + (1,) * (len(x.shape) - 1)
            random_tensor = ops.floor(keep_prob + keras.random.uniform(shape, 0, 1))
            return (x / keep_prob) * random_tensor
        return x


class ShiftViTBlock(layers.Layer):
    def __init__(self, epsilon, drop_path_prob, mlp_dropout_rate, num_div=12, shift_pixel=1,
                 mlp_expand_ratio=2, **kwargs):
        super().__init__(**kwargs)
        self.shift_pixel, self.mlp_expand_ratio = shift_pixel, mlp_expand_ratio
        self.mlp_dropout_rate, self.num_div = mlp_dropout_rate, num_div
        self.epsilon, self.drop_path_prob = epsilon, drop_path_prob

    def build(self, input_shape):
        self.H, self.W, self.C = input_shape[1], input_shape[2], input_shape[3]
        self.layer_norm = layers.LayerNormalization(epsilon=self.epsilon)
        self.drop_path = (DropPath(drop_path_prob=self.drop_path_prob) if self.drop_path_prob > 0.0
                          else layers.Activation("linear"))
        self.mlp = MLP(mlp_expand_ratio=self.mlp_expand_ratio, mlp_dropout_rate=self.mlp_dropout_rate)

    def get_shift_pad(self, x, mode):
        # crop shift_pixel rows / columns off one side, then pad them back on the other
        s = self.shift_pixel
        crop = {"left": (0, s, 0, 0), "right": (0, 0, 0, s), "up": (s, 0, 0, 0), "down": (0, 0, s, 0)}[mode]
        top, left, bottom, right = crop
        cropped = ops.image.crop_images(x, top_cropping=top, left_cropping=left,
                                        bottom_cropping=bottom, right_cropping=right)
        return ops.image.pad_images(cropped, top_padding=bottom, left_padding=right,
                                    bottom_padding=top, right_padding=left)

    def call(self, x, training=False):
        x_splits = ops.split(x, self.C // self.num_div, axis=-1)
        x_splits[0] = self.get_shift_pad(x_splits[0], mode="left")
        x_splits[1] = self.get_shift_pad(x_splits[1], mode="right")
        x_splits[2] = self.get_shift_pad(x_splits[2], mode="up")
        x_splits[3] = self.get_shift_pad(x_splits[3], mode="down")
        x = ops.concatenate(x_splits, axis=-1)
        shortcut = x
        return shortcut + self.drop_path(self.mlp(self.layer_norm(x)), training=training)


class PatchMerging(layers.Layer):
    def __init__(self, epsilon, **kwargs):
        super().__init__(**kwargs)
        self.epsilon = epsilon

    def build(self, input_shape):
        self.reduction = layers.Conv2D(filters=2 * input_shape[-1], kernel_size=2, strides=2,
                                       padding="same", use_bias=False)
        self.layer_norm = layers.LayerNormalization(epsilon=self.epsilon)

    def call(self, x):
        return self.reduction(self.layer_norm(x))


class StackedShiftBlocks(layers.Layer):
    def __init__(self, epsilon, mlp_dropout_rate, num_shift_blocks, stochastic_depth_rate, is_merge,
                 num_div=12, shift_pixel=1, mlp_expand_ratio=2, **kwargs):
        super().__init__(**kwargs)
        self.epsilon, self.mlp_dropout_rate = epsilon, mlp_dropout_rate
        self.num_shift_blocks, self.stochastic_depth_rate = num_shift_blocks, stochastic_depth_rate
        self.is_merge, self.num_div = is_merge, num_div
        self.shift_pixel, self.mlp_expand_ratio = shift_pixel, mlp_expand_ratio

    def build(self, input_shapes):
        rates = np.linspace(0, self.stochastic_depth_rate, self.num_shift_blocks)
        self.shift_blocks = [ShiftViTBlock(num_div=self.num_div, epsilon=self.epsilon, drop_path_prob=float(r),
                                           mlp_dropout_rate=self.mlp_dropout_rate,
                                           shift_pixel=self.shift_pixel, mlp_expand_ratio=self.mlp_expand_ratio)
                             for r in rates]
        if self.is_merge:
            self.patch_merge = PatchMerging(epsilon=self.epsilon)

    def call(self, x, training=False):
        for shift_block in self.shift_blocks:
            x = shift_block(x, training=training)
        if self.is_merge:
            x = self.patch_merge(x)
        return x

    def get_config(self):
        config = super().get_config()
        config.update({"epsilon": self.epsilon, "mlp_dropout_rate": self.mlp_dropout_rate,
                       "num_shift_blocks": self.num_shift_blocks,
                       "stochastic_depth_rate": self.stochastic_depth_rate, "is_merge": self.is_merge,
                       "num_div": self.num_div, "shift_pixel": self.shift_pixel,
                       "mlp_expand_ratio": self.mlp_expand_ratio})
        return config


class ShiftViTModel(keras.Model):
    def __init__(self, data_augmentation, projected_dim, patch_size, num_shift_blocks_per_stages, epsilon,
                 mlp_dropout_rate, stochastic_depth_rate, num_div=12, shift_pixel=1, mlp_expand_ratio=2,
                 **kwargs):
        super().__init__(**kwargs)
        self.data_augmentation = data_augmentation
        self.patch_projection = layers.Conv2D(filters=projected_dim, kernel_size=patch_size,
                                              strides=patch_size, padding="same")
        self.stages = []
        for index, num_shift_blocks in enumerate(num_shift_blocks_per_stages):
            self.stages.append(StackedShiftBlocks(
                epsilon=epsilon, mlp_dropout_rate=mlp_dropout_rate, num_shift_blocks=num_shift_blocks,
                stochastic_depth_rate=stochastic_depth_rate,
                is_merge=index != len(num_shift_blocks_per_stages) - 1,   # no merge after the last stage
                num_div=num_div, shift_pixel=shift_pixel, mlp_expand_ratio=mlp_expand_ratio))
        self.global_avg_pool = layers.GlobalAveragePooling2D()
        self.classifier = layers.Dense(config.num_classes)

    def _calculate_loss(self, data, training=False):
        images, labels = data
        x = self.patch_projection(self.data_augmentation(images, training=training))
        for stage in self.stages:
            x = stage(x, training=training)
        logits = self.classifier(self.global_avg_pool(x))
        return self.compute_loss(x=images, y=labels, y_pred=logits), labels, logits

    def train_step(self, inputs):
        with keras.GradientTape() as tape:
            total_loss, labels, logits = self._calculate_loss(data=inputs, training=True)
        train_vars = [self.data_augmentation.trainable_variables, self.patch_projection.trainable_variables,
                      self.global_avg_pool.trainable_variables, self.classifier.trainable_variables]
        train_vars = train_vars + [stage.trainable_variables for stage in self.stages]
        grads = tape.gradient(total_loss, train_vars)
        pairs = []
        for grad, var in zip(grads, train_vars):
            for g, v in zip(grad, var):
                pairs.append((g, v))
        self.optimizer.apply_gradients(pairs)
        return self.compute_metrics(inputs[0], labels, logits)

    def test_step(self, data):
        _, labels, logits = self._calculate_loss(data=data, training=False)
        return self.compute_metrics(data[0], labels, logits)

    def call(self, images):
        x = self.patch_projection(self.data_augmentation(images))
        for stage in self.stages:
            x = stage(x, training=False)
        return self.classifier(self.global_avg_pool(x))


model = ShiftViTModel(data_augmentation=get_augmentation_model(), projected_dim=config.projected_dim,
                      patch_size=config.patch_size,
                      num_shift_blocks_per_stages=config.num_shift_blocks_per_stages, epsilon=config.epsilon,
                      mlp_dropout_rate=config.mlp_dropout_rate,
                      stochastic_depth_rate=config.stochastic_depth_rate, num_div=config.num_div,
                      shift_pixel=config.shift_pixel, mlp_expand_ratio=config.mlp_expand_ratio)

# the shift itself: a group of ones shifted left loses its last column and gains a zero column
block = ShiftViTBlock(epsilon=1e-5, drop_path_prob=0.0, mlp_dropout_rate=0.0)
block.build((None, 4, 4, 48))
left = ops.convert_to_numpy(block.get_shift_pad(np.arange(16, dtype="float32").reshape(1, 4, 4, 1), "left"))
assert np.array_equal(left[0, :, :, 0], [[1, 2, 3, 0], [5, 6, 7, 0], [9, 10, 11, 0], [13, 14, 15, 0]]), left[0, :, :, 0]


class WarmUpCosine(keras.optimizers.schedules.LearningRateSchedule):
    def __init__(self, lr_start, lr_max, warmup_steps, total_steps):
        super().__init__()
        self.lr_start, self.lr_max = lr_start, lr_max
        self.warmup_steps, self.total_steps = warmup_steps, total_steps
        self.pi = np.pi

    def __call__(self, step):
        if self.total_steps < self.warmup_steps:
            raise ValueError(f"Total number of steps {self.total_steps} must be larger or equal to "
                             f"warmup steps {self.warmup_steps}.")
        step = ops.cast(step, "float32")
        cos_annealed_lr = ops.cos(self.pi * (step - self.warmup_steps) / float(self.total_steps - self.warmup_steps))
        learning_rate = 0.5 * self.lr_max * (1 + cos_annealed_lr)
        if self.warmup_steps > 0:
            if self.lr_max < self.lr_start:
                raise ValueError(f"lr_start {self.lr_start} must be smaller or equal to lr_max {self.lr_max}.")
            slope = (self.lr_max - self.lr_start) / self.warmup_steps
            warmup_rate = slope * step + self.lr_start
            learning_rate = ops.where(step < self.warmup_steps, warmup_rate, learning_rate)
        return ops.where(step > self.total_steps, 0.0, learning_rate)

    def get_config(self):
        return {"lr_start": self.lr_start, "lr_max": self.lr_max, "total_steps": self.total_steps,
                "warmup_steps": self.warmup_steps}


sample = x_train[:config.batch_size]
logits = model(sample, training=False)          # builds the model, as the example does before compile
assert tuple(logits.shape) == (config.batch_size, config.num_classes), logits.shape

total_steps = int((len(x_train) / config.batch_size) * config.epochs)
warmup_steps = int(total_steps * 0.15)
scheduled_lrs = WarmUpCosine(lr_start=config.lr_start, lr_max=config.lr_max, warmup_steps=warmup_steps,
                             total_steps=total_steps)
lrs = [float(ops.convert_to_numpy(scheduled_lrs(s))) for s in (0, warmup_steps, total_steps, total_steps + 1)]
assert np.allclose(lrs, [config.lr_start, config.lr_max, 0.0, 0.0], atol=1e-7), lrs

optimizer = keras.optimizers.AdamW(learning_rate=scheduled_lrs, weight_decay=config.weight_decay)
model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
                       keras.metrics.SparseTopKCategoricalAccuracy(5, name="top-5-accuracy")])
history = model.fit(x_train, y_train, batch_size=config.batch_size, epochs=config.epochs,
                    validation_data=(x_val, y_val),
                    callbacks=[keras.callbacks.EarlyStopping(monitor="val_accuracy", patience=5, mode="auto")],
                    verbose=0)
assert set(history.history) == {"loss", "accuracy", "top-5-accuracy", "val_loss", "val_accuracy",
                                "val_top-5-accuracy"}, history.history.keys()
assert history.history["loss"][-1] < history.history["loss"][0], history.history["loss"]

loss, acc_top1, acc_top5 = model.evaluate(x_test, y_test, batch_size=config.batch_size, verbose=0)
print(f"Loss: {loss:0.2f}  top 1: {acc_top1 * 100:0.2f}%  top 5: {acc_top5 * 100:0.2f}%")
assert acc_top5 >= acc_top1 and acc_top1 > 0.2          # chance is 0.1

# in place of model.export: the weights round trip into a fresh model gives the same logits
path = os.path.join(tempfile.mkdtemp(), "shiftvit.weights.h5")
model.save_weights(path)
fresh = ShiftViTModel(data_augmentation=get_augmentation_model(), projected_dim=config.projected_dim,
                      patch_size=config.patch_size,
                      num_shift_blocks_per_stages=config.num_shift_blocks_per_stages, epsilon=config.epsilon,
                      mlp_dropout_rate=config.mlp_dropout_rate,
                      stochastic_depth_rate=config.stochastic_depth_rate, num_div=config.num_div,
                      shift_pixel=config.shift_pixel, mlp_expand_ratio=config.mlp_expand_ratio)
fresh(sample, training=False)
fresh.load_weights(path)
probabilities = ops.convert_to_numpy(ops.softmax(fresh.predict(x_test[:20], verbose=0)))
expected = ops.convert_to_numpy(ops.softmax(model.predict(x_test[:20], verbose=0)))
np.testing.assert_allclose(probabilities, expected, rtol=1e-4, atol=1e-5)
