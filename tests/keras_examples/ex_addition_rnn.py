"""Corpus example: sequence to sequence learning for number addition.

Modeled on keras-team/keras-io examples/nlp/addition_rnn.py (commit 653efec): questions like
"12+345" one-hot encoded by a character table (boolean arrays), reversed inputs, a Sequential
built with add(): LSTM(input_shape=(MAXLEN, chars)) encoder, RepeatVector, an LSTM decoder with
return_sequences=True and a Dense softmax applied per time step, "categorical_crossentropy" with
"adam" and "accuracy", fit one epoch at a time with validation_data, predict + argmax to decode.
Written anew for minidl's corpus with the same Keras 3 API; two-digit numbers, 4000 questions,
a smaller LSTM and fewer epochs."""

import numpy as np

import minidl as keras
from minidl import layers

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

TRAINING_SIZE, DIGITS, REVERSE = 4000, 2, True
MAXLEN = DIGITS + 1 + DIGITS
chars = "0123456789+ "
char_indices = {c: i for i, c in enumerate(sorted(set(chars)))}
indices_char = {i: c for c, i in char_indices.items()}


def encode(text, rows):
    x = np.zeros((rows, len(chars)))
    for i, c in enumerate(text):
        x[i, char_indices[c]] = 1
    return x


def decode(x, calc_argmax=True):
    if calc_argmax:
        x = x.argmax(axis=-1)
    return "".join(indices_char[i] for i in x)


rng = np.random.default_rng(0)
questions, expected, seen = [], [], set()
while len(questions) < TRAINING_SIZE:
    a, b = (int("".join(rng.choice(list("0123456789"), rng.integers(1, DIGITS + 1)))) for _ in range(2))
    key = tuple(sorted((a, b)))
    if key in seen:
        continue
    seen.add(key)
    q = f"{a}+{b}"
    query = q + " " * (MAXLEN - len(q))
    ans = str(a + b)
    ans += " " * (DIGITS + 1 - len(ans))
    questions.append(query[::-1] if REVERSE else query)
    expected.append(ans)
    if len(seen) > 4800:
        break

x = np.zeros((len(questions), MAXLEN, len(chars)), dtype=bool)
y = np.zeros((len(questions), DIGITS + 1, len(chars)), dtype=bool)
for i, sentence in enumerate(questions):
    x[i] = encode(sentence, MAXLEN)
for i, sentence in enumerate(expected):
    y[i] = encode(sentence, DIGITS + 1)
split_at = len(x) - len(x) // 10
(x_train, x_val), (y_train, y_val) = (x[:split_at], x[split_at:]), (y[:split_at], y[split_at:])

model = keras.Sequential()
model.add(layers.LSTM(64, input_shape=(MAXLEN, len(chars))))
model.add(layers.RepeatVector(DIGITS + 1))
model.add(layers.LSTM(64, return_sequences=True))
model.add(layers.Dense(len(chars), activation="softmax"))
model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
model.summary()

accuracies = []
for epoch in range(1, 9):
    history = model.fit(x_train, y_train, batch_size=32, epochs=1, validation_data=(x_val, y_val), verbose=0)
    accuracies.append(history.history["val_accuracy"][0])
    rowx, rowy = x_val[[epoch]], y_val[[epoch]]
    preds = np.argmax(model.predict(rowx, verbose=0), axis=-1)
    q, correct, guess = decode(rowx[0]), decode(rowy[0]), decode(preds[0], calc_argmax=False)
    print("Q", q[::-1] if REVERSE else q, "T", correct, "G", guess)
print("val accuracy per epoch", accuracies)
assert model.predict(x_val[:5], verbose=0).shape == (5, DIGITS + 1, len(chars))
# chance is 1/12 per character; the padding spaces and leading 1s alone give about 0.35
assert accuracies[-1] > accuracies[0] + 0.05 and accuracies[-1] > 0.42
