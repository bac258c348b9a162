"""Corpus example: image classification with a Vision Transformer.

Modeled on keras-team/keras-io examples/vision/image_classification_with_vision_transformer.py
(commit ef4cd45): a data_augmentation Sequential (Normalization adapted on the training images,
Resizing, RandomFlip("horizontal"), RandomRotation(factor=...), RandomZoom(height_factor,
width_factor)), a Patches layer (ops.image.extract_patches + reshape), a PatchEncoder layer
(Dense projection + Embedding of positions from ops.arange), Transformer blocks of
LayerNormalization(epsilon=1e-6) / MultiHeadAttention(num_heads, key_dim, dropout) / Add /
a gelu MLP, Flatten + Dropout + MLP head, AdamW(learning_rate, weight_decay),
SparseCategoricalCrossentropy(from_logits=True), SparseCategoricalAccuracy(name="accuracy") and
SparseTopKCategoricalAccuracy(5, name="top-5-accuracy"), ModelCheckpoint(monitor="val_accuracy",
save_best_only=True, save_weights_only=True), load_weights, evaluate. Written anew for minidl's
corpus with the same Keras 3 API; synthetic 3-channel digit images (10 classes) in place of
CIFAR-100, image 24 / patch 6, 2 Transformer blocks, 3 epochs."""

import os
import tempfile

import numpy as np

import minidl as keras
from minidl import layers, ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

num_classes, input_shape = 10, (28, 28, 3)
(x_train, y_train), (x_test, y_test) = digits(1000, 1), digits(200, 2)
x_train = np.repeat(x_train[..., None], 3, axis=-1).astype("float32")
x_test = np.repeat(x_test[..., None], 3, axis=-1).astype("float32")

learning_rate, weight_decay, batch_size, num_epochs = 0.001, 0.0001, 64, 3
image_size, patch_size = 24, 6
num_patches = (image_size // patch_size) ** 2
projection_dim, num_heads = 32, 2
transformer_units = [projection_dim * 2, projection_dim]
transformer_layers, mlp_head_units = 2, [64, 32]

data_augmentation = keras.Sequential([
    layers.Normalization(),
    layers.Resizing(image_size, image_size),
    layers.RandomFlip("horizontal"),
    layers.RandomRotation(factor=0.02),
    layers.RandomZoom(height_factor=0.2, width_factor=0.2),
], name="data_augmentation")
data_augmentation.layers[0].adapt(x_train)


def mlp(x, hidden_units, dropout_rate):
    for units in hidden_units:
        x = layers.Dense(units, activation=keras.activations.gelu)(x)
        x = layers.Dropout(dropout_rate)(x)
    return x


class Patches(layers.Layer):
    def __init__(self, patch_size):
        super().__init__()
        self.patch_size = patch_size

    def call(self, images):
        batch_size = ops.shape(images)[0]
        patches = keras.ops.image.extract_patches(images, size=self.patch_size)
        patch_dims = patches.shape[-1]
        return ops.reshape(patches, (batch_size, -1, patch_dims))


patches = Patches(patch_size)(ops.image.resize(x_train[:1], size=(image_size, image_size)))
assert tuple(patches.shape) == (1, num_patches, patch_size * patch_size * 3), patches.shape


class PatchEncoder(layers.Layer):
    def __init__(self, num_patches, projection_dim):
        super().__init__()
        self.num_patches = num_patches
        self.projection = layers.Dense(units=projection_dim)
        self.position_embedding = layers.Embedding(input_dim=num_patches, output_dim=projection_dim)

    def call(self, patch):
        positions = ops.expand_dims(ops.arange(start=0, stop=self.num_patches, step=1), axis=0)
        return self.projection(patch) + self.position_embedding(positions)


def create_vit_classifier():
    inputs = layers.Input(shape=input_shape)
    augmented = data_augmentation(inputs)
    encoded_patches = PatchEncoder(num_patches, projection_dim)(Patches(patch_size)(augmented))
    for _ in range(transformer_layers):
        x1 = layers.LayerNormalization(epsilon=1e-6)(encoded_patches)
        attention_output = layers.MultiHeadAttention(num_heads=num_heads, key_dim=projection_dim, dropout=0.1)(x1, x1)
        x2 = layers.Add()([attention_output, encoded_patches])
        x3 = layers.LayerNormalization(epsilon=1e-6)(x2)
        x3 = mlp(x3, hidden_units=transformer_units, dropout_rate=0.1)
        encoded_patches = layers.Add()([x3, x2])
    representation = layers.LayerNormalization(epsilon=1e-6)(encoded_patches)
    representation = layers.Dropout(0.5)(layers.Flatten()(representation))
    features = mlp(representation, hidden_units=mlp_head_units, dropout_rate=0.5)
    return keras.Model(inputs=inputs, outputs=layers.Dense(num_classes)(features))


model = create_vit_classifier()
model.compile(optimizer=keras.optimizers.AdamW(learning_rate=learning_rate, weight_decay=weight_decay),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy"),
                       keras.metrics.SparseTopKCategoricalAccuracy(5, name="top-5-accuracy")])
checkpoint_filepath = os.path.join(tempfile.mkdtemp(), "checkpoint.weights.h5")
checkpoint_callback = keras.callbacks.ModelCheckpoint(checkpoint_filepath, monitor="val_accuracy",
                                                      save_best_only=True, save_weights_only=True)
history = model.fit(x=x_train, y=y_train, batch_size=batch_size, epochs=num_epochs, validation_split=0.1,
                    callbacks=[checkpoint_callback], verbose=0)
assert set(history.history) == {"loss", "accuracy", "top-5-accuracy", "val_loss", "val_accuracy",
                                "val_top-5-accuracy"}, history.history.keys()
model.load_weights(checkpoint_filepath)
_, accuracy, top_5_accuracy = model.evaluate(x_test, y_test, verbose=0)
print(f"Test accuracy: {round(accuracy * 100, 2)}%  top 5: {round(top_5_accuracy * 100, 2)}%")
assert top_5_accuracy >= accuracy and accuracy > 0.3          # chance is 0.1
