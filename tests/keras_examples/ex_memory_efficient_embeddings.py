"""Corpus example: memory-efficient embeddings for recommendation systems.

Modeled on keras-team/keras-io examples/keras_recipes/memory_efficient_embeddings.py (commit
8bda227): an embedding encoder made of StringLookup(vocabulary=..., mask_token=None,
num_oov_indices=...) + Embedding in a named Sequential, string Inputs of shape (), a Dot(axes=1)
similarity turned into a rating with activations.sigmoid(...) * 5; a QREmbedding layer
(quotient / remainder embeddings multiplied) and a MDEmbedding layer (blocks of embeddings of
mixed dimensions, projected by Dense and masked per block); MeanSquaredError loss with a
MeanAbsoluteError(name="mae") metric and validation_data. Written anew for minidl's corpus with
the same Keras 3 API; synthetic ratings in place of MovieLens, numpy columns in place of the CSV
datasets, ops in place of tf.lookup / tf.math."""

import numpy as np

import minidl as keras
from minidl import layers, ops

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

rng = np.random.default_rng(0)
num_users, num_movies, num_ratings = 300, 200, 12000
user_vocabulary = [f"user_{i}" for i in range(num_users)]
movie_vocabulary = [f"movie_{i}" for i in range(num_movies)]
user_taste, movie_kind = rng.standard_normal((num_users, 4)), rng.standard_normal((num_movies, 4))
users, movies = rng.integers(0, num_users, num_ratings), rng.integers(0, num_movies, num_ratings)
ratings = (5 / (1 + np.exp(-(user_taste[users] * movie_kind[movies]).sum(1)))).astype("float32")
data = {"user_id": np.array(user_vocabulary)[users], "movie_id": np.array(movie_vocabulary)[movies]}
split = int(num_ratings * 0.85)
train_x = {k: v[:split] for k, v in data.items()}
eval_x = {k: v[split:] for k, v in data.items()}
train_y, eval_y = ratings[:split], ratings[split:]
base_embedding_dim = 16


def run_experiment(model):
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss=keras.losses.MeanSquaredError(),
                  metrics=[keras.metrics.MeanAbsoluteError(name="mae")])
    return model.fit(train_x, train_y, batch_size=128, epochs=4, validation_data=(eval_x, eval_y), verbose=0)


def embedding_encoder(vocabulary, embedding_dim, num_oov_indices=0, name=None):
    return keras.Sequential([
        layers.StringLookup(vocabulary=vocabulary, mask_token=None, num_oov_indices=num_oov_indices),
        layers.Embedding(input_dim=len(vocabulary) + num_oov_indices, output_dim=embedding_dim),
    ], name=f"{name}_embedding" if name else None)


def create_baseline_model():
    user_input = layers.Input(name="user_id", shape=(), dtype="string")
    user_embedding = embedding_encoder(user_vocabulary, base_embedding_dim, name="user")(user_input)
    movie_input = layers.Input(name="movie_id", shape=(), dtype="string")
    movie_embedding = embedding_encoder(movie_vocabulary, base_embedding_dim, name="movie")(movie_input)
    logits = layers.Dot(axes=1, name="dot_similarity")([user_embedding, movie_embedding])
    prediction = keras.activations.sigmoid(logits) * 5
    return keras.Model(inputs=[user_input, movie_input], outputs=prediction, name="baseline_model")


class QREmbedding(layers.Layer):
    def __init__(self, vocabulary, embedding_dim, num_buckets, name=None):
        super().__init__(name=name)
        self.num_buckets = num_buckets
        self.index_lookup = layers.StringLookup(vocabulary=vocabulary, mask_token=None, num_oov_indices=0)
        self.q_embeddings = layers.Embedding(num_buckets, embedding_dim)
        self.r_embeddings = layers.Embedding(num_buckets, embedding_dim)

    def call(self, inputs):
        embedding_index = self.index_lookup(inputs)
        quotient_index = ops.floor_divide(embedding_index, self.num_buckets)
        remainder_index = ops.mod(embedding_index, self.num_buckets)
        return self.q_embeddings(quotient_index) * self.r_embeddings(remainder_index)


class MDEmbedding(layers.Layer):
    def __init__(self, blocks_vocabulary, blocks_embedding_dims, base_embedding_dim, name=None):
        super().__init__(name=name)
        self.num_blocks = len(blocks_vocabulary)
        keys, values = [], []
        for block_idx, block_vocab in enumerate(blocks_vocabulary):
            keys.extend(block_vocab)
            values.extend([block_idx] * len(block_vocab))
        # a StringLookup over all the keys, then a table from lookup index to block index
        self.vocab_index = layers.StringLookup(vocabulary=keys, mask_token=None, num_oov_indices=1)
        self.index_to_block = np.array([-1] + values, dtype="int32")
        self.block_embedding_encoders, self.block_embedding_projectors = [], []
        for vocabulary, embedding_dim in zip(blocks_vocabulary, blocks_embedding_dims):
            self.block_embedding_encoders.append(embedding_encoder(vocabulary, embedding_dim, num_oov_indices=1))
            self.block_embedding_projectors.append(
                layers.Lambda(lambda x: x) if embedding_dim == base_embedding_dim
                else layers.Dense(units=base_embedding_dim))

    def call(self, inputs):
        block_indices = ops.take(ops.convert_to_tensor(self.index_to_block), self.vocab_index(inputs))
        embeddings = None
        for idx in range(self.num_blocks):
            block_embeddings = self.block_embedding_projectors[idx](self.block_embedding_encoders[idx](inputs))
            mask = ops.expand_dims(ops.cast(ops.equal(block_indices, idx), "float32"), 1)
            block_embeddings = block_embeddings * mask
            embeddings = block_embeddings if embeddings is None else embeddings + block_embeddings
        return embeddings


baseline_model = create_baseline_model()
baseline_model.summary()
assert baseline_model.count_params() == (num_users + num_movies) * base_embedding_dim
baseline = run_experiment(baseline_model)
assert set(baseline.history) == {"loss", "mae", "val_loss", "val_mae"}, baseline.history.keys()
print("baseline val_loss", baseline.history["val_loss"])
assert baseline.history["val_loss"][-1] < baseline.history["val_loss"][0]

movie_blocks_vocabulary = [movie_vocabulary[:40], movie_vocabulary[40:120], movie_vocabulary[120:]]
movie_blocks_embedding_dims = [16, 8, 4]
user_input = layers.Input(name="user_id", shape=(), dtype="string")
user_embedding = QREmbedding(user_vocabulary, base_embedding_dim, num_users // 10, name="user_embedding")(user_input)
movie_input = layers.Input(name="movie_id", shape=(), dtype="string")
movie_embedding = MDEmbedding(movie_blocks_vocabulary, movie_blocks_embedding_dims, base_embedding_dim,
                              name="movie_embedding")(movie_input)
logits = layers.Dot(axes=1, name="dot_similarity")([user_embedding, movie_embedding])
memory_efficient_model = keras.Model([user_input, movie_input], keras.activations.sigmoid(logits) * 5)
memory_efficient_model.summary()
assert memory_efficient_model.count_params() < baseline_model.count_params()
history = run_experiment(memory_efficient_model)
print("memory-efficient val_loss", history.history["val_loss"])
assert history.history["val_loss"][-1] < history.history["val_loss"][0]
