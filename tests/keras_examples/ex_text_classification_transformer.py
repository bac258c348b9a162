"""Corpus example: text classification with a Transformer block.

Modeled on keras-team/keras-io examples/nlp/text_classification_with_transformer.py (commit
8bda227): a TransformerBlock layer (MultiHeadAttention(num_heads, key_dim), a Sequential
feed-forward net, LayerNormalization(epsilon=1e-6), Dropout, residual adds, a `training`
argument in call), a TokenAndPositionEmbedding layer (two Embeddings, positions from ops.arange
of the sequence length), GlobalAveragePooling1D, Dense softmax; reviews padded with
preprocessing.sequence.pad_sequences; "adam" with "sparse_categorical_crossentropy" and
"accuracy", validation_data. Written anew for minidl's corpus with the same Keras 3 API;
synthetic token sequences in place of IMDB, vocab 2000, maxlen 64, 2 epochs."""

import numpy as np

import minidl as keras
from minidl import layers, ops
from _data import tokens

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time


class TransformerBlock(layers.Layer):
    def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
        super().__init__()
        self.att = layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim)
        self.ffn = keras.Sequential([layers.Dense(ff_dim, activation="relu"), layers.Dense(embed_dim)])
        self.layernorm1 = layers.LayerNormalization(epsilon=1e-6)
        self.layernorm2 = layers.LayerNormalization(epsilon=1e-6)
        self.dropout1 = layers.Dropout(rate)
        self.dropout2 = layers.Dropout(rate)

    def call(self, inputs, training=None):
        attn_output = self.dropout1(self.att(inputs, inputs), training=training)
        out1 = self.layernorm1(inputs + attn_output)
        ffn_output = self.dropout2(self.ffn(out1), training=training)
        return self.layernorm2(out1 + ffn_output)


class TokenAndPositionEmbedding(layers.Layer):
    def __init__(self, maxlen, vocab_size, embed_dim):
        super().__init__()
        self.token_emb = layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
        self.pos_emb = layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

    def call(self, x):
        maxlen = ops.shape(x)[-1]
        positions = self.pos_emb(ops.arange(0, maxlen, 1))
        return self.token_emb(x) + positions


vocab_size, maxlen = 2000, 64
(x_train, y_train), (x_val, y_val) = tokens(1200, 80, vocab_size, 1), tokens(300, 80, vocab_size, 2)
x_train = keras.preprocessing.sequence.pad_sequences([row[row > 0] for row in x_train], maxlen=maxlen)
x_val = keras.preprocessing.sequence.pad_sequences([row[row > 0] for row in x_val], maxlen=maxlen)
assert x_train.shape == (1200, maxlen)

embed_dim, num_heads, ff_dim = 32, 2, 32
inputs = layers.Input(shape=(maxlen,))
x = TokenAndPositionEmbedding(maxlen, vocab_size, embed_dim)(inputs)
x = TransformerBlock(embed_dim, num_heads, ff_dim)(x)
x = layers.GlobalAveragePooling1D()(x)
x = layers.Dropout(0.1)(x)
x = layers.Dense(20, activation="relu")(x)
x = layers.Dropout(0.1)(x)
outputs = layers.Dense(2, activation="softmax")(x)
model = keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=32, epochs=2, validation_data=(x_val, y_val), verbose=0)
print(history.history)
assert history.history["val_accuracy"][-1] > 0.8
