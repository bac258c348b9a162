"""The string hashes Keras's Hashing, HashedCrossing and lookup layers use, in plain Python.

Keras runs these layers through TensorFlow, whose string hashes are FarmHash's Fingerprint64
(tf.strings.to_hash_bucket_fast: farmhashna's 64-bit hash of the UTF-8 bytes), SipHash-2-4
with a 128-bit key (tf.strings.to_hash_bucket_strong, Hashing's `salt`) and FingerprintCat64
(a crossing of several fingerprints, tf.sparse.cross_hashed). Bucket numbers are part of a
saved model's meaning (an embedding row per bucket), so they must be bit-identical to
TensorFlow's: every function here is written from the published algorithms and tested
against numbers TensorFlow printed (tests/fixtures/keras_text_preprocessing).

Arithmetic is on Python ints masked to 64 bits. Strings are short (words, n-grams), so the
per-call cost is a few microseconds; the layers hash each distinct string once per call.
"""

import struct

MASK64 = (1 << 64) - 1
K0 = 0xC3A5C85C97CB3127
K1 = 0xB492B66FBE98F273
K2 = 0x9AE16A3B2F90404F
K_MUL = 0x9DDFEA08EB382D69   # the multiplier of Hash128to64


def _rotate(value, shift):
    """A right rotation of a 64-bit value."""
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & MASK64


def _shift_mix(value):
    return value ^ (value >> 47)


def _fetch64(data, at):
    return struct.unpack_from("<Q", data, at)[0]


def _fetch32(data, at):
    return struct.unpack_from("<I", data, at)[0]


def _hash_len16(u, v, mul=K_MUL):
    a = ((u ^ v) * mul) & MASK64
    a ^= a >> 47
    b = ((v ^ a) * mul) & MASK64
    b ^= b >> 47
    return (b * mul) & MASK64


def _len0to16(s, n):
    if n >= 8:
        mul = (K2 + n * 2) & MASK64
        a = (_fetch64(s, 0) + K2) & MASK64
        b = _fetch64(s, n - 8)
        c = (_rotate(b, 37) * mul + a) & MASK64
        d = ((_rotate(a, 25) + b) * mul) & MASK64
        return _hash_len16(c, d, mul)
    if n >= 4:
        mul = (K2 + n * 2) & MASK64
        a = _fetch32(s, 0)
        return _hash_len16((n + (a << 3)) & MASK64, _fetch32(s, n - 4), mul)
    if n > 0:
        y = (s[0] + (s[n >> 1] << 8)) & 0xFFFFFFFF
        z = (n + (s[n - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * K2) & MASK64) ^ ((z * K0) & MASK64)) * K2) & MASK64
    return K2


def _len17to32(s, n):
    mul = (K2 + n * 2) & MASK64
    a = (_fetch64(s, 0) * K1) & MASK64
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & MASK64
    d = (_fetch64(s, n - 16) * K2) & MASK64
    return _hash_len16((_rotate((a + b) & MASK64, 43) + _rotate(c, 30) + d) & MASK64,
                       (a + _rotate((b + K2) & MASK64, 18) + c) & MASK64, mul)


def _len33to64(s, n):
    mul = (K2 + n * 2) & MASK64
    a = (_fetch64(s, 0) * K2) & MASK64
    b = _fetch64(s, 8)
    c = (_fetch64(s, n - 8) * mul) & MASK64
    d = (_fetch64(s, n - 16) * K2) & MASK64
    y = (_rotate((a + b) & MASK64, 43) + _rotate(c, 30) + d) & MASK64
    z = _hash_len16(y, (a + _rotate((b + K2) & MASK64, 18) + c) & MASK64, mul)
    e = (_fetch64(s, 16) * mul) & MASK64
    f = _fetch64(s, 24)
    g = ((y + _fetch64(s, n - 32)) * mul) & MASK64
    h = ((z + _fetch64(s, n - 24)) * mul) & MASK64
    return _hash_len16((_rotate((e + f) & MASK64, 43) + _rotate(g, 30) + h) & MASK64,
                       (e + _rotate((f + a) & MASK64, 18) + g) & MASK64, mul)


def _weak_hash_len32_with_seeds(s, at, a, b):
    w, x, y, z = (_fetch64(s, at + 8 * i) for i in range(4))
    a = (a + w) & MASK64
    b = _rotate((b + a + z) & MASK64, 21)
    c = a
    a = (a + x + y) & MASK64
    b = (b + _rotate(a, 44)) & MASK64
    return (a + z) & MASK64, (b + c) & MASK64


def fingerprint64(data):
    """FarmHash's Fingerprint64 of `data` (bytes), TensorFlow's string fingerprint."""
    s, n = bytes(data), len(data)
    if n <= 16:
        return _len0to16(s, n)
    if n <= 32:
        return _len17to32(s, n)
    if n <= 64:
        return _len33to64(s, n)
    seed = 81
    x = seed
    y = (seed * K1 + 113) & MASK64
    z = (_shift_mix((y * K2 + 113) & MASK64) * K2) & MASK64
    v = (0, 0)
    w = (0, 0)
    x = (x * K2 + _fetch64(s, 0)) & MASK64
    end = ((n - 1) // 64) * 64     # after the loop, 1 to 64 bytes are left
    last64 = n - 64
    at = 0
    while True:
        x = (_rotate((x + y + v[0] + _fetch64(s, at + 8)) & MASK64, 37) * K1) & MASK64
        y = (_rotate((y + v[1] + _fetch64(s, at + 48)) & MASK64, 42) * K1) & MASK64
        x ^= w[1]
        y = (y + v[0] + _fetch64(s, at + 40)) & MASK64
        z = (_rotate((z + w[0]) & MASK64, 33) * K1) & MASK64
        v = _weak_hash_len32_with_seeds(s, at, (v[1] * K1) & MASK64, (x + w[0]) & MASK64)
        w = _weak_hash_len32_with_seeds(s, at + 32, (z + w[1]) & MASK64,
                                        (y + _fetch64(s, at + 16)) & MASK64)
        z, x = x, z
        at += 64
        if at == end:
            break
    mul = (K1 + ((z & 0xFF) << 1)) & MASK64
    at = last64
    w = ((w[0] + ((n - 1) & 63)) & MASK64, w[1])
    v = ((v[0] + w[0]) & MASK64, v[1])
    w = ((w[0] + v[0]) & MASK64, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(s, at + 8)) & MASK64, 37) * mul) & MASK64
    y = (_rotate((y + v[1] + _fetch64(s, at + 48)) & MASK64, 42) * mul) & MASK64
    x ^= (w[1] * 9) & MASK64
    y = (y + v[0] * 9 + _fetch64(s, at + 40)) & MASK64
    z = (_rotate((z + w[0]) & MASK64, 33) * mul) & MASK64
    v = _weak_hash_len32_with_seeds(s, at, (v[1] * mul) & MASK64, (x + w[0]) & MASK64)
    w = _weak_hash_len32_with_seeds(s, at + 32, (z + w[1]) & MASK64,
                                    (y + _fetch64(s, at + 16)) & MASK64)
    z, x = x, z
    return _hash_len16((_hash_len16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & MASK64,
                       (_hash_len16(v[1], w[1], mul) + x) & MASK64, mul)


def siphash24(key0, key1, data):
    """SipHash-2-4 of `data` with the 128-bit key (key0, key1): tf.strings.to_hash_bucket_strong."""
    v0 = key0 ^ 0x736F6D6570736575
    v1 = key1 ^ 0x646F72616E646F6D
    v2 = key0 ^ 0x6C7967656E657261
    v3 = key1 ^ 0x7465646279746573

    def rounds(v0, v1, v2, v3, count):
        for _ in range(count):
            v0 = (v0 + v1) & MASK64
            v1 = _rotl(v1, 13) ^ v0
            v0 = _rotl(v0, 32)
            v2 = (v2 + v3) & MASK64
            v3 = _rotl(v3, 16) ^ v2
            v0 = (v0 + v3) & MASK64
            v3 = _rotl(v3, 21) ^ v0
            v2 = (v2 + v1) & MASK64
            v1 = _rotl(v1, 17) ^ v2
            v2 = _rotl(v2, 32)
        return v0, v1, v2, v3

    data = bytes(data)
    n = len(data)
    whole = n - n % 8
    for at in range(0, whole, 8):
        m = _fetch64(data, at)
        v3 ^= m
        v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
        v0 ^= m
    last = ((n & 0xFF) << 56) | int.from_bytes(data[whole:], "little")
    v3 ^= last
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 2)
    v0 ^= last
    v2 ^= 0xFF
    v0, v1, v2, v3 = rounds(v0, v1, v2, v3, 4)
    return v0 ^ v1 ^ v2 ^ v3


def _rotl(value, shift):
    return ((value << shift) | (value >> (64 - shift))) & MASK64


def fingerprint_cat64(fp1, fp2):
    """TensorFlow's FingerprintCat64: two 64-bit fingerprints mixed into one (feature crosses)."""
    mul = 0xC6A4A7935BD1E995
    result = fp1 ^ mul
    result ^= (_shift_mix((fp2 * mul) & MASK64) * mul) & MASK64
    result = (result * mul) & MASK64
    result = (_shift_mix(result) * mul) & MASK64
    return _shift_mix(result)
