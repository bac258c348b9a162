"""A reader for the pickled dicts that CIFAR-style batch files are, which never unpickles.

Unpickling runs whatever callable a file names, and even numpy's own reconstructors trust
the file: a pickled dtype state can turn an object dtype into one whose raw bytes are then
taken as object pointers, and a pickled shape can ask for gigabytes. So this module does
not use pickle.Unpickler. It interprets the few opcodes such a file is made of (protocols
2 to 5, written by Python 2 or 3) and builds only plain values:

    a dict (the top level only) of bytes or str keys, whose values are
    scalars (bytes, str, int, float, bool, None), lists of scalars, or integer arrays.

Arrays are recognised from the two recipes numpy writes (`_reconstruct` plus a state tuple
for protocols 2 to 4, `_frombuffer` for protocol 5). Their dtype is resolved here to a fixed
builtin integer type from its name and byte order only; every other part of a dtype state
must be the builtin default, else the file is refused. The array is a view of bytes the file
holds, so its size can never exceed the file's. Python 3's protocol 2 writes bytes as
`_codecs.encode(text, 'latin1')` (and b'' as `bytes()`); those two calls are evaluated here.

Every container accepts only the values listed above, so nothing nests more than two deep,
and the number of opcodes is capped, so a file can make the reader build no more than a
bounded number of small objects besides the bytes it holds. Anything else raises
PickleFormatError, naming the offending opcode and its offset.
"""

import struct

import numpy as np

# One opcode per image for a label, about ten for a filename under protocol 2.
MAX_OPCODES = 32 * 10_000 + 4096
MAX_MARKS = 8
MAX_NDIM = 4
# dtypes a batch may use, by the name numpy pickles: labels may be any integer type.
ARRAY_DTYPES = ("u1", "i1", "u2", "i2", "u4", "i4", "u8", "i8")
# The state numpy pickles for a builtin dtype, after (version, byte order).
_BUILTIN_DTYPE_STATE = (None, None, None, -1, -1, 0)


class PickleFormatError(ValueError):
    """The data is not a pickled dict of plain values and integer arrays."""


class _Global:
    """A callable the file names; only its recipe below is ever evaluated, never the name."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name


_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"): "reconstruct",  # numpy 1, Python 2 files
    ("numpy._core.multiarray", "_reconstruct"): "reconstruct",  # numpy 2
    ("numpy.core.numeric", "_frombuffer"): "frombuffer",
    ("numpy._core.numeric", "_frombuffer"): "frombuffer",
    ("numpy", "ndarray"): "ndarray",
    ("numpy", "dtype"): "dtype",
    ("_codecs", "encode"): "encode",
    ("__builtin__", "bytes"): "bytes",
    ("builtins", "bytes"): "bytes",
}
_SCALARS = (bytes, str, int, float, bool, type(None))


class _Pending:
    """A dtype or array made by a call whose state (BUILD) has not been read yet; `value`
    holds the result once it has, for later references to it through the memo."""

    def __init__(self, name=None):
        self.name = name
        self.value = None


class _PendingDtype(_Pending):
    """numpy.dtype(name, align, copy) before its state gives the byte order."""


class _PendingArray(_Pending):
    """_reconstruct(ndarray, (0,), b'b') before its state gives shape, dtype and data."""


def _text(value):
    return value.decode("ascii") if isinstance(value, bytes) else value


def _dtype(name, byte_order):
    name, byte_order = _text(name), _text(byte_order)
    if name not in ARRAY_DTYPES or byte_order not in ("|", "<", ">", "="):
        raise PickleFormatError(f"array dtype {name!r} (byte order {byte_order!r}) is refused: "
                                f"batches hold uint8 pixels and integer labels "
                                f"({', '.join(ARRAY_DTYPES)})")
    return np.dtype(("|" if name[1] == "1" else byte_order) + name)


def _array(data, dtype, shape, fortran):
    if not isinstance(dtype, np.dtype):
        raise PickleFormatError(f"array dtype must be a resolved integer dtype, got {dtype!r}")
    if not (isinstance(shape, tuple) and len(shape) <= MAX_NDIM
            and all(type(d) is int and d >= 0 for d in shape)):
        raise PickleFormatError(f"array shape must be at most {MAX_NDIM} sizes >= 0, got {shape!r}")
    if not isinstance(data, bytes):
        raise PickleFormatError(f"array data must be raw bytes, got {type(data).__name__}")
    count = 1
    for d in shape:
        count *= d
    if count * dtype.itemsize != len(data):
        raise PickleFormatError(f"array of shape {shape} and dtype {dtype} needs "
                                f"{count * dtype.itemsize} bytes, the file holds {len(data)}")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")


def _reduce(func, args):
    """Evaluate one of the recipes above, checking every argument."""
    kind = func.name if isinstance(func, _Global) else None
    if kind == "encode" and len(args) == 2 and isinstance(args[0], str) \
            and args[1] in ("latin1", "latin-1"):
        try:
            return args[0].encode("latin1")
        except UnicodeEncodeError as exc:
            raise PickleFormatError(f"_codecs.encode of a non-latin1 text: {exc}") from None
    if kind == "bytes" and args == ():
        return b""
    if kind == "dtype" and len(args) == 3 and isinstance(args[0], (str, bytes)) \
            and all(a in (0, 1) for a in args[1:]):
        return _PendingDtype(args[0])
    if kind == "reconstruct" and len(args) == 3 and isinstance(args[0], _Global) \
            and args[0].name == "ndarray" and args[1] == (0,) and args[2] == b"b":
        return _PendingArray()
    if kind == "frombuffer" and len(args) == 4 and args[3] in ("C", "F"):
        return _array(args[0], args[1], args[2], args[3] == "F")
    raise PickleFormatError(f"refusing the call {func!r}{args!r}: only numpy arrays and plain "
                            "values may be loaded")


def _build(target, state):
    """Apply a state tuple to a pending dtype or array (the file's state is only read)."""
    if isinstance(target, _Pending) and target.value is not None:
        raise PickleFormatError(f"a second state for the same {type(target).__name__}")
    if isinstance(target, _PendingDtype) and isinstance(state, tuple) and len(state) == 8 \
            and state[0] == 3 and state[2:] == _BUILTIN_DTYPE_STATE:
        target.value = _dtype(target.name, state[1])
        return target.value
    if isinstance(target, _PendingArray) and isinstance(state, tuple) and len(state) == 5 \
            and state[0] == 1 and isinstance(state[3], int) and state[3] in (0, 1):
        target.value = _array(state[4], state[2], state[1], bool(state[3]))
        return target.value
    raise PickleFormatError(f"refusing the state {state!r} for {type(target).__name__}: only "
                            "builtin integer dtypes and arrays of them may be loaded")


def _check_tuple_item(item):
    if isinstance(item, tuple):
        if not all(isinstance(v, (int, bool)) for v in item):
            raise PickleFormatError("tuples may nest only a tuple of ints (an array shape)")
    elif not isinstance(item, _SCALARS + (np.dtype, _Global)):
        raise PickleFormatError(f"a tuple may not hold a {type(item).__name__}")
    return item


def _check_list_item(item):
    if not isinstance(item, _SCALARS):
        raise PickleFormatError(f"a list may hold only plain values, not a {type(item).__name__}")
    return item


def _set_item(target, key, value):
    if not isinstance(target, dict):
        raise PickleFormatError(f"SETITEM on a {type(target).__name__}")
    if not isinstance(key, (bytes, str)):
        raise PickleFormatError(f"dict keys must be bytes or str, got {type(key).__name__}")
    if isinstance(value, list) or isinstance(value, np.ndarray) or isinstance(value, _SCALARS):
        target[key] = value
    else:
        raise PickleFormatError(f"dict entry {key!r} may not hold a {type(value).__name__}")


class _Reader:
    def __init__(self, data):
        self.data = memoryview(data)
        self.pos = 0

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise PickleFormatError(f"truncated at byte {self.pos} (wanted {n} more bytes)")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def line(self):
        end = bytes(self.data[self.pos:self.pos + 256]).find(b"\n")
        if end < 0:
            raise PickleFormatError(f"unterminated name at byte {self.pos}")
        return _text(bytes(self.take(end + 1)[:-1]))


def _utf8(chunk):
    try:
        return str(chunk, "utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise PickleFormatError(f"invalid text: {exc}") from None


# opcode -> how it reads its argument and what it pushes (a new value from the input)
_PUSH = {
    b"N": lambda r: None, b"\x88": lambda r: True, b"\x89": lambda r: False,
    b"K": lambda r: r.unpack("<B"), b"M": lambda r: r.unpack("<H"), b"J": lambda r: r.unpack("<i"),
    b"G": lambda r: r.unpack(">d"),
    b"U": lambda r: bytes(r.take(r.unpack("<B"))), b"T": lambda r: bytes(r.take(r.unpack("<i"))),
    b"C": lambda r: bytes(r.take(r.unpack("<B"))), b"B": lambda r: bytes(r.take(r.unpack("<I"))),
    b"\x8e": lambda r: bytes(r.take(r.unpack("<Q"))), b"\x96": lambda r: bytes(r.take(r.unpack("<Q"))),
    b"\x8c": lambda r: _utf8(r.take(r.unpack("<B"))), b"X": lambda r: _utf8(r.take(r.unpack("<I"))),
    b"\x8d": lambda r: _utf8(r.take(r.unpack("<Q"))),
    b"}": lambda r: {}, b"]": lambda r: [], b")": lambda r: (),
}


def _long1(reader):
    size = reader.unpack("<B")
    if size > 8:
        raise PickleFormatError(f"an integer of {size} bytes is too large")
    return int.from_bytes(reader.take(size), "little", signed=True)


def loads(data, max_opcodes=MAX_OPCODES):
    """The dict pickled in `data` (bytes), built as the module docstring describes.

    max_opcodes: the cap on opcodes (a file of 50,000 images, as CIFAR-100's train, needs more).
    """
    r = _Reader(data)
    if bytes(r.take(1)) != b"\x80" or r.unpack("<B") not in (2, 3, 4, 5):
        raise PickleFormatError("not a pickle of protocol 2 to 5")
    stack, marks, memo = [], [], {}

    def pop_mark():
        if not marks:
            raise PickleFormatError(f"no MARK before byte {r.pos}")
        items = stack[marks[-1]:]
        del stack[marks.pop():]
        return items

    def pop(n=1):
        if len(stack) - (marks[-1] if marks else 0) < n:
            raise PickleFormatError(f"stack underflow at byte {r.pos}")
        items = stack[-n:]
        del stack[-n:]
        return items

    for _ in range(max_opcodes):
        at = r.pos
        op = bytes(r.take(1))
        if op in _PUSH:
            stack.append(_PUSH[op](r))
        elif op == b"\x8a":
            stack.append(_long1(r))
        elif op == b".":
            if len(stack) != 1 or marks or r.pos != len(r.data):
                raise PickleFormatError(f"STOP at byte {at} without exactly one value at the end")
            if not isinstance(stack[0], dict):
                raise PickleFormatError(f"the file holds a {type(stack[0]).__name__}, not a dict")
            return stack[0]
        elif op == b"\x95":  # FRAME: a length prefix for the opcodes that follow
            r.unpack("<Q")
        elif op == b"(":
            if len(marks) >= MAX_MARKS:
                raise PickleFormatError(f"MARKs nested more than {MAX_MARKS} deep")
            marks.append(len(stack))
        elif op in (b"q", b"r", b"\x94"):  # BINPUT, LONG_BINPUT, MEMOIZE
            index = {b"q": lambda: r.unpack("<B"), b"r": lambda: r.unpack("<I"),
                     b"\x94": lambda: len(memo)}[op]()
            if not stack:
                raise PickleFormatError(f"memo PUT on an empty stack at byte {at}")
            memo[index] = stack[-1]
        elif op in (b"h", b"j"):  # BINGET, LONG_BINGET
            index = r.unpack("<B" if op == b"h" else "<I")
            if index not in memo:
                raise PickleFormatError(f"memo entry {index} used before it was set (byte {at})")
            value = memo[index]
            stack.append(value.value if isinstance(value, _Pending) and value.value is not None
                         else value)
        elif op in (b"\x85", b"\x86", b"\x87", b"t"):  # TUPLE1..3, TUPLE
            items = pop(b"\x85\x86\x87".index(op) + 1) if op != b"t" else pop_mark()
            stack.append(tuple(_check_tuple_item(item) for item in items))
        elif op in (b"a", b"e"):  # APPEND, APPENDS
            items = pop() if op == b"a" else pop_mark()
            target = pop()[0]
            if not isinstance(target, list):
                raise PickleFormatError(f"APPEND to a {type(target).__name__} at byte {at}")
            target.extend(_check_list_item(item) for item in items)
            stack.append(target)
        elif op in (b"s", b"u"):  # SETITEM, SETITEMS
            items = pop(2) if op == b"s" else pop_mark()
            if len(items) % 2:
                raise PickleFormatError(f"SETITEMS with an odd number of values at byte {at}")
            target = pop()[0]
            for key, value in zip(items[::2], items[1::2]):
                _set_item(target, key, value)
            stack.append(target)
        elif op in (b"c", b"\x93"):  # GLOBAL, STACK_GLOBAL
            module, name = (r.line(), r.line()) if op == b"c" else pop(2)
            kind = _GLOBALS.get((module, name)) if isinstance(module, str) \
                and isinstance(name, str) else None
            if kind is None:
                raise PickleFormatError(f"refusing to load the global '{module}.{name}': only numpy "
                                        "arrays and plain values may be loaded")
            stack.append(_Global(kind))
        elif op == b"R":
            func, args = pop(2)
            if not isinstance(args, tuple):
                raise PickleFormatError(f"REDUCE arguments must be a tuple (byte {at})")
            stack.append(_reduce(func, args))
        elif op == b"b":
            target, state = pop(2)
            stack.append(_build(target, state))
        elif op == b"0":
            pop()
        elif op == b"1":
            pop_mark()
        else:
            raise PickleFormatError(f"opcode {op!r} at byte {at} is not one a data batch uses")
    raise PickleFormatError(f"more than {max_opcodes} opcodes: not a data batch")
