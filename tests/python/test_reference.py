"""Tests of the pure-Python reference reader (python/leafwire/reference.py)."""

import io
import random
import struct
import zlib

import pytest

from lwvectors import (
    BOOL, F32_ELEMENT, F64_ELEMENT, I16, I64, I8, U16, U64_ELEMENT, U8, Float32, IntMap,
    Typed, align, encode, expected, keyhash, header, home_bucket, index_geometry, reference,
    require, root_record, same, to_json_model, vector_expectation, vector_paths, widen_f32,
)

FormatError = reference.FormatError
loads = reference.loads

# (name, value given to the test encoder); the expected value is expected(value).
DOCUMENTS = [
    ("null", None),
    ("false", False),
    ("true", True),
    ("int_zero", 0),
    ("int_minus_one", -1),
    ("int_min", -(1 << 63)),
    ("int_max", (1 << 63) - 1),
    ("uint_min", 1 << 63),
    ("uint_max", (1 << 64) - 1),
    ("bignum_positive", 1 << 64),
    ("bignum_negative", -(1 << 63) - 1),
    ("bignum_5000_digits", 7 * 10 ** 4999),
    ("f64", 1.5),
    ("f64_negative_zero", -0.0),
    ("f64_nan", float("nan")),
    ("f64_infinity", float("-inf")),
    ("f32", Float32(0.1)),
    ("f32_negative_zero", Float32(-0.0)),
    ("string_empty", ""),
    ("string_unicode", "héllo ✓ 𝄞 日本"),
    ("bytes", b"\x00\xff\x80LW"),
    ("array_empty", []),
    ("array_small", [1, 2, 3]),
    ("array_mixed", [None, True, False, "x", 1.5, -70000, Float32(2.5), b"", 1 << 63]),
    ("object_empty", {}),
    ("object_small", {"b": 1, "a": "two", "ключ": None}),
    ("object_indexed", {f"key{i}": i * 1000 for i in range(12)}),
    ("object_300_keys", {f"k{i:03}": i for i in range(300)}),
    ("intmap", IntMap({-5: "a", 300: None, 1 << 40: 1.0})),
    ("intmap_indexed", IntMap({i * 7919 - 30000: i for i in range(10)})),
    ("typed_u8", Typed(U8, [3], [1, 2, 255])),
    ("typed_i8", Typed(I8, [2], [-128, 127])),
    ("typed_i16_2d", Typed(I16, [2, 3], [1, -2, 3, -4, 5, -30000])),
    ("typed_u16_3d", Typed(U16, [2, 2, 2], list(range(8)))),
    ("typed_i64", Typed(I64, [2], [-(1 << 63), (1 << 63) - 1])),
    ("typed_u64", Typed(U64_ELEMENT, [1], [(1 << 64) - 1])),
    ("typed_f32", Typed(F32_ELEMENT, [2], [1.5, 0.1])),
    ("typed_f64_2d", Typed(F64_ELEMENT, [2, 2], [1.5, 2.5, 3.5, -0.0])),
    ("typed_bool", Typed(BOOL, [3], [True, False, True])),
    ("typed_masked", Typed(F64_ELEMENT, [2], [-60.64, 47], masked=True)),
    ("typed_masked_9", Typed(F64_ELEMENT, [3, 3], [1, 2.5, 3, 4, 5, 6, 7, 8, 9.5], masked=True)),
    ("typed_empty", Typed(I8, [0], [])),
    ("typed_empty_rows", Typed(F64_ELEMENT, [2, 0], [])),
    ("typed_empty_axis0", Typed(I16, [0, 3], [])),
    ("nested", {
        "a": [1, {"b": [Typed(U8, [2], [1, 2]), "s", []]}],
        "c": IntMap({1: {"a": None, "z": [b"\x01"]}}),
        "d": [[[["deep"]]]],
        "e": "last",
    }),
]
DOCUMENT_IDS = [name for name, _ in DOCUMENTS]


def decode_ok_or_format_error(data):
    """A non-validating reader may decode damaged input or raise FormatError, nothing else."""
    try:
        loads(data)
    except FormatError as error:
        assert isinstance(error, ValueError)
        assert isinstance(error.offset, int)


# -- hand-built documents ---------------------------------------------------------------

@pytest.mark.parametrize("name, value", DOCUMENTS, ids=DOCUMENT_IDS)
def test_hand_built_documents(name, value):
    doc = encode(value)
    assert same(loads(doc), expected(value))
    assert same(reference.load(io.BytesIO(doc)), expected(value))


def test_known_bytes():
    # [1, "a"] spelled out by hand from §2 and §4, independent of the test encoder.
    body = bytes([
        0x01, 0x02,              # array at 112: layout w=2, count 2
        0x03, 0x07,              # tags: int, string
        0x01, 0x00, 0x78, 0x00,  # slots at align(116, 2): 1, offset 120
        0x01, 0x61,              # string block at 120: length 1, "a"
    ])
    doc = header(root_record(1, 112, 0x0A, 0, 122)) + body
    assert doc == encode([1, "a"])
    assert same(loads(doc), [1, "a"])


def test_scalar_values_exactly():
    assert same(loads(encode(Float32(0.1))), widen_f32(0.1))
    assert loads(encode(Float32(0.1))) != 0.1
    assert same(loads(encode(Typed(F64_ELEMENT, [2], [-60.64, 47], masked=True))), [-60.64, 47])
    assert same(loads(encode(-(1 << 63))), -(1 << 63))


def test_pointer_width_4_for_large_documents():
    value = ["x" * 70000, "tail"]
    doc = encode(value)
    assert doc[112] & 3 == 2  # slot width 4: offsets no longer fit 2 bytes
    assert same(loads(doc), value)


def test_bytes_past_end_are_ignored():
    assert same(loads(encode({"a": [1, 2]}) + b"\xff" * 16), {"a": [1, 2]})


def test_bytearray_and_memoryview_input():
    doc = encode({"a": "b"})
    assert same(loads(bytearray(doc)), {"a": "b"})
    assert same(loads(memoryview(doc)), {"a": "b"})


def _index_lookup(doc, p, key, is_object):
    """§4.1 lookup in the hash index of the container at p; returns the child number."""
    layout = doc[p]
    assert layout & 0x20
    w, k = 1 << (layout & 3), 1 << (layout >> 2 & 3)
    n, q = doc[p + 1], p + 2  # counts below 128 in these tests: one-byte varint
    table_size, entry = index_geometry(n)
    table = align(align(q + n + n * k, w) + n * w, entry)
    h = keyhash(key.encode()) if is_object else key & ((1 << 64) - 1)
    bucket = home_bucket(h, table_size)
    while True:
        at = table + bucket * entry
        child = int.from_bytes(doc[at:at + entry], "little") - 1
        if child < 0:
            return None
        at = q + n + child * k
        stored = int.from_bytes(doc[at:at + k], "little", signed=not is_object)
        if is_object:
            stored = _dictionary_key(doc, stored)
        if stored == key:
            return child
        bucket = (bucket + 1) % table_size


def _dictionary_key(doc, key_id):
    dictionary = struct.unpack_from("<Q", doc, 32)[0]
    capacity = struct.unpack_from("<I", doc, dictionary + 4)[0]
    start, stop = struct.unpack_from("<II", doc, dictionary + 16 + 4 * key_id)
    base = dictionary + 16 + 4 * (capacity + 1)
    return doc[base + start:base + stop].decode()


@pytest.mark.parametrize("value, is_object", [
    ({f"key{i}": i for i in range(12)}, True),
    (IntMap({i * 7919 - 30000: i for i in range(10)}), False),
])
def test_hash_index_follows_section_4_1(value, is_object):
    doc = encode(value)
    root = struct.unpack_from("<Q", doc, 24)[0]
    for i, key in enumerate(value):
        assert _index_lookup(doc, root, key, is_object) == i
    assert _index_lookup(doc, root, "absent" if is_object else 123456, is_object) is None


def test_small_containers_have_no_index():
    doc = encode({f"k{i}": i for i in range(8)})
    root = struct.unpack_from("<Q", doc, 24)[0]
    assert not doc[root] & 0x20


def test_reader_ignores_spare_capacity():
    # Array [7, 8] with capacity 4 (layout bit 4): slots sit after c tags, not n.
    body = bytes([0x10, 0x02, 0x04, 0x03, 0x03, 0, 0, 7, 8, 0, 0])
    doc = header(root_record(1, 112, 0x0A, 0, 112 + len(body))) + body
    assert same(loads(doc), [7, 8])


# -- root records (§2.2) ----------------------------------------------------------------

def _two_records(gen_a, gen_b, crc_a=None, crc_b=None):
    """Record A says 5, record B says 7 (int roots need no body)."""
    return header(root_record(gen_a, 5, 0x03, 0, 112, crc=crc_a),
                  root_record(gen_b, 7, 0x03, 0, 112, crc=crc_b))


@pytest.mark.parametrize("gen_a, gen_b, bad_crc, want", [
    (1, 0, None, 5),
    (0, 1, None, 7),
    (1, 2, None, 7),
    (3, 2, None, 5),
    (1, 2, "b", 5),
    (2, 1, "a", 7),
    (1 << 63, (1 << 64) - 1, None, 7),
])
def test_active_record(gen_a, gen_b, bad_crc, want):
    doc = _two_records(gen_a, gen_b, crc_a=1 if bad_crc == "a" else None,
                       crc_b=1 if bad_crc == "b" else None)
    assert loads(doc) == want


@pytest.mark.parametrize("doc", [
    _two_records(0, 0),
    _two_records(1, 2, crc_a=0, crc_b=0),
    bytes(112),
    b"LEAFWIRE\x01" + bytes(103),
], ids=["both_unused", "both_bad_crc", "zeros", "magic_only"])
def test_no_valid_record(doc):
    with pytest.raises(FormatError, match="no valid root record|bad magic"):
        loads(doc)


def test_crc_covers_bytes_0_to_44():
    doc = bytearray(_two_records(1, 0))
    doc[16 + 41] = 0xAA  # reserved byte inside the CRC: the record becomes invalid
    with pytest.raises(FormatError):
        loads(bytes(doc))
    good = root_record(1, 5, 0x03, 0, 112)
    assert struct.unpack_from("<I", good, 44)[0] == zlib.crc32(good[:44])


@pytest.mark.parametrize("doc, offset", [
    (b"LEAFWIRX" + bytes(104), 0),
    (header(root_record(1, 5, 3, 0, 112), major=2), 8),
    (header(root_record(1, 5, 3, 0, 112), flags=1), 10),
    (header(root_record(1, 5, 3, 0, 112), flags=0x8000), 10),
    (header(root_record(1, 5, 3, 0, 113)), 40),
    (header(root_record(1, 5, 3, 0, 111)), 40),
    (header(root_record(1, 5, 0x0F, 0, 112)), 56),
    (header(root_record(1, 5, 0xFF, 0, 112)), 56),
    (b"LEAFWIRE", 8),
])
def test_header_errors(doc, offset):
    with pytest.raises(FormatError) as info:
        loads(doc)
    assert info.value.offset == offset
    assert f"offset {offset}" in str(info.value)


def test_minor_version_is_accepted():
    assert loads(header(root_record(1, 5, 3, 0, 112), minor=9)) == 5


# -- malformed blocks -------------------------------------------------------------------

def _with_root(body, tag):
    return header(root_record(1, 112, tag, 0, 112 + len(body))) + body


@pytest.mark.parametrize("doc, message", [
    (_with_root(bytes([0x00, 0x01, 0x10, 0x00]), 0x0A), "unknown tag 0x10"),
    (_with_root(bytes([11, 0x01, 1, 0]), 0x0D), "unknown element type 11"),
    (_with_root(bytes([1, 0x00]), 0x0D), "rank 0"),
    (_with_root(bytes([1, 33] + [1] * 33), 0x0D), "rank 33"),
    (_with_root(b"\x80" * 11, 0x07), "varint longer than 10 bytes"),
    (_with_root(b"\x02\xff\xfe", 0x07), "invalid UTF-8"),
    (_with_root(b"\x031x2", 0x09), "malformed bignum"),
    (_with_root(bytes([0x00, 0x01, 0x00, 0x00]), 0x0B), "no dictionary"),
    (_with_root(bytes([10, 0x41, 1] + [0] * 5 + [0] * 6 + [0xF8, 0x7F, 1]), 0x0D),
     "not an integer"),
    (_with_root(bytes([1, 2, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0]), 0x0D), "larger than the document"),
    # Regression: a zero axis after large ones used to build 2^32 empty lists.
    (_with_root(bytes([1, 3, 0xFF, 0xFF, 0x03, 0xFF, 0xFF, 0x03, 0]), 0x0D),
     "larger than the document"),
    # Regression: an offset beyond any buffer size made struct raise OverflowError.
    (_with_root(b"\x03\x01\x07" + bytes(5) + b"\xff" * 8, 0x0A), "past the end"),
])
def test_malformed_blocks(doc, message):
    with pytest.raises(FormatError, match=message):
        loads(doc)


def test_cycle_is_rejected():
    # An array whose only child is itself: the value budget or the depth limit stops it.
    doc = _with_root(bytes([0x01, 0x01, 0x0A, 0x00, 112, 0]), 0x0A)
    with pytest.raises(FormatError, match="shared or cyclic"):
        loads(doc)
    with pytest.raises(FormatError, match="nesting deeper than 50"):
        loads(doc, max_depth=50)


def test_shared_subtree_bomb_is_rejected_quickly():
    # 64 arrays of 8 bytes, each with two children pointing at the next one (2^64 paths),
    # ending in an empty array.
    body = b""
    for level in range(64):
        child = (112 + 8 * (level + 1)).to_bytes(2, "little")
        body += bytes([0x01, 0x02, 0x0A, 0x0A]) + child + child
    body += bytes([0x00, 0x00])
    with pytest.raises(FormatError, match="shared or cyclic"):
        loads(_with_root(body, 0x0A))


def test_depth_limit():
    nested = "leaf"
    for _ in range(128):
        nested = [nested]
    assert same(loads(encode(nested)), nested)
    with pytest.raises(FormatError, match="nesting deeper"):
        loads(encode([nested]))
    assert same(loads(encode([nested]), max_depth=129), [nested])


def test_format_error_is_value_error():
    with pytest.raises(ValueError):
        loads(b"")


@pytest.mark.parametrize("name, value", DOCUMENTS, ids=DOCUMENT_IDS)
def test_every_truncation_fails(name, value):
    doc = encode(value)
    if len(doc) > 2000:
        pytest.skip("large document")
    for length in range(len(doc)):
        with pytest.raises(FormatError):
            loads(doc[:length])


def _set_end(doc, end):
    """Rewrite record A's `end` and CRC so a truncated document passes the header check."""
    record = bytearray(doc[16:64])
    record[24:32] = end.to_bytes(8, "little")
    record[44:48] = zlib.crc32(bytes(record[:44])).to_bytes(4, "little")
    return doc[:16] + bytes(record) + doc[64:end]


@pytest.mark.parametrize("name, value", DOCUMENTS, ids=DOCUMENT_IDS)
def test_truncation_with_consistent_end(name, value):
    doc = encode(value)
    if len(doc) > 2000:
        pytest.skip("large document")
    for end in range(112, len(doc)):
        decode_ok_or_format_error(_set_end(doc, end))


@pytest.mark.parametrize("name, value", DOCUMENTS, ids=DOCUMENT_IDS)
def test_byte_flips(name, value):
    doc = encode(value)
    if len(doc) > 2000:
        pytest.skip("large document")
    for position in range(len(doc)):
        for flip in (0x01, 0x10, 0x80, 0xFF):
            damaged = bytearray(doc)
            damaged[position] ^= flip
            if 16 <= position < 60:  # keep record A valid so the body gets read
                damaged[60:64] = zlib.crc32(bytes(damaged[16:60])).to_bytes(4, "little")
            decode_ok_or_format_error(bytes(damaged))


def test_random_mutations():
    rng = random.Random(20240601)
    docs = [encode(value) for _, value in DOCUMENTS]
    docs = [doc for doc in docs if 112 < len(doc) < 2000]
    for _ in range(5000):
        damaged = bytearray(rng.choice(docs))
        for _ in range(rng.randint(1, 6)):
            damaged[rng.randrange(112, len(damaged))] = rng.randrange(256)
        damaged[60:64] = zlib.crc32(bytes(damaged[16:60])).to_bytes(4, "little")
        decode_ok_or_format_error(bytes(damaged))


# -- the strict comparison --------------------------------------------------------------

def test_same_is_strict():
    assert same(float("nan"), float("nan"))
    assert not same(0.0, -0.0)
    assert not same(1, 1.0)
    assert not same(True, 1)
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not same([1], [1, 2])
    assert same({"a": [1.5, None]}, {"a": [1.5, None]})
    assert to_json_model(IntMap({-1: b"\x01"})) == {"-1": [1]}


def test_vector_expectation_formats(tmp_path):
    (tmp_path / "a.lw").write_bytes(encode({"x": IntMap({3: b"\x01"})}))
    (tmp_path / "a.json").write_text('{"x": {"3": [1]}}')
    (tmp_path / "b.lw").write_bytes(encode([float("nan"), -0.0, 1 << 64]))
    (tmp_path / "b.txt").write_text("comment line\nvalue: [nan, -0.0, 18446744073709551616]\n")
    (tmp_path / "c.lw").write_bytes(b"")
    want, is_json = vector_expectation(tmp_path / "a.lw")
    assert is_json and same(to_json_model(loads((tmp_path / "a.lw").read_bytes())), want)
    want, is_json = vector_expectation(tmp_path / "b.lw")
    assert not is_json and same(loads((tmp_path / "b.lw").read_bytes()), want)
    assert vector_expectation(tmp_path / "c.lw") is None


# -- spec/vectors -----------------------------------------------------------------------

@pytest.mark.parametrize("path", vector_paths(), ids=lambda p: p.stem)
def test_vectors(path):
    expectation = vector_expectation(require(path))
    assert expectation is not None, f"{path.name} has neither a .json nor a .txt expectation"
    want, is_json = expectation
    # In JSON (§15.2), table date and date-time cells are their text.
    got = loads(path.read_bytes(), dates="text" if is_json else "counts")
    if is_json:
        got = to_json_model(got)
    assert same(got, want), f"{path.name}: got {got!r}, want {want!r}"
