"""Tests of the compiled Python package (`leafwire`, built from crates/leafwire-py).

Run with: pip install -e . (or maturin develop), then python3 -m pytest -q tests/python/test_package.py
"""

import gc
import io
import json
import math
import os
import struct
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import leafwire
import leafwire.reference as reference
from lwcorpus import JSON_FILES, file_id

REPO = Path(__file__).resolve().parents[2]
# When there is none, a placeholder that makes the vector test fail rather than skip.
VECTORS = sorted((REPO / "spec" / "vectors").glob("*.lw")) or [REPO / "spec" / "vectors" / "NO-VECTORS.lw"]

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]


def same(a, b):
    """Strict structural equality: exact types, floats by their bits (so nan, -0.0 and inf
    count), dict key order, numpy arrays by dtype, shape and bytes."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return (len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
                and all(same(a[k], b[k]) for k in a))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    return a == b


def arrays_to_lists(value):
    """numpy arrays → nested lists, recursively (to compare with the reference reader)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, list):
        return [arrays_to_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: arrays_to_lists(v) for k, v in value.items()}
    return value


def numeric_same(a, b):
    """Like `same`, but an int equals a float of the same value (masked f64 arrays come
    back as float64 in numpy mode and as ints from the reference)."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        if isinstance(a, float) and isinstance(b, float):
            return same(a, b)
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(numeric_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(numeric_same(a[k], b[k]) for k in a)
    return a == b


# ---- round trips ----

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(1 << 200), max_value=1 << 200)
    | st.sampled_from([0, -1, (1 << 63) - 1, -(1 << 63), 1 << 63, (1 << 64) - 1, 1 << 64, -(1 << 63) - 1])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, 1.7976931348623157e308])
    | st.text()
    | st.binary()
)
int_keys = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=12)
        | st.dictionaries(st.text(max_size=8), children, max_size=12)
        | st.dictionaries(int_keys, children, min_size=1, max_size=12)
    ),
    max_leaves=60,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_round_trip_values(value):
    data = leafwire.dumps(value)
    assert same(leafwire.loads(data), value)
    assert same(leafwire.loads(data, arrays="list"), value)
    assert same(leafwire.loads(bytearray(data)), value)
    assert same(leafwire.loads(memoryview(data)), value)
    assert same(leafwire.open(data).to_python(), value)
    assert same(reference.loads(data), value)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(dtype=st.sampled_from(DTYPES), shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=6)))
def test_round_trip_numpy_arrays(array):
    try:
        data = leafwire.dumps({"a": array})
    except leafwire.EncodeError:
        # Spec §5.2: an empty array's rows may not outnumber the document's bytes.
        assert array.size == 0 and max(np.cumprod(array.shape)) > 112
        return
    back = leafwire.loads(data)["a"]
    assert back.dtype == array.dtype and back.shape == array.shape
    assert back.tobytes() == array.tobytes()
    assert back.flags.c_contiguous and back.flags.writeable and back.flags.owndata
    assert same(leafwire.loads(data, arrays="list")["a"], array.tolist())
    view = leafwire.open(data)["a"]
    assert view.dtype == array.dtype and view.shape == array.shape and view.tobytes() == array.tobytes()
    assert same(reference.loads(data)["a"], array.tolist())


def test_numpy_layouts_and_byte_orders():
    a = np.arange(24, dtype=np.int32).reshape(4, 6)
    for variant in (a[:, ::2], a.T, a[::-1], a.astype(">i4"), a.astype(">f8"), np.asfortranarray(a)):
        back = leafwire.loads(leafwire.dumps(variant))
        assert back.dtype == variant.dtype.newbyteorder("=")
        assert back.shape == variant.shape
        assert np.array_equal(back, variant)
    with pytest.raises(leafwire.EncodeError, match="rows"):
        leafwire.dumps(np.zeros((1 << 20, 0)))
    empty = np.zeros((3, 0, 2), dtype=np.float32)
    back = leafwire.loads(leafwire.dumps(empty))
    assert back.shape == (3, 0, 2) and back.dtype == np.float32
    assert leafwire.loads(leafwire.dumps(empty), arrays="list") == [[], [], []]


def test_numpy_scalars_and_zero_d_arrays():
    cases = [
        (np.float32(1.5), 1.5), (np.float64(-0.0), -0.0), (np.int8(-3), -3), (np.uint64((1 << 64) - 1), (1 << 64) - 1),
        (np.int64(-(1 << 63)), -(1 << 63)), (np.bool_(True), True), (np.uint16(7), 7), (np.array(2.5), 2.5),
        (np.array(7, dtype=np.uint8), 7), (np.str_("text"), "text"),
    ]
    for given_value, expected in cases:
        assert same(leafwire.loads(leafwire.dumps(given_value)), expected), given_value
    # float32 keeps its precision: 0.1f is not 0.1.
    assert leafwire.loads(leafwire.dumps(np.float32(0.1))) == float(np.float32(0.1))


def test_python_type_mapping():
    class MyInt(int):
        def __str__(self):
            return "not digits"

    class MyStr(str):
        pass

    from collections import OrderedDict, namedtuple
    from enum import IntEnum

    class Color(IntEnum):
        RED = 1

    Point = namedtuple("Point", "x y")
    value = {
        "tuple": (1, "a"), "bytearray": bytearray(b"xy"), "memoryview": memoryview(b"mv"),
        "subclasses": [MyInt(1 << 80), MyStr("s"), Color.RED, Point(1, 2), OrderedDict(a=1)],
        "bool_key_map": {True: "t", 2: "two"},
    }
    back = leafwire.loads(leafwire.dumps(value))
    assert back == {
        "tuple": [1, "a"], "bytearray": b"xy", "memoryview": b"mv",
        "subclasses": [1 << 80, "s", 1, [1, 2], {"a": 1}],
        "bool_key_map": {1: "t", 2: "two"},
    }
    assert type(back["subclasses"][2]) is int


def test_default_hook():
    import datetime
    import decimal

    def default(obj):
        if isinstance(obj, datetime.date):
            return obj.isoformat()
        if isinstance(obj, decimal.Decimal):
            return str(obj)
        if isinstance(obj, set):
            return sorted(obj)
        raise TypeError(f"no {type(obj).__name__}")

    value = {"d": datetime.date(2024, 1, 2), "n": decimal.Decimal("1.10"), "s": {3, 1, 2}}
    assert leafwire.loads(leafwire.dumps(value, default=default)) == {"d": "2024-01-02", "n": "1.10", "s": [1, 2, 3]}
    with pytest.raises(leafwire.EncodeError) as info:
        leafwire.dumps(object(), default=default)
    assert isinstance(info.value.__cause__, TypeError)
    # A hook that never returns a supported value ends at the depth limit, not in a loop.
    with pytest.raises(leafwire.EncodeError, match="max_depth"):
        leafwire.dumps(object(), default=lambda o: object())


def test_dump_load_files(tmp_path):
    value = {"a": [1, 2, {"b": np.arange(4.0)}]}
    buf = io.BytesIO()
    leafwire.dump(value, buf)
    buf.seek(0)
    back = leafwire.load(buf, arrays="list")
    assert back == {"a": [1, 2, {"b": [0.0, 1.0, 2.0, 3.0]}]}
    path = tmp_path / "v.lw"
    with open(path, "wb") as fp:
        leafwire.dump(value, fp)
    with open(path, "rb") as fp:
        assert np.array_equal(leafwire.load(fp)["a"][2]["b"], np.arange(4.0))


def test_dumped_files_carry_checksums_that_find_a_flipped_bit(tmp_path):
    value = {"rows": [{"id": i, "name": f"row {i}"} for i in range(2000)]}
    path = tmp_path / "v.lw"
    with open(path, "wb") as fp:
        leafwire.dump(value, fp)
    data = bytearray(path.read_bytes())
    assert data[10] & 2, "the page-checksum flag is set"
    leafwire.validate(data)
    assert leafwire.loads(bytes(data)) == value
    assert len(data) > len(leafwire.dumps(value))
    data[len(data) // 2] ^= 0x10
    with pytest.raises(leafwire.DecodeError, match="checksum"):
        leafwire.validate(data)
    # Edits keep the checksums true.
    with leafwire.edit(path) as ed:
        ed.set("/rows/5/name", "renamed")
        ed.append({"id": -1}, at="/rows")
    leafwire.validate(path.read_bytes())
    assert leafwire.open(path)["rows"][5]["name"] == "renamed"


def test_dump_streams_the_bytes_of_dumps():
    # No fast form (a bignum, a numpy array): the general path streams into fp in chunks.
    value = {"big": 2**70, "xs": np.arange(300_000.0), "s": ["x" * 1000] * 3000, "n": list(range(50_000))}
    for v in (value, {"a": [1, 2.5, "three"]}):  # the general path, then the fast one
        buf = io.BytesIO()
        leafwire.dump(v, buf, checksums=False)
        assert buf.getvalue() == leafwire.dumps(v)
        # By default the same document with page checksums, streamed as well.
        buf = io.BytesIO()
        leafwire.dump(v, buf)
        assert buf.getvalue() == leafwire._leafwire.add_checksums(leafwire.dumps(v))


def test_dump_raises_what_the_file_raises():
    class Full(io.RawIOBase):
        def writable(self):
            return True

        def write(self, b):
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        leafwire.dump({"big": 2**70, "xs": np.arange(10.0)}, Full())
    with pytest.raises(leafwire.EncodeError):
        leafwire.dump({"bad": object()}, io.BytesIO())


# ---- spec vectors and the reference reader ----

@pytest.mark.parametrize("path", VECTORS, ids=[p.name for p in VECTORS])
def test_spec_vectors_match_reference(path):
    assert path.is_file(), f"{path.parent} holds no .lw vector (REGENERATE=1 cargo test -p leafwire --test vectors writes them)"
    data = path.read_bytes()
    try:
        expected = reference.loads(data)
    except reference.FormatError:
        with pytest.raises(leafwire.DecodeError):
            leafwire.loads(data)
        return
    assert same(leafwire.loads(data, arrays="list"), expected)
    assert numeric_same(arrays_to_lists(leafwire.loads(data)), expected)
    assert numeric_same(arrays_to_lists(leafwire.open(data).to_python()), expected)


def test_masked_arrays_from_json():
    data = leafwire.from_json(b'{"ring": [[-60.64, 47], [1, 2.5]], "ints": [1, 2, 300], "f": [0.5, 1.5]}')
    expected = {"ring": [[-60.64, 47], [1, 2.5]], "ints": [1, 2, 300], "f": [0.5, 1.5]}
    assert same(leafwire.loads(data, arrays="list"), expected)
    assert same(reference.loads(data), expected)
    numpy_mode = leafwire.loads(data)
    assert numpy_mode["ring"].dtype == np.float64 and numpy_mode["ring"].shape == (2, 2)
    assert numpy_mode["ints"].dtype == np.int16
    doc = leafwire.open(data)
    assert same(doc.pointer("/ring/0/1"), 47)
    assert same(doc.pointer("/ring/0/0"), -60.64)
    assert doc["ring"].dtype == np.float64


# ---- the JSON corpus ----

@pytest.mark.parametrize("path", JSON_FILES, ids=file_id)
def test_json_corpus_round_trips(path):
    text = path.read_text(encoding="utf-8")
    expected = json.loads(text)
    lw = leafwire.from_json(text)
    assert leafwire.from_json(text.encode()) == lw
    assert json.loads(leafwire.to_json(lw)) == expected
    assert leafwire.loads(leafwire.dumps(expected), arrays="list") == expected
    assert leafwire.loads(lw, arrays="list") == expected
    assert leafwire.open(lw).to_python(arrays="list") == expected
    leafwire.validate(lw)


# ---- lazy documents ----

def test_lazy_navigation():
    value = {"a": {"b": [10, 20, {"c": "deep"}], "n": None}, "m": {5: "five", -1: "minus"}, "t": [True, 1.5]}
    doc = leafwire.open(leafwire.dumps(value))
    root = doc.root
    assert isinstance(root, Mapping) and isinstance(root, leafwire.ObjectNode)
    assert isinstance(root["a"]["b"], Sequence)
    assert doc["a"]["b"][2]["c"] == "deep"
    assert doc.pointer("/a/b/2/c") == "deep" == root.pointer("/a/b/2/c") == root["a"].pointer("/b/2/c")
    assert doc.pointer("/m/5") == "five"
    assert doc.pointer("") == root
    assert len(doc) == 3 and len(doc["a"]["b"]) == 3
    assert list(doc) == ["a", "m", "t"] == list(doc.keys())
    assert "a" in doc and "zz" not in doc and 5 not in doc
    assert 5 in doc["m"] and "5" not in doc["m"]
    assert list(doc["m"].items()) == [(5, "five"), (-1, "minus")]
    assert list(doc["m"].values()) == ["five", "minus"]
    assert ("m" in doc.keys()) and (("t", None) not in doc.items())
    assert doc.get("zz", 3) == 3 and doc["a"].get("n", 7) is None
    assert doc["a"]["b"][-1]["c"] == "deep"
    assert doc["a"]["b"][0:2] == [10, 20]
    assert list(reversed(doc["t"])) == [1.5, True]
    assert 20 in doc["a"]["b"] and doc["a"]["b"].index(20) == 1 and doc["a"]["b"].count(10) == 1
    assert doc["a"]["b"][:2] == [10, 20] and doc["t"] == [True, 1.5]
    assert doc["m"] == {5: "five", -1: "minus"}
    assert dict(doc["m"]) == {5: "five", -1: "minus"}
    assert doc.to_python() == value
    assert doc["a"].to_python() == value["a"]
    assert root.kind == "object" and doc["m"].kind == "intmap" and doc["t"].kind == "array"
    with pytest.raises(TypeError):
        doc["a"]["b"]["x"]


def test_not_found_errors():
    doc = leafwire.open(leafwire.dumps({"a": [1, 2], "m": {1: 2}}))
    with pytest.raises(leafwire.NotFoundError) as info:
        doc["missing"]
    assert isinstance(info.value, KeyError)
    with pytest.raises(KeyError):
        doc["m"][2]
    with pytest.raises(IndexError):
        doc["a"][2]
    with pytest.raises(IndexError):
        doc["a"][-3]
    with pytest.raises(leafwire.NotFoundError) as info:
        doc.pointer("/a/9")
    assert info.value.path == "/a/9"
    with pytest.raises(leafwire.NotFoundError):
        doc.pointer("/nope/x")
    with pytest.raises(leafwire.NotFoundError):
        doc.pointer("a")


def test_scalar_and_typed_roots():
    assert leafwire.open(leafwire.dumps(5)).root == 5
    assert leafwire.open(leafwire.dumps("s")).to_python() == "s"
    doc = leafwire.open(leafwire.dumps(np.arange(5, dtype=np.uint8)))
    assert doc.root.tolist() == [0, 1, 2, 3, 4]
    assert doc.pointer("/3") == 3
    with pytest.raises(TypeError):
        len(leafwire.open(leafwire.dumps(5)))


def _check_view(view, expected, owner_bytes):
    assert view.flags.writeable is False
    assert np.shares_memory(view, np.frombuffer(owner_bytes, dtype=np.uint8))
    with pytest.raises(ValueError):
        view[0] = 1
    with pytest.raises(ValueError):
        view.flags.writeable = True
    assert np.array_equal(view, expected)


def test_numpy_views_share_memory_and_outlive_the_document():
    xs = np.linspace(0, 1, 1001)
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    buf = leafwire.dumps({"xs": xs, "m": m})
    doc = leafwire.open(buf)
    view, row = doc["xs"], doc.pointer("/m/1")
    _check_view(view, xs, buf)
    _check_view(row, m[1], buf)
    whole = doc.to_python()
    assert np.shares_memory(whole["xs"], np.frombuffer(buf, dtype=np.uint8))
    del doc, buf, whole
    gc.collect()
    assert view.sum() == xs.sum() and row.tolist() == [4, 5, 6, 7]


def test_numpy_views_of_mapped_files(tmp_path):
    xs = np.arange(100_000, dtype=np.float64)
    path = tmp_path / "cols.lw"
    path.write_bytes(leafwire.dumps({"cols": {"x": xs}}))
    doc = leafwire.open(path)
    view = doc["cols"]["x"]
    assert view.flags.writeable is False and not view.flags.owndata
    assert repr(doc).startswith("<leafwire.Document") and "mapped" in repr(doc)
    doc2 = leafwire.open(str(path))
    assert doc2.pointer("/cols/x/99999") == 99999.0
    del doc, doc2
    gc.collect()
    assert view.sum() == xs.sum()
    with pytest.raises(FileNotFoundError):
        leafwire.open(tmp_path / "absent.lw")
    with pytest.raises(IsADirectoryError):
        leafwire.open(tmp_path)
    (tmp_path / "empty.lw").write_bytes(b"")
    with pytest.raises(leafwire.DecodeError):
        leafwire.open(tmp_path / "empty.lw")


def test_document_validate_and_size():
    data = leafwire.dumps({"a": [1, 2, 3]})
    doc = leafwire.open(data)
    assert doc.nbytes == len(data)
    doc.validate()
    leafwire.validate(data)
    with pytest.raises(leafwire.DecodeError):
        leafwire.open(_cyclic_document()).validate()


def test_buffer_documents():
    xs = np.arange(64, dtype=np.float64)
    data = leafwire.dumps({"xs": xs})
    ba = bytearray(data)
    doc = leafwire.open(ba)
    view = doc["xs"]
    assert np.shares_memory(view, np.frombuffer(ba, dtype=np.uint8))
    with pytest.raises(BufferError):
        ba.extend(b"x")  # the document holds the export: the buffer cannot move
    del doc
    gc.collect()
    assert np.array_equal(view, xs)
    # One byte of offset makes the f64 data misaligned: the documented fallback copies.
    shifted = memoryview(b"\0" + data)[1:]
    doc = leafwire.open(shifted)
    copy = doc["xs"]
    assert np.array_equal(copy, xs) and copy.flags.owndata
    # Buffers of other formats are read as their bytes.
    words = np.frombuffer(data + bytes(-len(data) % 8), dtype=np.uint64)
    assert np.array_equal(leafwire.open(words)["xs"], xs)
    assert np.array_equal(leafwire.loads(memoryview(words))["xs"], xs)
    with pytest.raises(TypeError):
        leafwire.open(12)


def test_views_from_threads_and_gc_stress():
    data = leafwire.dumps({"v": np.arange(1000, dtype=np.int64), "l": [{"k": i} for i in range(50)]})
    views = []

    def work():
        for _ in range(50):
            doc = leafwire.open(bytes(data))
            views.append(doc["v"])
            assert [n["k"] for n in doc["l"]] == list(range(50))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    gc.collect()
    assert all(v.sum() == 499500 for v in views)


# ---- errors ----

def test_errors_are_standard_subclasses():
    assert issubclass(leafwire.DecodeError, ValueError)
    assert issubclass(leafwire.EncodeError, TypeError)
    assert issubclass(leafwire.NotFoundError, KeyError)


def test_truncations_raise_decode_error():
    data = leafwire.dumps({"a": [1, "two", 3.5, None, b"b", {"x": np.arange(5)}], "b": 1 << 70})
    for n in range(len(data)):
        with pytest.raises(leafwire.DecodeError) as info:
            leafwire.loads(data[:n])
        assert isinstance(info.value.offset, int)
        with pytest.raises(leafwire.DecodeError):
            leafwire.open(data[:n]).to_python()


def test_bit_flips_never_crash():
    data = bytearray(leafwire.dumps({
        "a": [1, "two", 3.5, None, b"b", {"x": np.arange(5), "y": np.ones((2, 2), dtype=bool)}],
        "b": 1 << 70, "c": {i: str(i) for i in range(12)}, "d": {f"k{i}": i for i in range(12)},
    }))
    for i in range(len(data)):
        for bit in (0x01, 0x10, 0x80):
            flipped = bytearray(data)
            flipped[i] ^= bit
            for reader in (leafwire.loads, lambda d: leafwire.loads(d, arrays="list"),
                           lambda d: leafwire.open(d).to_python(), leafwire.validate, leafwire.to_json):
                try:
                    reader(bytes(flipped))
                except (leafwire.DecodeError, leafwire.EncodeError):
                    pass


def test_invalid_arguments():
    with pytest.raises(TypeError):
        leafwire.loads("a str")
    with pytest.raises(TypeError):
        leafwire.loads(123)
    with pytest.raises(ValueError):
        leafwire.loads(leafwire.dumps(1), arrays="tuple")
    with pytest.raises(ValueError):
        leafwire.dumps(1, max_depth=10**9)
    with pytest.raises(leafwire.DecodeError):
        leafwire.loads(b"")
    with pytest.raises(leafwire.DecodeError) as info:
        leafwire.loads(b"NOTLEAFWIRE" + bytes(200))
    assert info.value.offset == 0


@pytest.mark.parametrize("value", [
    object(), {1.5: 1}, {"a": 1, 2: 3}, {2: 1, "a": 3}, {(1, 2): 3}, {1 << 70: 1}, {1, 2}, 1j,
    "\ud800", {"\udc00": 1}, np.zeros(2, dtype=np.complex128), np.complex64(1j),
    [1, [2, object()]],
])
def test_unsupported_values_raise_encode_error(value):
    with pytest.raises(leafwire.EncodeError):
        leafwire.dumps(value)


def test_deep_nesting_dumps():
    deep = []
    for _ in range(10_000):
        deep = [deep]
    with pytest.raises(leafwire.EncodeError, match="max_depth") as info:
        leafwire.dumps(deep)
    assert info.value.category == "depth_limit"
    deep_dict = {}
    for _ in range(10_000):
        deep_dict = {"k": deep_dict}
    with pytest.raises(leafwire.EncodeError):
        leafwire.dumps(deep_dict)
    cycle = []
    cycle.append(cycle)
    with pytest.raises(leafwire.EncodeError):
        leafwire.dumps(cycle)
    nested = [[[[1]]]]
    with pytest.raises(leafwire.EncodeError):
        leafwire.dumps(nested, max_depth=3)
    assert leafwire.loads(leafwire.dumps(nested, max_depth=4)) == nested
    ok = []
    for _ in range(127):
        ok = [ok]  # 128 lists: the default limit
    assert leafwire.loads(leafwire.dumps(ok)) == ok
    with pytest.raises(leafwire.EncodeError):
        leafwire.dumps([ok])


def _cyclic_document():
    """[[]] with the inner array's offset pointed back at the outer one: a cycle that a lazy
    reader follows forever unless it counts depth."""
    data = bytearray(leafwire.dumps([[]]))
    root = struct.unpack_from("<Q", data, 24)[0]  # root record A, field `root`
    layout, count = data[root], data[root + 1]
    width = 1 << (layout & 3)
    slots = root + 2 + count
    slots += -slots % width
    data[slots:slots + width] = root.to_bytes(width, "little")
    return bytes(data)


def test_deep_documents_raise_decode_error():
    cyclic = _cyclic_document()
    for reader in (leafwire.loads, lambda d: leafwire.open(d).to_python(), leafwire.validate):
        with pytest.raises(leafwire.DecodeError):
            reader(cyclic)
    with pytest.raises(leafwire.DecodeError) as info:
        leafwire.loads(cyclic, max_depth=leafwire.MAX_DEPTH_CAP)
    assert info.value.category == "depth_limit"
    text = "[" * 300 + "]" * 300
    with pytest.raises(leafwire.DecodeError) as info:
        leafwire.from_json(text)
    assert info.value.category == "depth_limit"
    deep = leafwire.from_json(text, max_depth=300)
    with pytest.raises(leafwire.DecodeError):
        leafwire.loads(deep)
    expected = []
    for _ in range(299):
        expected = [expected]
    assert leafwire.loads(deep, max_depth=300) == expected
    assert leafwire.open(deep).to_python(max_depth=300) == expected


def test_json_errors_have_positions():
    with pytest.raises(leafwire.DecodeError) as info:
        leafwire.from_json('{"a": 1,\n  "b": }')
    assert info.value.line == 2 and info.value.column is not None and info.value.offset is None
    with pytest.raises(leafwire.DecodeError) as info:
        leafwire.from_json('{"a": 1, "a": 2}')
    assert info.value.category == "duplicate_key"
    assert leafwire.loads(leafwire.from_json('{"a": 1, "a": 2}', duplicate_keys="last")) == {"a": 2}
    with pytest.raises(leafwire.EncodeError):
        leafwire.to_json(leafwire.dumps([math.nan]))
    with pytest.raises(TypeError):
        leafwire.from_json(12)


def test_reference_importable_without_extension():
    code = (
        "import sys; sys.modules['leafwire._leafwire'] = None\n"
        "import leafwire.reference as r\n"
        "assert r.loads is not None\n"
        "import leafwire\n"
        "try:\n    leafwire.dumps(1)\nexcept ImportError as e:\n    print('ok', e)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO / "python"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ok")
