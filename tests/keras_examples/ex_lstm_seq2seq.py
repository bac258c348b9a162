"""Corpus example: a character-level recurrent sequence-to-sequence model.

Modeled on keras-team/keras-io examples/nlp/lstm_seq2seq.py (commit 7d9a819): one-hot encoder
and decoder inputs with "\\t" / "\\n" as start / end characters and targets one step ahead
(teacher forcing), an encoder LSTM(return_state=True) whose [state_h, state_c] become the
decoder LSTM(return_sequences=True, return_state=True)'s initial_state, a Dense softmax, a
two-input Model compiled with "rmsprop" / "categorical_crossentropy" / "accuracy",
validation_split, save() and models.load_model, then sampling models rebuilt from the loaded
model's model.input[0], model.layers[2].output, model.layers[3] and model.layers[4] with new
state Inputs, and a greedy decode loop with predict. Written anew for minidl's corpus with the
same Keras 3 API; a synthetic "translation" (each word reversed) in place of fra-eng, latent
dim 64, 1000 samples, a few epochs."""

import os
import tempfile

import numpy as np

import minidl as keras

keras.utils.set_random_seed(1)   # the corpus runs the same numbers every time

rng = np.random.default_rng(0)
alphabet = "abcdefgh"
input_texts = ["".join(rng.choice(list(alphabet), rng.integers(2, 6))) for _ in range(1000)]
target_texts = ["\t" + text[::-1] + "\n" for text in input_texts]
input_characters = sorted(set("".join(input_texts)) | {" "})
target_characters = sorted(set("".join(target_texts)) | {" "})
num_encoder_tokens, num_decoder_tokens = len(input_characters), len(target_characters)
max_encoder_seq_length = max(len(t) for t in input_texts)
max_decoder_seq_length = max(len(t) for t in target_texts)
input_token_index = {c: i for i, c in enumerate(input_characters)}
target_token_index = {c: i for i, c in enumerate(target_characters)}

encoder_input_data = np.zeros((len(input_texts), max_encoder_seq_length, num_encoder_tokens), "float32")
decoder_input_data = np.zeros((len(input_texts), max_decoder_seq_length, num_decoder_tokens), "float32")
decoder_target_data = np.zeros((len(input_texts), max_decoder_seq_length, num_decoder_tokens), "float32")
for i, (input_text, target_text) in enumerate(zip(input_texts, target_texts)):
    for t, char in enumerate(input_text):
        encoder_input_data[i, t, input_token_index[char]] = 1.0
    encoder_input_data[i, t + 1:, input_token_index[" "]] = 1.0
    for t, char in enumerate(target_text):
        decoder_input_data[i, t, target_token_index[char]] = 1.0
        if t > 0:
            decoder_target_data[i, t - 1, target_token_index[char]] = 1.0
    decoder_input_data[i, t + 1:, target_token_index[" "]] = 1.0
    decoder_target_data[i, t:, target_token_index[" "]] = 1.0

latent_dim = 64
encoder_inputs = keras.Input(shape=(None, num_encoder_tokens))
encoder = keras.layers.LSTM(latent_dim, return_state=True)
encoder_outputs, state_h, state_c = encoder(encoder_inputs)
encoder_states = [state_h, state_c]
decoder_inputs = keras.Input(shape=(None, num_decoder_tokens))
decoder_lstm = keras.layers.LSTM(latent_dim, return_sequences=True, return_state=True)
decoder_outputs, _, _ = decoder_lstm(decoder_inputs, initial_state=encoder_states)
decoder_dense = keras.layers.Dense(num_decoder_tokens, activation="softmax")
decoder_outputs = decoder_dense(decoder_outputs)
model = keras.Model([encoder_inputs, decoder_inputs], decoder_outputs)
model.compile(optimizer="rmsprop", loss="categorical_crossentropy", metrics=["accuracy"])
history = model.fit([encoder_input_data, decoder_input_data], decoder_target_data, batch_size=32, epochs=12,
                    validation_split=0.2, verbose=0)
print("val_accuracy", history.history["val_accuracy"])
assert history.history["val_accuracy"][-1] > history.history["val_accuracy"][0]
path = os.path.join(tempfile.mkdtemp(), "s2s.keras")
model.save(path)

model = keras.models.load_model(path)
encoder_inputs = model.input[0]
encoder_outputs, state_h_enc, state_c_enc = model.layers[2].output
encoder_model = keras.Model(encoder_inputs, [state_h_enc, state_c_enc])
decoder_inputs = model.input[1]
decoder_state_input_h = keras.Input(shape=(latent_dim,))
decoder_state_input_c = keras.Input(shape=(latent_dim,))
decoder_states_inputs = [decoder_state_input_h, decoder_state_input_c]
decoder_lstm = model.layers[3]
decoder_outputs, state_h_dec, state_c_dec = decoder_lstm(decoder_inputs, initial_state=decoder_states_inputs)
decoder_outputs = model.layers[4](decoder_outputs)
decoder_model = keras.Model([decoder_inputs] + decoder_states_inputs, [decoder_outputs, state_h_dec, state_c_dec])
reverse_target_char_index = {i: c for c, i in target_token_index.items()}


def decode_sequence(input_seq):
    states_value = encoder_model.predict(input_seq, verbose=0)
    target_seq = np.zeros((1, 1, num_decoder_tokens), "float32")
    target_seq[0, 0, target_token_index["\t"]] = 1.0
    decoded_sentence = ""
    while True:
        output_tokens, h, c = decoder_model.predict([target_seq] + list(states_value), verbose=0)
        sampled_token_index = int(np.argmax(output_tokens[0, -1, :]))
        sampled_char = reverse_target_char_index[sampled_token_index]
        decoded_sentence += sampled_char
        if sampled_char == "\n" or len(decoded_sentence) > max_decoder_seq_length:
            return decoded_sentence
        target_seq = np.zeros((1, 1, num_decoder_tokens), "float32")
        target_seq[0, 0, sampled_token_index] = 1.0
        states_value = [h, c]


# the sampling models reproduce the trained model's first-step prediction
first = model.predict([encoder_input_data[:1], decoder_input_data[:1, :1]], verbose=0)
h, c = encoder_model.predict(encoder_input_data[:1], verbose=0)
step, _, _ = decoder_model.predict([decoder_input_data[:1, :1], h, c], verbose=0)
np.testing.assert_allclose(step, first, rtol=1e-4, atol=1e-5)
for seq_index in range(3):
    decoded = decode_sequence(encoder_input_data[seq_index:seq_index + 1])
    print("Input:", input_texts[seq_index], "Decoded:", decoded.strip())
    assert 1 <= len(decoded) <= max_decoder_seq_length + 1
