"""keras.tree: functions on nested structures of lists, tuples, namedtuples and dicts.

The rules are Keras 3's (its optree implementation):
- the nodes are list, tuple, namedtuple, dict and its subclasses; everything else is a
  leaf (None, strings, numpy arrays, sets, tensors);
- a dict's children come in sorted key order, an OrderedDict's in insertion order, a
  namedtuple's in field order; rebuilding a dict keeps the original's key order;
- a structure's "path" to a leaf is the tuple of indices and keys leading to it.

Pure Python: no backend is involved.
"""

import collections

__all__ = ["MAP_TO_NONE", "assert_same_paths", "assert_same_structure", "flatten",
           "flatten_with_path", "is_nested", "lists_to_tuples", "map_shape_structure",
           "map_structure", "map_structure_up_to", "pack_sequence_as", "traverse"]


class MAP_TO_NONE:
    """Returned by a traverse() function to replace a sub-structure with None."""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def is_nested(structure):
    """True for a list, tuple, namedtuple or dict (empty ones too); False for a leaf."""
    return isinstance(structure, (list, tuple, dict))


def _keys(node):
    """A node's child keys in flattening order."""
    if isinstance(node, dict):
        if isinstance(node, collections.OrderedDict):
            return list(node)
        try:
            return sorted(node)
        except TypeError as e:
            raise TypeError(f"minidl.tree: a dict's keys must be sortable to flatten it, got "
                            f"{list(node)!r:.200}") from e
    return list(range(len(node)))


def _children(node):
    return [node[k] for k in _keys(node)]


def _rebuild(node, children):
    """A node of the same type as `node` holding `children` (given in flattening order)."""
    if isinstance(node, dict):
        by_key = dict(zip(_keys(node), children))
        items = [(k, by_key[k]) for k in node]   # the original's key order
        if type(node) is dict:
            return dict(items)
        if isinstance(node, collections.defaultdict):
            return type(node)(node.default_factory, items)
        return type(node)(items)
    if _is_namedtuple(node):
        return type(node)(*children)
    if isinstance(node, tuple):
        return tuple(children) if type(node) is tuple else type(node)(children)
    return list(children) if type(node) is list else type(node)(children)


def _describe(x):
    return f"{type(x).__name__} {x!r:.120}"


def _check_same_node(a, b):
    """Raise ValueError unless nodes a and b have the same type and keys (or length)."""
    if not is_nested(b) or type(a) is not type(b):
        raise ValueError(f"minidl.tree: the structures differ: expected a {type(a).__name__}, "
                         f"got {_describe(b)}")
    if isinstance(a, dict):
        if set(a) != set(b):
            raise ValueError(f"minidl.tree: the dicts' keys differ: expected {sorted(a, key=repr)}, "
                             f"got {sorted(b, key=repr)} (missing {sorted(set(a) - set(b), key=repr)}, "
                             f"extra {sorted(set(b) - set(a), key=repr)})")
    elif len(a) != len(b):
        raise ValueError(f"minidl.tree: the structures differ: expected a {type(a).__name__} of "
                         f"{len(a)} items, got {_describe(b)}")


def flatten(structure):
    """The leaves of `structure` in order, as a list (a leaf alone gives [leaf])."""
    return [leaf for _, leaf in flatten_with_path(structure)]


def flatten_with_path(structure):
    """[(path, leaf), ...]: each leaf with the tuple of indices and keys leading to it."""
    out = []

    def walk(node, path):
        if not is_nested(node):
            out.append((path, node))
            return
        for k in _keys(node):
            walk(node[k], path + (k,))

    walk(structure, ())
    return out


def pack_sequence_as(structure, flat_sequence):
    """`flat_sequence`'s items put in the shape of `structure` (the inverse of flatten)."""
    if not is_nested(flat_sequence):
        raise TypeError(f"pack_sequence_as: flat_sequence must be a list or tuple, "
                        f"got {type(flat_sequence).__name__}")
    flat = list(flat_sequence)
    count = len(flatten(structure))
    if len(flat) != count:
        raise ValueError(f"pack_sequence_as: the structure holds {count} leaves, "
                         f"flat_sequence has {len(flat)} items")
    items = iter(flat)

    def build(node):
        if not is_nested(node):
            return next(items)
        return _rebuild(node, [build(c) for c in _children(node)])

    return build(structure)


def map_structure(func, *structures, none_is_leaf=True):
    """func applied to the leaves of `structures` at the same place; all the structures
    must have the same nesting. With none_is_leaf=False a None is an empty node (kept,
    never passed to func)."""
    if not callable(func):
        raise TypeError(f"map_structure: func must be callable, got {type(func).__name__}")
    if not structures:
        raise ValueError("map_structure: give at least one structure")

    def walk(nodes):
        first = nodes[0]
        if first is None and not none_is_leaf:
            for other in nodes[1:]:
                if other is not None:
                    raise ValueError(f"map_structure: the structures differ: expected None, "
                                     f"got {_describe(other)}")
            return None
        if not is_nested(first):
            for other in nodes[1:]:
                if is_nested(other):
                    raise ValueError(f"map_structure: the structures differ: expected a leaf, "
                                     f"got {_describe(other)}")
            return func(*nodes)
        for other in nodes[1:]:
            _check_same_node(first, other)
        keys = _keys(first)
        return _rebuild(first, [walk([n[k] for n in nodes]) for k in keys])

    return walk(list(structures))


def map_structure_up_to(shallow_structure, func, *structures):
    """func applied to the sub-structures of `structures` found at the leaves of
    `shallow_structure` (which every structure must contain)."""
    if not structures:
        raise ValueError("map_structure_up_to: give at least one structure")

    def walk(shallow, nodes):
        if not is_nested(shallow):
            return func(*nodes)
        for other in nodes:
            _check_same_node(shallow, other)
        keys = _keys(shallow)
        return _rebuild(shallow, [walk(shallow[k], [n[k] for n in nodes]) for k in keys])

    return walk(shallow_structure, list(structures))


def assert_same_structure(a, b, check_types=None):
    """Raise ValueError unless a and b nest the same way (same node types, lengths and
    keys). check_types is accepted and ignored, as Keras 3 deprecated it."""
    map_structure(lambda x, y: None, a, b)


def assert_same_paths(a, b):
    """Raise ValueError unless a and b have the same set of leaf paths (node types may
    differ: a list and a tuple of two items have the same paths)."""
    a_paths = {p for p, _ in flatten_with_path(a)}
    b_paths = {p for p, _ in flatten_with_path(b)}
    if a_paths != b_paths:
        msg = "`a` and `b` don't have the same paths."
        if a_paths - b_paths:
            msg += f"\nPaths in `a` missing in `b`:\n{a_paths - b_paths}"
        if b_paths - a_paths:
            msg += f"\nPaths in `b` missing in `a`:\n{b_paths - a_paths}"
        raise ValueError(msg)


def traverse(func, structure, top_down=True):
    """Depth-first walk applying func to every sub-structure, leaves included.

    Top-down: where func returns None the walk goes into the sub-structure; otherwise
    its result replaces it. Bottom-up: func sees the sub-structure with its children
    already traversed; None keeps it. MAP_TO_NONE as a result puts None in its place."""
    if not callable(func):
        raise TypeError(f"traverse: func must be callable, got {type(func).__name__}")

    def children_of(node):
        if not is_nested(node):
            return node
        return _rebuild(node, [walk(c) for c in _children(node)])

    def walk(node):
        if top_down:
            ret = func(node)
            if ret is None:
                return children_of(node)
        else:
            node = children_of(node)
            ret = func(node)
            if ret is None:
                return node
        return None if ret is MAP_TO_NONE else ret

    return walk(structure)


def lists_to_tuples(structure):
    """The structure with every list turned into a tuple, at every depth."""
    return traverse(lambda x: tuple(x) if isinstance(x, list) else None, structure, top_down=False)


def _is_shape(x):
    return isinstance(x, (list, tuple)) and all(isinstance(d, (int, type(None))) for d in x)


def map_shape_structure(func, structure):
    """func applied to each shape (a list or tuple of ints and Nones) in a structure of
    shapes."""
    def walk(node):
        if _is_shape(node) or not is_nested(node):
            return func(node)
        return _rebuild(node, [walk(c) for c in _children(node)])

    return walk(structure)
