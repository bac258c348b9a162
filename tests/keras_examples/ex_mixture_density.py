"""Corpus example: approximating non-function mappings with a mixture density network.

Modeled on keras-team/keras-io examples/keras_recipes/approximating_non_function_mappings.py
(commit 1a97b85): a noisy spiral (several y for one x), a plain Sequential MLP with "mse"
and EarlyStopping(monitor="val_loss", patience=...), then a MixtureDensityOutput layer owning
three Dense sublayers (mus, sigmas with a custom elu + 1 + backend.epsilon() activation, pi
logits) built in build() and listed by overridden trainable_weights / non_trainable_weights
properties, whose call concatenates them; a custom loss function (the mixture's negative log
likelihood) passed to compile; EarlyStopping(restore_best_weights=True) and ReduceLROnPlateau
on "loss"; predict, then sampling from the predicted mixture with numpy. Written anew for
minidl's corpus with the same Keras 3 API; the loss is written with keras.ops in place of
TensorFlow Probability; 3000 points and a few epochs."""

import numpy as np

import minidl as keras
from minidl import callbacks, layers, ops

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

rng = np.random.default_rng(0)


def normalize(x):
    return (x - np.min(x)) / (np.max(x) - np.min(x))


def create_noisy_spiral(n, jitter_std=0.2, revolutions=2):
    angle = rng.uniform(0, 2 * np.pi * revolutions, [n])
    result = np.stack([angle * np.cos(angle), angle * np.sin(angle)], axis=1)
    result = result + rng.normal(scale=jitter_std, size=[n, 2])
    return (5 * normalize(result)).astype("float32")


xy = create_noisy_spiral(3000)
x, y = xy[:, 0:1], xy[:, 1:]
N_HIDDEN = 64

model = keras.Sequential([layers.Dense(N_HIDDEN, activation="relu"), layers.Dense(N_HIDDEN, activation="relu"),
                          layers.Dense(1)])
model.compile(optimizer="adam", loss="mse")
model.fit(x, y, epochs=5, batch_size=128, validation_split=0.15, verbose=0,
          callbacks=[callbacks.EarlyStopping(monitor="val_loss", patience=10)])
y_pred = model.predict(x, verbose=0)
assert y_pred.shape == (3000, 1)


def elu_plus_one_plus_epsilon(x):
    return keras.activations.elu(x) + 1 + keras.backend.epsilon()


class MixtureDensityOutput(layers.Layer):
    def __init__(self, output_dimension, num_mixtures, **kwargs):
        super().__init__(**kwargs)
        self.output_dim, self.num_mix = output_dimension, num_mixtures
        self.mdn_mus = layers.Dense(self.num_mix * self.output_dim, name="mdn_mus")
        self.mdn_sigmas = layers.Dense(self.num_mix * self.output_dim, activation=elu_plus_one_plus_epsilon,
                                       name="mdn_sigmas")
        self.mdn_pi = layers.Dense(self.num_mix, name="mdn_pi")

    def build(self, input_shape):
        self.mdn_mus.build(input_shape)
        self.mdn_sigmas.build(input_shape)
        self.mdn_pi.build(input_shape)
        super().build(input_shape)

    @property
    def trainable_weights(self):
        return self.mdn_mus.trainable_weights + self.mdn_sigmas.trainable_weights + self.mdn_pi.trainable_weights

    @property
    def non_trainable_weights(self):
        return (self.mdn_mus.non_trainable_weights + self.mdn_sigmas.non_trainable_weights
                + self.mdn_pi.non_trainable_weights)

    def call(self, x, mask=None):
        return layers.concatenate([self.mdn_mus(x), self.mdn_sigmas(x), self.mdn_pi(x)], name="mdn_outputs")


OUTPUT_DIMS, N_MIXES = 1, 10
mdn_network = keras.Sequential([layers.Dense(N_HIDDEN, activation="relu"), layers.Dense(N_HIDDEN, activation="relu"),
                                MixtureDensityOutput(OUTPUT_DIMS, N_MIXES)])


def get_mixture_loss_func(output_dim, num_mixes):
    def mdn_loss_func(y_true, y_pred):
        y_pred = ops.reshape(y_pred, [-1, (2 * num_mixes * output_dim) + num_mixes])
        y_true = ops.reshape(y_true, [-1, output_dim])
        out_mu = y_pred[:, :num_mixes * output_dim]
        out_sigma = y_pred[:, num_mixes * output_dim:2 * num_mixes * output_dim]
        out_pi = y_pred[:, 2 * num_mixes * output_dim:]
        log_pi = out_pi - ops.logsumexp(out_pi, axis=-1, keepdims=True)
        # one output dimension: the log density of y under each normal component
        log_normal = (-0.5 * ops.square((y_true - out_mu) / out_sigma) - ops.log(out_sigma)
                      - 0.5 * np.log(2 * np.pi))
        return -ops.mean(ops.logsumexp(log_pi + log_normal, axis=-1))
    return mdn_loss_func


mdn_network.compile(loss=get_mixture_loss_func(OUTPUT_DIMS, N_MIXES), optimizer="adam")
history = mdn_network.fit(x, y, epochs=12, batch_size=128, validation_split=0.15, verbose=0, callbacks=[
    callbacks.EarlyStopping(monitor="loss", patience=10, restore_best_weights=True),
    callbacks.ReduceLROnPlateau(monitor="loss", patience=5)])
print("mdn loss", history.history["loss"])
assert len(mdn_network.layers[-1].trainable_weights) == 6
assert history.history["loss"][-1] < history.history["loss"][0]
y_pred_mixture = mdn_network.predict(x, verbose=0)
assert y_pred_mixture.shape == (3000, 2 * N_MIXES * OUTPUT_DIMS + N_MIXES)


def sample_from_output(params, num_mixes, temp=1.0):
    mus, sigs, pi_logits = params[:num_mixes], params[num_mixes:2 * num_mixes], params[-num_mixes:]
    pis = np.exp((pi_logits - pi_logits.max()) / temp)
    m = rng.choice(num_mixes, p=pis / pis.sum())
    return rng.normal(mus[m], sigs[m])


y_samples = np.array([sample_from_output(p, N_MIXES) for p in y_pred_mixture])
# the samples spread over the several branches of the spiral, as y does, unlike the MLP's mean
assert y_samples.std() > 2 * y_pred.std() or y_samples.std() > 0.7 * y.std(), (y_samples.std(), y_pred.std(), y.std())
