"""`dumps` has a fast path (crates/leafwire-py/src/dumps_fast.rs) that writes the canonical
layout itself for exact built-in types. Its bytes must equal those of the general path,
which drives the core's streaming `leafwire::Encoder` (itself tested byte-for-byte against
`leafwire::encode` in crates/leafwire/tests/encoder.rs).

A dict or list *subclass* at the root has no fast form, so `dumps(Sub(value))` takes the
general path for the whole document: that is the oracle here.

Note: `dumps(json.loads(text))` is not `from_json(text)`: `from_json` infers typed arrays
from numeric JSON arrays (spec §11), while `dumps` keeps Python lists generic arrays.
"""

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leafwire
from lwcorpus import JSON_FILES, file_id


class SubDict(dict):
    pass


class SubList(list):
    pass


def assert_same_bytes(value):
    fast = leafwire.dumps(value)
    if type(value) is dict:
        assert fast == leafwire.dumps(SubDict(value))
    elif type(value) is list:
        assert fast == leafwire.dumps(SubList(value))
    # Scalar roots: wrapped, the scalar becomes a child, laid out by both paths.
    assert leafwire.dumps([value]) == leafwire.dumps(SubList([value]))
    assert leafwire.dumps({"v": value}) == leafwire.dumps(SubDict({"v": value}))


@pytest.mark.parametrize("path", JSON_FILES, ids=file_id)
def test_corpus_bytes_match_general_path(path):
    value = json.loads(path.read_text(encoding="utf-8"))
    assert_same_bytes(value)


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(1 << 70), max_value=1 << 70)
    | st.sampled_from([0, -1, 127, 128, -129, 32767, 32768, (1 << 30) - 1, 1 << 30, 1 - (1 << 30), -(1 << 30),
                       (1 << 31), (1 << 63) - 1, -(1 << 63), 1 << 63, (1 << 64) - 1, 1 << 64])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([-0.0, math.inf, math.nan])
    | st.text()
    | st.binary()
)
int_keys = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=12)
        | st.lists(children, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=8), children, max_size=12)
        | st.dictionaries(int_keys, children, min_size=1, max_size=12)
    ),
    max_leaves=80,
)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_values_bytes_match_general_path(value):
    assert_same_bytes(value)


def test_ints_around_one_digit():
    # Ints of one 30-bit digit are read from the object itself, larger ones through the C
    # API: both sides of every boundary, alone and in lists.
    edges = [0, 1, -1, (1 << 30) - 1, 1 << 30, 1 - (1 << 30), -(1 << 30), -(1 << 30) - 1, (1 << 60), -(1 << 60),
             (1 << 63) - 1, -(1 << 63), 1 << 63, (1 << 64) - 1]
    values = edges + [-v for v in edges] + [v + d for v in edges for d in (-2, -1, 1, 2) if abs(v + d) < 1 << 63]
    for v in values:
        assert leafwire.loads(leafwire.dumps(v)) == v
        assert_same_bytes(v)
    assert_same_bytes(values)
    assert leafwire.loads(leafwire.dumps(values)) == values


def test_scalar_roots():
    # Every scalar root, including data blocks (the root's block comes first, spec §7).
    for value in [None, True, False, 0, -5, 1 << 40, (1 << 64) - 1, 1.5, "", "text", "é" * 300, b"\x00\x01"]:
        back = leafwire.loads(leafwire.dumps(value))
        assert back == value and type(back) is type(value)


def test_wide_documents():
    # Pointer widths 4 and 8 are not reachable cheaply, but width 4 is (end ≥ 64 KiB), and so
    # are key ranks above 255 (key width 2) and hash indexes with 2-byte entries.
    many_keys = {f"k{i:05d}": i for i in range(70000)}
    assert_same_bytes(many_keys)
    assert_same_bytes([many_keys, {"k00001": "x" * 70000}])
    assert_same_bytes({i * 7919 - 10**12: [i, str(i)] for i in range(300)})


def test_fallbacks_keep_working():
    # Values without a fast form anywhere in the tree: the general path takes over.
    class MyStr(str):
        pass

    for value in [{"a": [1, 2, 1 << 100]}, {"a": MyStr("x")}, {MyStr("k"): 1}, {"a": {True: 1}},
                  {"a": [1, "\ud800"]}, {"a": 1, 2: 3}, {2: 3, "a": 1}, {1.5: 2}, {"a": {1 << 64: 0}}]:
        try:
            expected = leafwire.dumps(SubDict(value))
        except leafwire.EncodeError:
            with pytest.raises(leafwire.EncodeError):
                leafwire.dumps(value)
            continue
        assert leafwire.dumps(value) == expected


def test_scalar_lists_and_their_fallbacks():
    # Lists of inline scalars are recorded in one loop, which hands a list back to the
    # general planner at its first item of another kind, wherever that item is.
    for value in [[1.5, 2.5], [1, -1, 1 << 40, (1 << 64) - 1], [None, True, False, 0.0], [1.5] * 200 + ["x"],
                  [2] * 50 + [[1.5, 2.5]], [[1.5, "x"], [2.5, 3.5]], [[0.5] * 3, [], [1, [2]]], [1, 1 << 100],
                  {"a": [[1.5, 2.5]] * 3, "b": [True, None]}]:
        try:
            expected = leafwire.dumps(SubList([value]))
        except leafwire.EncodeError:
            with pytest.raises(leafwire.EncodeError):
                leafwire.dumps([value])
            continue
        assert leafwire.dumps([value]) == expected
    # A scalar list at the depth limit, and one level below it.
    for depth in (3, 4):
        deep = [1.5, 2]
        for _ in range(depth - 1):
            deep = [deep]
        assert leafwire.dumps(deep, max_depth=depth) == leafwire.dumps(SubList(deep), max_depth=depth)
        with pytest.raises(leafwire.EncodeError):
            leafwire.dumps(deep, max_depth=depth - 1)


def test_dicts_whatever_their_table():
    # The planner reads a dict's entries from its table where CPython's layout is known:
    # deleted entries (in the middle, first, last), tables of str keys and of any keys
    # (one that held an int key), and split tables (an instance's __dict__) must all give
    # the entries PyDict_Next gives.
    class Record:
        def __init__(self, i):
            self.a, self.b, self.c = i, str(i), [i, i + 0.5]

    holes = {f"k{i}": i for i in range(20)}
    for i in (0, 7, 8, 19):
        del holes[f"k{i}"]
    general = {1: "one", "a": 1, "b": [2]}
    del general[1]
    int_keys = {i: i * 2 for i in range(12)}
    del int_keys[3]
    instances = [vars(Record(i)) for i in range(5)]
    values = [holes, general, int_keys, instances, {"x": holes, "y": [general, int_keys]}]
    for value in values:
        assert_same_bytes(value)
        assert leafwire.loads(leafwire.dumps(value)) == value
    emptied = {"a": 1}
    del emptied["a"]
    assert leafwire.loads(leafwire.dumps([emptied, holes])) == [{}, holes]


def test_depth_limit_matches_general_path():
    deep = []
    for _ in range(10):
        deep = [deep]
    assert leafwire.dumps(deep, max_depth=11) == leafwire.dumps(SubList(deep), max_depth=11)
    with pytest.raises(leafwire.EncodeError):
        leafwire.dumps(deep, max_depth=10)


def test_equal_keys_in_distinct_objects():
    # Keys are interned by object address first; equal text in another object must map
    # to the same dictionary id.
    def key(*parts):
        return "".join(parts)

    value = [{key("a", "b"): 1, key("c"): 2}, {key("c"): 3, key("a", "b"): 4}, {key("a", "b"): [{key("c"): None}]}]
    assert_same_bytes(value)


def test_buffers_reused_between_calls():
    # The encoder keeps its buffers between calls: documents of other depths and key sets
    # (including one large enough that the buffers are dropped) must not leak into the next.
    deep = {"d": [[[[{"e": [1, "x", b"y"]}]]]]}
    bails = {"a": [[{"b": 1}], [1 << 100]]}  # the fast path stops half-way
    docs = [deep, {"k": 1}, {f"k{i}": [i] for i in range(5000)}, [], {}, [[], {}], bails, deep, "s", {"k": 1}]
    for value in docs + docs[::-1]:
        assert_same_bytes(value)
