"""Corpus example: text classification from raw text files.

Modeled on keras-team/keras-io examples/nlp/text_classification_from_scratch.py (commit
01ae2db): keras.utils.text_dataset_from_directory over class folders of .txt files
(validation_split, subset, seed, class_names), a TextVectorization with a standardize function
of your own (lower case, "<br />" removed, punctuation stripped), max_tokens and
output_sequence_length, adapted on the training texts; an Input(shape=(None,), dtype="int64")
into Embedding, Dropout, two Conv1D(128, 7, strides=3, "valid", relu), GlobalMaxPooling1D,
Dense relu, Dropout, Dense(1, sigmoid, name="predictions"); binary_crossentropy / adam /
accuracy, fit with validation_data, evaluate; then the end-to-end model: Input(shape=(1,),
dtype="string") -> vectorize_layer -> the trained model, compiled and evaluated on the raw
text batches.

Written anew for minidl's corpus with the same Keras 3 API. What differs: a small synthetic
"aclImdb" (reviews made of sentiment words, with "<br />" tags and punctuation) written to a
temporary folder instead of the download; the standardize function uses numpy's string
functions where the original uses tf.strings (Keras has no string ops of its own); the
tf.data map / cache / prefetch of the vectorized data becomes a list of vectorized batches;
max_features 2000, sequence_length 60, 4 epochs. The test set is given class_names=["pos", "neg"]
as the training sets are: the original leaves it to the alphanumerical order (neg, pos), which
flips its labels against the ones the model learned (Keras documents class_names as setting that
order, and minidl's loader follows it)."""

import os
import re
import string
import tempfile

import numpy as np

import minidl as keras
from minidl import layers

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

GOOD = ["great", "wonderful", "moving", "brilliant", "superb", "charming", "fun", "loved"]
BAD = ["awful", "boring", "dull", "terrible", "waste", "clumsy", "hated", "weak"]
FILLER = ["the", "film", "plot", "actors", "story", "was", "and", "a", "it", "this", "movie",
          "scenes", "music", "ending", "director", "really", "quite", "very", "of", "in"]


def write_reviews(root, rng, per_class):
    """root/{train,test}/{pos,neg}/<i>_<score>.txt, as aclImdb lays them out."""
    for split in ("train", "test"):
        for label, words in (("pos", GOOD), ("neg", BAD)):
            folder = os.path.join(root, split, label)
            os.makedirs(folder)
            for i in range(per_class):
                body = list(rng.choice(FILLER, 36)) + list(rng.choice(words, 8))
                rng.shuffle(body)
                text = " ".join(body[:20]).capitalize() + ". <br /><br />" + \
                    " ".join(body[20:]) + "!"
                with open(os.path.join(folder, f"{i}_{7 if label == 'pos' else 2}.txt"), "w") as f:
                    f.write(text)


dataset_dir = os.path.join(tempfile.mkdtemp(), "aclImdb")
write_reviews(dataset_dir, np.random.default_rng(0), per_class=400)

batch_size = 32
train_dir = os.path.join(dataset_dir, "train")
test_dir = os.path.join(dataset_dir, "test")
raw_train_ds = keras.utils.text_dataset_from_directory(
    train_dir, batch_size=batch_size, validation_split=0.2, subset="training", seed=1337,
    class_names=["pos", "neg"])
raw_val_ds = keras.utils.text_dataset_from_directory(
    train_dir, batch_size=batch_size, validation_split=0.2, subset="validation", seed=1337,
    class_names=["pos", "neg"])
raw_test_ds = keras.utils.text_dataset_from_directory(test_dir, batch_size=batch_size,
                                                     class_names=["pos", "neg"])
print(f"Number of batches in raw_train_ds: {len(raw_train_ds)}")
print(f"Number of batches in raw_val_ds: {len(raw_val_ds)}")
print(f"Number of batches in raw_test_ds: {len(raw_test_ds)}")
assert (len(raw_train_ds), len(raw_val_ds), len(raw_test_ds)) == (20, 5, 25)
text_batch, label_batch = raw_train_ds[0]
print(text_batch[0], label_batch[0])


def custom_standardization(input_data):
    lowercase = np.char.lower(input_data.astype(str))
    stripped_html = np.char.replace(lowercase, "<br />", " ")
    punctuation = re.compile(f"[{re.escape(string.punctuation)}]")
    return np.array([punctuation.sub("", s) for s in stripped_html.ravel()],
                    dtype=object).reshape(stripped_html.shape)


max_features = 2000
embedding_dim = 32
sequence_length = 60

vectorize_layer = keras.layers.TextVectorization(
    standardize=custom_standardization, max_tokens=max_features, output_mode="int",
    output_sequence_length=sequence_length)
vectorize_layer.adapt(np.concatenate([x for x, _ in raw_train_ds]))
vocabulary = vectorize_layer.get_vocabulary()
assert vocabulary[:2] == ["", "[UNK]"] and "br" not in vocabulary and "great" in vocabulary


def vectorize_text(text, label):
    text = np.expand_dims(text, -1)
    return vectorize_layer(text), label


train_ds = [vectorize_text(x, y) for x, y in raw_train_ds]
val_ds = [vectorize_text(x, y) for x, y in raw_val_ds]
test_ds = [vectorize_text(x, y) for x, y in raw_test_ds]


class Batches(keras.utils.PyDataset):
    """The vectorized batches, as the original's cached tf.data datasets."""

    def __init__(self, batches):
        super().__init__()
        self.batches = batches

    def __len__(self):
        return len(self.batches)

    def __getitem__(self, index):
        return self.batches[index]


inputs = keras.Input(shape=(None,), dtype="int64")
x = layers.Embedding(max_features, embedding_dim)(inputs)
x = layers.Dropout(0.5)(x)
x = layers.Conv1D(32, 7, padding="valid", activation="relu", strides=3)(x)
x = layers.Conv1D(32, 7, padding="valid", activation="relu", strides=3)(x)
x = layers.GlobalMaxPooling1D()(x)
x = layers.Dense(32, activation="relu")(x)
x = layers.Dropout(0.5)(x)
predictions = layers.Dense(1, activation="sigmoid", name="predictions")(x)
model = keras.Model(inputs, predictions)
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])

epochs = 4
history = model.fit(Batches(train_ds), validation_data=Batches(val_ds), epochs=epochs, verbose=2)
assert set(history.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
assert history.history["loss"][-1] < history.history["loss"][0]

test_loss, test_accuracy = model.evaluate(Batches(test_ds), verbose=0)
print("test accuracy", test_accuracy)
assert test_accuracy > 0.8, test_accuracy

# The end-to-end model: raw strings in, predictions out, with the trained weights.
inputs = keras.Input(shape=(1,), dtype="string")
indices = vectorize_layer(inputs)
outputs = model(indices)
end_to_end_model = keras.Model(inputs, outputs)
end_to_end_model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
end_loss, end_accuracy = end_to_end_model.evaluate(raw_test_ds, verbose=0)
print("end-to-end accuracy", end_accuracy)
np.testing.assert_allclose(end_accuracy, test_accuracy, rtol=1e-6)
np.testing.assert_allclose(end_loss, test_loss, rtol=1e-4)
