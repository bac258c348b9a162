"""Corpus example: image classification with Perceiver.

Modeled on keras-team/keras-io examples/vision/perceiver_image_classification.py (commit
004bccd): a data_augmentation Sequential (Normalization adapted on the training images, Resizing,
RandomFlip("horizontal"), RandomRotation(factor=0.02), RandomZoom(height_factor, width_factor))
used from inside a model's call; a Patches layer (extract_patches + reshape to (batch, -1,
patch_dims)); a PatchEncoder (Dense projection + Embedding of the positions); feed-forward
Sequentials of gelu Dense / Dense / Dropout; a cross-attention functional model whose inputs are
a dict of two layers.Input ("latent_array", "data_array") with LayerNormalization, Dense query /
key / value, layers.Attention(use_scale=True, dropout=0.1)([query, key, value],
return_attention_scores=False), Add and an FFN; a Transformer functional model
(MultiHeadAttention(num_heads, key_dim, dropout), Add, LayerNormalization(epsilon=1e-6)); a
subclassed keras.Model whose build(input_shape) creates a trainable latent array with add_weight
(initializer="random_normal") and its sublayers, then calls super().build, and whose call feeds
the latent array and the encoded patches to the cross-attention
model as a dict and iterates cross-attention + Transformer with shared weights;
GlobalAveragePooling1D; compile with the LAMB optimizer (weight decay),
SparseCategoricalCrossentropy(from_logits=True), SparseCategoricalAccuracy(name="acc"),
SparseTopKCategoricalAccuracy(5, name="top5-acc"); fit with validation_split, ReduceLROnPlateau
(monitor="val_loss", factor=0.2, patience=3) and EarlyStopping(monitor="val_loss", patience,
restore_best_weights=True); evaluate. Written anew for minidl's corpus with the same Keras 3 API;
what differs: synthetic 3-channel digit images 16 x 16 (10 classes) in place of CIFAR-100, image
16 / patch 4 (16 patches), latent 8 x 32, 2 heads, 1 Transformer block, 2 iterations, 4 epochs;
tfa.optimizers.LAMB(weight_decay_rate) became keras.optimizers.Lamb(weight_decay),
layers.experimental.preprocessing.* the layers' Keras 3 names, tf.image.extract_patches /
tf.range / tf.expand_dims / tf.reshape their keras.ops spellings; the latent array is broadcast
over the batch with ops.broadcast_to (the original hands the cross-attention model a batch of
one, which tf.keras's Add broadcast and Keras 3's refuses: "Cannot merge tensors with different
batch sizes", checked in the side venv)."""

import numpy as np

import minidl as keras
from minidl import layers, ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

num_classes = 10
input_shape = (16, 16, 3)


def rgb(n, seed):
    x, y = digits(n, seed, size=input_shape[0])
    return np.repeat(x[..., None], 3, axis=-1), y[:, None]        # uint8 HWC, labels (n, 1) as CIFAR's


(x_train, y_train), (x_test, y_test) = rgb(800, 1), rgb(200, 2)
print(f"x_train shape: {x_train.shape} - y_train shape: {y_train.shape}")

learning_rate = 0.003
weight_decay = 0.0001
batch_size = 64
num_epochs = 4
dropout_rate = 0.1
image_size = 16
patch_size = 4
num_patches = (image_size // patch_size) ** 2
latent_dim = 8
projection_dim = 32
num_heads = 2
ffn_units = [projection_dim, projection_dim]
num_transformer_blocks = 1
num_iterations = 2
classifier_units = [projection_dim, num_classes]

data_augmentation = keras.Sequential([
    layers.Normalization(),
    layers.Resizing(image_size, image_size),
    layers.RandomFlip("horizontal"),
    layers.RandomRotation(factor=0.02),
    layers.RandomZoom(height_factor=0.2, width_factor=0.2),
], name="data_augmentation")
data_augmentation.layers[0].adapt(x_train)


def create_ffn(hidden_units, dropout_rate):
    ffn_layers = [layers.Dense(units, activation=keras.activations.gelu) for units in hidden_units[:-1]]
    ffn_layers.append(layers.Dense(units=hidden_units[-1]))
    ffn_layers.append(layers.Dropout(dropout_rate))
    return keras.Sequential(ffn_layers)


class Patches(layers.Layer):
    def __init__(self, patch_size):
        super().__init__()
        self.patch_size = patch_size

    def call(self, images):
        batch_size = ops.shape(images)[0]
        patches = ops.image.extract_patches(images, size=self.patch_size, strides=self.patch_size,
                                            dilation_rate=1, padding="valid")
        patch_dims = patches.shape[-1]
        return ops.reshape(patches, (batch_size, -1, patch_dims))


class PatchEncoder(layers.Layer):
    def __init__(self, num_patches, projection_dim):
        super().__init__()
        self.num_patches = num_patches
        self.projection = layers.Dense(units=projection_dim)
        self.position_embedding = layers.Embedding(input_dim=num_patches, output_dim=projection_dim)

    def call(self, patches):
        positions = ops.arange(start=0, stop=self.num_patches, step=1)
        return self.projection(patches) + self.position_embedding(positions)


def create_cross_attention_module(latent_dim, data_dim, projection_dim, ffn_units, dropout_rate):
    inputs = {
        "latent_array": layers.Input(shape=(latent_dim, projection_dim)),
        "data_array": layers.Input(shape=(data_dim, projection_dim)),
    }
    latent_array = layers.LayerNormalization(epsilon=1e-6)(inputs["latent_array"])
    data_array = layers.LayerNormalization(epsilon=1e-6)(inputs["data_array"])
    query = layers.Dense(units=projection_dim)(latent_array)
    key = layers.Dense(units=projection_dim)(data_array)
    value = layers.Dense(units=projection_dim)(data_array)
    attention_output = layers.Attention(use_scale=True, dropout=0.1)([query, key, value],
                                                                     return_attention_scores=False)
    attention_output = layers.Add()([attention_output, latent_array])
    attention_output = layers.LayerNormalization(epsilon=1e-6)(attention_output)
    outputs = create_ffn(hidden_units=ffn_units, dropout_rate=dropout_rate)(attention_output)
    outputs = layers.Add()([outputs, attention_output])
    return keras.Model(inputs=inputs, outputs=outputs)


def create_transformer_module(latent_dim, projection_dim, num_heads, num_transformer_blocks, ffn_units,
                              dropout_rate):
    inputs = layers.Input(shape=(latent_dim, projection_dim))
    x0 = inputs
    for _ in range(num_transformer_blocks):
        x1 = layers.LayerNormalization(epsilon=1e-6)(x0)
        attention_output = layers.MultiHeadAttention(num_heads=num_heads, key_dim=projection_dim,
                                                     dropout=0.1)(x1, x1)
        x2 = layers.Add()([attention_output, x0])
        x3 = layers.LayerNormalization(epsilon=1e-6)(x2)
        x3 = create_ffn(hidden_units=ffn_units, dropout_rate=dropout_rate)(x3)
        x0 = layers.Add()([x3, x2])
    return keras.Model(inputs=inputs, outputs=x0)


class Perceiver(keras.Model):
    def __init__(self, patch_size, data_dim, latent_dim, projection_dim, num_heads, num_transformer_blocks,
                 ffn_units, dropout_rate, num_iterations, classifier_units):
        super().__init__()
        self.latent_dim, self.data_dim, self.patch_size = latent_dim, data_dim, patch_size
        self.projection_dim, self.num_heads = projection_dim, num_heads
        self.num_transformer_blocks, self.ffn_units = num_transformer_blocks, ffn_units
        self.dropout_rate, self.num_iterations = dropout_rate, num_iterations
        self.classifier_units = classifier_units

    def build(self, input_shape):
        self.latent_array = self.add_weight(shape=(self.latent_dim, self.projection_dim),
                                            initializer="random_normal", trainable=True)
        self.patcher = Patches(self.patch_size)
        self.patch_encoder = PatchEncoder(self.data_dim, self.projection_dim)
        self.cross_attention = create_cross_attention_module(self.latent_dim, self.data_dim, self.projection_dim,
                                                             self.ffn_units, self.dropout_rate)
        self.transformer = create_transformer_module(self.latent_dim, self.projection_dim, self.num_heads,
                                                     self.num_transformer_blocks, self.ffn_units,
                                                     self.dropout_rate)
        self.global_average_pooling = layers.GlobalAveragePooling1D()
        self.classification_head = create_ffn(hidden_units=self.classifier_units, dropout_rate=self.dropout_rate)
        super().build(input_shape)

    def call(self, inputs):
        augmented = data_augmentation(inputs)
        encoded_patches = self.patch_encoder(self.patcher(augmented))
        # the latent array broadcast over the batch: Keras 3's Add refuses a batch of one beside a
        # batch of many (tf.keras broadcast it)
        batch_size = ops.shape(inputs)[0]
        latent = ops.broadcast_to(ops.expand_dims(self.latent_array, 0),
                                  (batch_size, self.latent_dim, self.projection_dim))
        cross_attention_inputs = {"latent_array": latent, "data_array": encoded_patches}
        for _ in range(num_iterations):
            latent_array = self.cross_attention(cross_attention_inputs)
            latent_array = self.transformer(latent_array)
            cross_attention_inputs["latent_array"] = latent_array
        return self.classification_head(self.global_average_pooling(latent_array))


def run_experiment(model):
    optimizer = keras.optimizers.Lamb(learning_rate=learning_rate, weight_decay=weight_decay)
    model.compile(optimizer=optimizer, loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[keras.metrics.SparseCategoricalAccuracy(name="acc"),
                           keras.metrics.SparseTopKCategoricalAccuracy(5, name="top5-acc")])
    reduce_lr = keras.callbacks.ReduceLROnPlateau(monitor="val_loss", factor=0.2, patience=3)
    early_stopping = keras.callbacks.EarlyStopping(monitor="val_loss", patience=15, restore_best_weights=True)
    history = model.fit(x=x_train, y=y_train, batch_size=batch_size, epochs=num_epochs, validation_split=0.1,
                        callbacks=[early_stopping, reduce_lr], verbose=0)
    _, accuracy, top_5_accuracy = model.evaluate(x_test, y_test, verbose=0)
    print(f"Test accuracy: {round(accuracy * 100, 2)}%  top 5: {round(top_5_accuracy * 100, 2)}%")
    return history, accuracy, top_5_accuracy


perceiver_classifier = Perceiver(patch_size, num_patches, latent_dim, projection_dim, num_heads,
                                 num_transformer_blocks, ffn_units, dropout_rate, num_iterations, classifier_units)
history, accuracy, top_5_accuracy = run_experiment(perceiver_classifier)
assert set(history.history) == {"loss", "acc", "top5-acc", "val_loss", "val_acc", "val_top5-acc",
                                "learning_rate"}, history.history.keys()
assert history.history["loss"][-1] < history.history["loss"][0], history.history["loss"]
assert top_5_accuracy >= accuracy and accuracy > 0.2          # chance is 0.1
# the latent array is one trainable weight of the model, updated by training
assert any(tuple(w.shape) == (latent_dim, projection_dim) for w in perceiver_classifier.trainable_weights)
logits = perceiver_classifier.predict(x_test[:5], verbose=0)
assert logits.shape == (5, num_classes), logits.shape
