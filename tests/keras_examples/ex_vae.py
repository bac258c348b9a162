"""Corpus example: a convolutional variational autoencoder.

Modeled on keras-team/keras-io examples/generative/vae.py (commit cca4efb): a Sampling layer
(z_mean + exp(0.5 * z_log_var) * epsilon, drawn with the backend's random normal), an encoder
Model with three outputs (Conv2D strides=2 padding="same", Flatten, Dense z_mean / z_log_var
named), a decoder Model (Dense, Reshape, Conv2DTranspose strides=2, sigmoid output), and a VAE
Model subclass with three metrics.Mean trackers listed by an overridden `metrics` property and a
custom train_step: GradientTape, losses.binary_crossentropy summed over the pixels plus the KL
term, tape.gradient, optimizer.apply_gradients(zip(...)), tracker results returned; compile with
only an optimizer, fit on images without targets; encoder.predict / decoder.predict. Written
anew for minidl's corpus with the same Keras 3 API: minidl.GradientTape in place of
tf.GradientTape, keras.ops and keras.random in place of tf.*; synthetic digits, 2 epochs."""

import numpy as np

import minidl as keras
from minidl import layers, ops
from _data import digits

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


class Sampling(layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed_generator = keras.random.SeedGenerator(1337)

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch, dim = ops.shape(z_mean)[0], ops.shape(z_mean)[1]
        epsilon = keras.random.normal(shape=(batch, dim), seed=self.seed_generator)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


latent_dim = 2
encoder_inputs = keras.Input(shape=(28, 28, 1))
x = layers.Conv2D(32, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
x = layers.Conv2D(64, 3, activation="relu", strides=2, padding="same")(x)
x = layers.Flatten()(x)
x = layers.Dense(16, activation="relu")(x)
z_mean = layers.Dense(latent_dim, name="z_mean")(x)
z_log_var = layers.Dense(latent_dim, name="z_log_var")(x)
z = Sampling()([z_mean, z_log_var])
encoder = keras.Model(encoder_inputs, [z_mean, z_log_var, z], name="encoder")
encoder.summary()

latent_inputs = keras.Input(shape=(latent_dim,))
x = layers.Dense(7 * 7 * 64, activation="relu")(latent_inputs)
x = layers.Reshape((7, 7, 64))(x)
x = layers.Conv2DTranspose(64, 3, activation="relu", strides=2, padding="same")(x)
x = layers.Conv2DTranspose(32, 3, activation="relu", strides=2, padding="same")(x)
decoder_outputs = layers.Conv2DTranspose(1, 3, activation="sigmoid", padding="same")(x)
decoder = keras.Model(latent_inputs, decoder_outputs, name="decoder")
decoder.summary()


class VAE(keras.Model):
    def __init__(self, encoder, decoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder
        self.decoder = decoder
        self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
        self.reconstruction_loss_tracker = keras.metrics.Mean(name="reconstruction_loss")
        self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

    @property
    def metrics(self):
        return [self.total_loss_tracker, self.reconstruction_loss_tracker, self.kl_loss_tracker]

    def train_step(self, data):
        with keras.GradientTape() as tape:
            z_mean, z_log_var, z = self.encoder(data)
            reconstruction = self.decoder(z)
            reconstruction_loss = ops.mean(ops.sum(keras.losses.binary_crossentropy(data, reconstruction),
                                                   axis=(1, 2)))
            kl_loss = -0.5 * (1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
            kl_loss = ops.mean(ops.sum(kl_loss, axis=1))
            total_loss = reconstruction_loss + kl_loss
        grads = tape.gradient(total_loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.total_loss_tracker.update_state(total_loss)
        self.reconstruction_loss_tracker.update_state(reconstruction_loss)
        self.kl_loss_tracker.update_state(kl_loss)
        return {"loss": self.total_loss_tracker.result(),
                "reconstruction_loss": self.reconstruction_loss_tracker.result(),
                "kl_loss": self.kl_loss_tracker.result()}


(x_train, _), (x_test, _) = digits(1000, 1), digits(200, 2)
mnist_digits = np.expand_dims(np.concatenate([x_train, x_test], axis=0), -1).astype("float32") / 255
vae = VAE(encoder, decoder)
vae.compile(optimizer=keras.optimizers.Adam())
history = vae.fit(mnist_digits, epochs=3, batch_size=128, verbose=0)
print({k: [round(float(v), 2) for v in vs] for k, vs in history.history.items()})
assert set(history.history) == {"loss", "reconstruction_loss", "kl_loss"}, history.history.keys()
assert history.history["loss"][-1] < history.history["loss"][0]
z_mean, _, _ = vae.encoder.predict(mnist_digits[:50], verbose=0)
assert z_mean.shape == (50, 2)
decoded = vae.decoder.predict(np.array([[0.0, 0.0], [1.0, -1.0]], "float32"), verbose=0)
assert decoded.shape == (2, 28, 28, 1) and ((decoded >= 0) & (decoded <= 1)).all()
