"""Reading the npz files of Keras's sequence data sets (imdb.npz, reuters.npz) without unpickling.

Their sequences are ragged, so numpy stored them as object arrays: each such .npy member is
a header and then a pickle of `_reconstruct(ndarray, (0,), b'b')` whose state holds a dtype('O')
and a list of Python lists of ints. Unpickling would run whatever callable a tampered file
names, so this module interprets the few opcodes such a pickle is made of (protocols 2 to 5,
as Python 2 and 3 numpy write them) and builds nothing but the ints, the lists of ints, one
outer list, and the small tuples and names of the recipe. Numeric members are read as raw
data after their header, as numpy's own reader does with allow_pickle=False.

Sizes are checked before anything is read: the zip's directory gives each member's size,
which must not exceed the caller's limit; a pickle cannot make the reader build more objects
than it has bytes (every opcode is at least one byte, and a list fetched again from the memo,
which would multiply the data, is refused).
"""

import io

import numpy as np

from ..io import ArchiveError, ZipArchive, element_count
from ._batch_pickle import PickleFormatError, _Reader


class RaggedFormatError(ValueError):
    """A member is neither a plain numeric array nor a pickled object array of int lists."""


def read_npz(path, members, max_member_bytes):
    """{name: array} for the .npy members named in `members` (the file must hold exactly them).

    Object members come back as 1-D object arrays of lists of ints, numeric ones as numpy arrays.
    Raises ArchiveError or RaggedFormatError (ValueErrors) naming the member and what is wrong.
    """
    known = [name + ".npy" for name in members]
    arrays = {}
    with ZipArchive(path, known) as archive:
        missing = [name for name in known if name not in archive.members]
        if missing:
            raise ArchiveError(f"{path} lacks {', '.join(missing)}; it must hold {', '.join(known)}")
        for name in members:
            data = archive.read(name + ".npy", max_member_bytes)
            arrays[name] = _npy(data, f"{path}: array {name!r}")
    return arrays


def _npy(data, where):
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read_header(stream)  # a literal dict, parsed without eval
    except Exception as exc:  # numpy raises ValueError, SyntaxError, ...
        raise RaggedFormatError(f"{where} has an unreadable .npy header: {exc}") from None
    body = memoryview(data)[stream.tell():]
    if dtype == np.dtype(object):
        if len(shape) != 1:
            raise RaggedFormatError(f"{where}: an object array of sequences must be 1-D, got shape {shape}")
        sequences = _parse_pickle(body, where)
        if len(sequences) != shape[0]:
            raise RaggedFormatError(f"{where}: the header declares {shape[0]} sequences, the data "
                                    f"holds {len(sequences)}")
        out = np.empty(len(sequences), dtype=object)
        out[:] = sequences
        return out
    if dtype.kind not in "biuf" or dtype.fields is not None or dtype.subdtype is not None:
        raise RaggedFormatError(f"{where} has dtype {dtype}; expected numbers or sequences of ints")
    nbytes = dtype.itemsize * element_count(shape)
    if len(body) != nbytes:
        raise RaggedFormatError(f"{where} declares shape {shape} {dtype} ({nbytes} bytes) but "
                                f"holds {len(body)} bytes of data")
    return np.frombuffer(body, dtype=dtype).reshape(shape, order="F" if fortran else "C").copy()


class _Global:
    def __init__(self, kind):
        self.kind = kind


_GLOBALS = {
    ("numpy.core.multiarray", "_reconstruct"): "reconstruct",
    ("numpy._core.multiarray", "_reconstruct"): "reconstruct",
    ("numpy", "ndarray"): "ndarray",
    ("numpy", "dtype"): "dtype",
    ("_codecs", "encode"): "encode",  # Python 3's protocol 2 spells b'b' this way
}
_OBJECT_DTYPE = object()   # numpy.dtype('O8', False, True), before and after its state
_EMPTY_ARRAY = object()    # _reconstruct(ndarray, (0,), b'b') before its state
# The state numpy pickles for dtype('O') after its version: (byte order, None, None, None,
# -1, -1, flags 63 = the object flags).
_OBJECT_DTYPE_STATE = ("|", None, None, None, -1, -1, 63)


def _text(value):
    return value.decode("latin1") if isinstance(value, bytes) else value


def _utf8(chunk):
    try:
        return str(chunk, "utf-8")
    except UnicodeDecodeError as exc:
        raise RaggedFormatError(f"invalid text: {exc}") from None


class _Input(_Reader):
    """The pickle's bytes, read as _batch_pickle's bounded reader reads them (its errors
    become RaggedFormatError in _parse_pickle), named `where` for messages."""

    def __init__(self, data, where):
        super().__init__(data)
        self.where = where


def _long1(r):
    size = r.unpack("<B")
    if size > 8:
        raise RaggedFormatError(f"{r.where}: a {size}-byte integer; word indices fit in 8 bytes")
    return int.from_bytes(r.take(size), "little", signed=True)


# opcode -> how it reads the value it pushes
_PUSH = {
    b"N": lambda r: None, b"\x88": lambda r: True, b"\x89": lambda r: False,
    b"K": lambda r: r.unpack("<B"), b"M": lambda r: r.unpack("<H"), b"J": lambda r: r.unpack("<i"),
    b"\x8a": _long1,
    b"U": lambda r: bytes(r.take(r.unpack("<B"))), b"T": lambda r: bytes(r.take(r.unpack("<i"))),
    b"C": lambda r: bytes(r.take(r.unpack("<B"))), b"B": lambda r: bytes(r.take(r.unpack("<I"))),
    b"\x8c": lambda r: _utf8(r.take(r.unpack("<B"))), b"X": lambda r: _utf8(r.take(r.unpack("<I"))),
    b"]": lambda r: [], b")": lambda r: (),
}


def _reduce(func, args, where):
    kind = func.kind if isinstance(func, _Global) else None
    if kind == "reconstruct" and len(args) == 3 and isinstance(args[0], _Global) \
            and args[0].kind == "ndarray" and args[1] == (0,) and args[2] == b"b":
        return _EMPTY_ARRAY
    if kind == "dtype" and len(args) == 3 and _text(args[0]) == "O8" and args[1:] in ((False, True), (0, 1)):
        return _OBJECT_DTYPE
    if kind == "encode" and args == ("b", "latin1"):
        return b"b"
    raise RaggedFormatError(f"{where}: refusing a call in the pickle: only the recipe of an "
                            "object array of integer sequences is read")


def _sequences(state, where):
    """The list of int lists from the array state (1, (n,), dtype('O'), False, [lists])."""
    if not (isinstance(state, tuple) and len(state) == 5 and state[0] == 1
            and state[2] is _OBJECT_DTYPE and state[3] in (False, 0) and isinstance(state[4], list)):
        raise RaggedFormatError(f"{where}: the array state is not that of a 1-D object array")
    shape, items = state[1], state[4]
    if shape != (len(items),):
        raise RaggedFormatError(f"{where}: the array state declares shape {shape} for "
                                f"{len(items)} items")
    for i, item in enumerate(items):
        if not isinstance(item, list) or not all(type(w) is int for w in item):
            raise RaggedFormatError(f"{where}: item {i} is not a list of ints")
    return items


def _parse_pickle(data, where):
    try:
        return _parse_pickle_ops(data, where)
    except (PickleFormatError, UnicodeDecodeError) as exc:
        raise RaggedFormatError(f"{where}: {exc}") from None


def _parse_pickle_ops(data, where):
    r = _Input(data, where)
    if bytes(r.take(1)) != b"\x80" or r.unpack("<B") not in (2, 3, 4, 5):
        raise RaggedFormatError(f"{where}: the object data is not a pickle of protocol 2 to 5")
    stack, marks, memo = [], [], {}
    dtype_built = array_built = False

    def pop_mark():
        if not marks:
            raise RaggedFormatError(f"{where}: no MARK before byte {r.pos}")
        start = marks.pop()
        items = stack[start:]
        del stack[start:]
        return items

    def pop(n):
        if len(stack) - (marks[-1] if marks else 0) < n:
            raise RaggedFormatError(f"{where}: the pickle's stack underflows at byte {r.pos}")
        items = stack[-n:]
        del stack[-n:]
        return items

    while True:
        at = r.pos
        op = bytes(r.take(1))
        if op in _PUSH:
            stack.append(_PUSH[op](r))
        elif op == b".":
            if len(stack) != 1 or marks or r.pos != len(data) or not isinstance(stack[0], list):
                raise RaggedFormatError(f"{where}: the pickle does not end with one array")
            return stack[0]
        elif op == b"\x95":  # FRAME: a length prefix of the opcodes that follow
            r.unpack("<Q")
        elif op == b"(":
            if len(marks) >= 4:
                raise RaggedFormatError(f"{where}: MARKs nest deeper than an array of lists does")
            marks.append(len(stack))
        elif op in (b"q", b"r", b"\x94"):  # BINPUT, LONG_BINPUT, MEMOIZE
            index = r.unpack("<B") if op == b"q" else r.unpack("<I") if op == b"r" else len(memo)
            if not stack:
                raise RaggedFormatError(f"{where}: a memo PUT on an empty stack at byte {at}")
            memo[index] = stack[-1]
        elif op in (b"h", b"j"):  # BINGET, LONG_BINGET
            value = memo.get(r.unpack("<B" if op == b"h" else "<I"), None)
            # Only names and the recipe's parts may be fetched again; a list fetched twice
            # would let a small file stand for a huge one.
            if not isinstance(value, (str, bytes, _Global)) and value is not _OBJECT_DTYPE:
                raise RaggedFormatError(f"{where}: refusing the memo reference at byte {at}")
            stack.append(value)
        elif op in (b"\x85", b"\x86", b"\x87", b"t"):  # TUPLE1..3, TUPLE
            items = pop_mark() if op == b"t" else pop(b"\x85\x86\x87".index(op) + 1)
            if len(items) > 8 or any(isinstance(v, list) for v in items[:-1]):
                raise RaggedFormatError(f"{where}: a tuple that is no part of an array's recipe")
            stack.append(tuple(items))
        elif op in (b"a", b"e"):  # APPEND, APPENDS
            items = pop(1) if op == b"a" else pop_mark()
            target = pop(1)[0]
            if not isinstance(target, list):
                raise RaggedFormatError(f"{where}: APPEND to a non-list at byte {at}")
            for item in items:
                if not (type(item) is int or isinstance(item, list)):
                    raise RaggedFormatError(f"{where}: a list may hold only ints or lists of ints")
            target.extend(items)
            stack.append(target)
        elif op in (b"c", b"\x93"):  # GLOBAL, STACK_GLOBAL
            module, name = (r.line(), r.line()) if op == b"c" else pop(2)
            kind = _GLOBALS.get((module, name)) if isinstance(module, str) and isinstance(name, str) \
                else None
            if kind is None:
                raise RaggedFormatError(f"{where}: refusing the global '{module}.{name}': only numpy "
                                        "arrays of integer sequences are read")
            stack.append(_Global(kind))
        elif op == b"R":
            func, args = pop(2)
            if not isinstance(args, tuple):
                raise RaggedFormatError(f"{where}: REDUCE without an argument tuple at byte {at}")
            stack.append(_reduce(func, args, where))
        elif op == b"b":  # BUILD
            target, state = pop(2)
            if target is _OBJECT_DTYPE and not dtype_built:
                if not (isinstance(state, tuple) and len(state) == 8 and state[0] == 3
                        and tuple(_text(v) for v in state[1:]) == _OBJECT_DTYPE_STATE):
                    raise RaggedFormatError(f"{where}: the dtype state is not that of dtype('O')")
                dtype_built = True
                stack.append(_OBJECT_DTYPE)
            elif target is _EMPTY_ARRAY and dtype_built and not array_built:
                array_built = True
                stack.append(_sequences(state, where))
            else:
                raise RaggedFormatError(f"{where}: an unexpected BUILD at byte {at}")
        elif op == b"0":  # POP
            pop(1)
        else:
            raise RaggedFormatError(f"{where}: opcode {op!r} at byte {at} is no part of an "
                                    "object array of integer sequences")
