"""minidl.tree against keras.tree: the expected values are what Keras 3.15.1 (its optree
implementation) returned for the same calls."""

import collections

import numpy as np
import pytest

from minidl import tree

NT = collections.namedtuple("NT", "b a")


def sample():
    return {"b": [1, (2, None)], "a": NT(3, {"z": 4, "y": 5}),
            "c": collections.OrderedDict([("q", 6), ("p", 7)])}


def test_flatten_orders_dicts_by_key_ordered_dicts_and_namedtuples_by_position():
    assert tree.flatten(sample()) == [3, 5, 4, 1, 2, None, 6, 7]
    assert tree.flatten(None) == [None]
    assert tree.flatten(1) == [1]
    assert tree.flatten("abc") == ["abc"]
    assert tree.flatten([]) == [] and tree.flatten({}) == []
    assert tree.flatten({1, 2}) == [{1, 2}]   # a set is a leaf
    flat = tree.flatten([np.zeros(2), (1,)])
    assert isinstance(flat[0], np.ndarray) and flat[1] == 1


def test_flatten_with_path():
    assert tree.flatten_with_path(sample()) == [
        (("a", 0), 3), (("a", 1, "y"), 5), (("a", 1, "z"), 4), (("b", 0), 1),
        (("b", 1, 0), 2), (("b", 1, 1), None), (("c", "q"), 6), (("c", "p"), 7)]
    assert tree.flatten_with_path([1, {"a": (2,)}]) == [((0,), 1), ((1, "a", 0), 2)]


def test_is_nested():
    assert [tree.is_nested(x) for x in (1, "ab", [], None, NT(1, 2), {}, np.zeros(3), {1})] == \
        [False, False, True, False, True, True, False, False]


def test_map_structure_keeps_types_and_key_order():
    out = tree.map_structure(lambda x: None if x is None else x * 10, sample())
    assert out == {"b": [10, (20, None)], "a": NT(30, {"z": 40, "y": 50}),
                   "c": collections.OrderedDict([("q", 60), ("p", 70)])}
    assert list(out) == ["b", "a", "c"] and list(out["a"].a) == ["z", "y"]
    assert type(out["a"]) is NT and type(out["c"]) is collections.OrderedDict
    assert tree.map_structure(lambda *a: sum(a), [1, (2, 3)], [4, (5, 6)]) == [5, (7, 9)]
    assert tree.map_structure(lambda x: x, []) == [] and tree.map_structure(lambda x: x, None) is None
    assert tree.map_structure(lambda x: 1, [None, 2], none_is_leaf=False) == [None, 1]


@pytest.mark.parametrize("a, b", [([1, 2], [1]), ([1, 2], (1, 2)), ([1, [2]], [1, 2]),
                                  ({"a": 1}, {"b": 1})])
def test_map_structure_and_assert_same_structure_refuse_different_structures(a, b):
    with pytest.raises(ValueError):
        tree.map_structure(lambda x, y: x, a, b)
    with pytest.raises(ValueError):
        tree.assert_same_structure(a, b)


def test_map_structure_refuses_a_non_callable():
    with pytest.raises(TypeError):
        tree.map_structure(1, [1])
    with pytest.raises(ValueError):
        tree.map_structure(lambda x: x)


def test_pack_sequence_as():
    out = tree.pack_sequence_as(sample(), list(range(8)))
    assert out == {"b": [3, (4, 5)], "a": NT(0, {"z": 2, "y": 1}),
                   "c": collections.OrderedDict([("q", 6), ("p", 7)])}
    assert tree.pack_sequence_as({"b": 0, "a": 0}, [1, 2]) == {"b": 2, "a": 1}
    assert tree.pack_sequence_as(1, [5]) == 5 and tree.pack_sequence_as((), []) == ()
    for flat in ([1], [1, 2, 3]):
        with pytest.raises(ValueError):
            tree.pack_sequence_as([1, 2], flat)


def test_flatten_and_pack_round_trip():
    s = sample()
    assert tree.pack_sequence_as(s, tree.flatten(s)) == s


def test_assert_same_structure_accepts_equal_nesting():
    tree.assert_same_structure([1, (2, {"a": 3})], [4, (5, {"a": 6})])
    tree.assert_same_structure([1, 2], [3, 4], check_types=False)


def test_assert_same_paths():
    tree.assert_same_paths([1, 2], (3, 4))   # paths, not types
    with pytest.raises(ValueError, match="Paths in `a` missing in `b`"):
        tree.assert_same_paths({"a": 1}, {"b": 1})


def test_traverse():
    double = lambda x: x * 2 if isinstance(x, int) else None   # noqa: E731
    assert tree.traverse(double, [1, [2, 3]]) == [2, [4, 6]]
    assert tree.traverse(double, [1, [2, 3]], top_down=False) == [2, [4, 6]]
    assert tree.traverse(lambda x: tree.MAP_TO_NONE if isinstance(x, list) and len(x) == 2
                         else None, [1, [2, 3]]) is None
    assert tree.traverse(lambda x: len(x) if isinstance(x, list) else x, [1, [2, 3]],
                         top_down=False) == 2
    seen = []
    tree.traverse(lambda x: seen.append(x), [(1, 2), [3], {"a": 4}], top_down=False)
    assert seen == [1, 2, (1, 2), 3, [3], 4, {"a": 4}, [(1, 2), [3], {"a": 4}]]
    with pytest.raises(TypeError):
        tree.traverse(1, [1])


def test_lists_to_tuples():
    assert tree.lists_to_tuples([1, [2, {"a": [3]}]]) == (1, (2, {"a": (3,)}))
    assert tree.lists_to_tuples({"a": [1, [2]]}) == {"a": (1, (2,))}


def test_map_shape_structure():
    assert tree.map_shape_structure(lambda s: s, [(1, 2), {"a": (None, 3)}]) == [(1, 2), {"a": (None, 3)}]
    assert tree.map_shape_structure(len, [(1, 2), {"a": (None, 3)}, [4, 5]]) == [2, {"a": 2}, 2]
    assert tree.map_shape_structure(lambda s: s, (None, 3)) == (None, 3)
    assert tree.map_shape_structure(lambda s: s, {"x": [2, 3], "y": ((1,), (None, 4))}) == \
        {"x": [2, 3], "y": ((1,), (None, 4))}


def test_map_structure_up_to():
    assert tree.map_structure_up_to([0, (0, 0)], lambda a, b: (a, b), [1, ([2], 3)], [4, (5, 6)]) == \
        [(1, 4), (([2], 5), (3, 6))]
    with pytest.raises(ValueError):
        tree.map_structure_up_to([0, 0], lambda a: a, [1])
