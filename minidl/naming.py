"""Automatic names, as Keras gives them: "dense", "dense_1", ...; "functional", "sequential".

One counter per prefix for the whole process, shared by layers and models.
"""

_counters = {}


def auto_name(prefix):
    """`prefix` the first time, then `prefix_1`, `prefix_2`, ..."""
    count = _counters.get(prefix, 0)
    _counters[prefix] = count + 1
    return prefix if count == 0 else f"{prefix}_{count}"


def next_uid(prefix):
    """1, 2, 3, ... per prefix (keras.backend.get_uid), on counters of their own."""
    key = ("uid", prefix)
    _counters[key] = _counters.get(key, 0) + 1
    return _counters[key]


def reset():
    """Start every counter again (backend.clear_session)."""
    _counters.clear()


def snake_case(name):
    """'BatchNormalization' -> 'batch_normalization', 'Conv2D' -> 'conv2d'."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and (not name[i - 1].isupper() or
                                       (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    out = "".join(out)
    for digit in "123":   # 'MaxPooling1D' -> 'max_pooling1d', as Keras names it
        out = out.replace(f"{digit}_d", f"{digit}d")
    return out
