"""Tests of the pure-Python packed array reader (python/leafwire/packed.py, spec §13)
through the reference reader: the hand-written codec vectors of the Rust codec tests,
column groups written by the Rust writer, the packed vectors of spec/vectors/packed/, and
malformed input, which must always be a FormatError and never another exception."""

import gzip
import json
import math
import random
import struct
from pathlib import Path

import pytest

from lwvectors import REPO, VECTOR_DIR, header, reference, root_record, same, varint, vector_expectation

FormatError = reference.FormatError
loads = reference.loads
packed = reference._packed_module()

GROUPS = REPO / "tests" / "data" / "packed_groups"
PACKED_VECTORS = VECTOR_DIR / "packed"
INT, FLOAT, STRING = packed.S_INT, packed.S_FLOAT, packed.S_STRING


def page(data, n, stream):
    """The n values of a page that is exactly `data`."""
    return packed.read_page(bytes(data), 0, len(data), n, stream)


def stream(data, n, stream):
    """The n values of the stream at the start of `data` (bytes after it are not read)."""
    r = packed._Cursor(bytes(data), 0, len(data))
    return {INT: packed.read_ints, FLOAT: packed.read_floats, STRING: packed.read_strings}[stream](r, n)


def f64(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def pi_bits():
    return list(struct.pack("<d", math.pi))


# -- (a) the hand-written codec vectors of crates/leafwire/src/packed/ --------------------

SPLIT_RIGHTS = [0] * 25 + [0x80]  # 4 × 52 bits; only 3.0's bit 51 is set (bit 207)

CODEC_VECTORS = [
    # int.rs fixed_vectors
    ("plain", INT, [0x00, 2, 0x01, 0x00, 0xFF, 0xFF, 0x2C, 0x01], [1, -1, 300]),
    ("constant", INT, [0x01, 0x05], [-3, -3, -3, -3]),
    ("for", INT, [0x02, 20, 2, 0x9C], [10, 13, 11, 12]),
    ("delta", INT, [0x03, 10, 0x01, 2], [5, 6, 7, 8]),
    ("rle", INT, [0x04, 2, 0x02, 14, 2, 0x08, 0x02, 4, 1, 0x01], [7, 7, 7, 9, 9]),
    ("dictionary", INT, [0x06, 2, 0x00, 1, 4, 100, 1, 0x09], [100, 4, 4, 100]),
    ("patched", INT, [0x05, 0, 0, 1, 2, 11, 0x02, 0xD0, 0x07], [0, 0, 1000, 0, 0]),
    ("bitmap", INT, [0x02, 0, 1, 0x0D], [1, 0, 1, 1]),  # int.rs bools_are_zero_or_one
    ("nested_three_deep", INT, [0x06, 1, 0x06, 1, 0x06, 1, 0x01, 0, 0, 0, 0], [0]),
    ("constant_4096", INT, [0x01, 14], [7] * 4096),  # tests.rs: the selector's choice
    # float.rs fixed_vectors and split.rs fixed_vector
    ("float_plain", FLOAT, [0x10, 0, 0, 0, 0, 0, 0, 0xF0, 0x3F], [1.0]),
    ("decimal_patched", FLOAT, [0x12, 2, 0x00, 1, 125, 50, 50, 1, 2, 0x02] + pi_bits(), [1.25, 0.5, math.pi]),
    ("quantized", FLOAT, [0x14, 0xFF, 0x00, 1, 3, 0], [1.5, 0.0]),
    ("decimal_residual", FLOAT, [0x15, 1, 0x00, 1, 3, 5, 0x00, 1, 1, 0], [0.1 + 0.2, 0.5]),
    ("split", FLOAT, [0x13, 12, 3, 0xFF, 0x03, 0x00, 0x04, 0x00, 0x0C, 2, 0x48] + SPLIT_RIGHTS + [0],
     [1.0, -2.0, 1.0, 3.0]),
    # string.rs fixed_vectors and symbols.rs fixed_vector
    ("string_plain", STRING, [0x20, 0x02, 2, 1, 0x01, *b"abc"], ["ab", "c"]),
    ("string_dictionary", STRING, [0x21, 2, 0x20, 0x00, 1, 2, 1, *b"yzx", 0x00, 1, 0, 1, 0], ["yz", "x", "yz"]),
    ("numeric", STRING, [0x22, 0x00, 1, 3, 0xF4, 0, 0x00, 1, 19, 1, 0], ["30000000000000000000", "-120", "0"]),
    ("hex_prefixed", STRING, [0x23, 1, 0x00, 1, 2, 0, 0xDE, 0xAD], ["0xdead", "0x"]),
    ("hex_upper", STRING, [0x23, 2, 0x01, 2, 0x0A], ["0A"]),
    ("symbols", STRING, [0x24, 2, 2, 1, *b"abc", 0x00, 1, 2, 3, 0, 1, 255, ord("x"), 0], ["abc", "xab"]),
]


@pytest.mark.parametrize("name, family, data, values", CODEC_VECTORS, ids=[c[0] for c in CODEC_VECTORS])
def test_codec_vectors(name, family, data, values):
    assert same(page(data, len(values), family), values)


# The malformed streams of the same Rust tests: each a FormatError.
BAD_STREAMS = [
    (INT, [0x00, 3, 1, 2, 3], 3, "width not 1, 2, 4 or 8"),
    (INT, [0x02, 0, 65], 1, "bit width above 64"),
    (INT, [0x03, 0, 0x03, 0, 0x01, 0], 3, "not allowed"),
    (INT, [0x04, 3, 0x01, 0, 0x01, 2], 2, "run count"),
    (INT, [0x04, 1, 0x01, 0, 0x01, 4], 3, "do not sum to n"),
    (INT, [0x04, 1, 0x01, 0, 0x01, 1], 1, "below 1"),
    (INT, [0x06, 2, 0x00, 1, 1, 2, 2, 0], 2, "bitlen"),
    (INT, [0x05, 0, 0, 1, 3, 1, 0x02, 1], 2, "not below n"),
    (INT, [0x05, 0, 60, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 8, 0, 1], 1, "w \\+ hw"),
    (INT, [0x07], 1, "unknown integer codec"),
    (INT, [0x02, 0, 64, 0, 0, 0, 0, 0, 0, 0], 2, "truncated"),
    (INT, [0x06, 1, 0x06, 1, 0x06, 1, 0x06, 1, 0x01, 0, 0, 0, 0, 0], 1, "nested deeper than 3"),
    (INT, [0x04, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20, 0x01, 0], 10, "run count"),
    (FLOAT, [0x11, 0], 1, "pco"),
    (FLOAT, [0x13, 0], 1, "left width"),
    (FLOAT, [0x13, 17], 1, "left width"),
    (FLOAT, [0x13, 8, 0], 1, "dictionary size"),
    (FLOAT, [0x13, 8, 1, 0, 1, 0], 1, "wider than L"),
    (FLOAT, [0x13, 8, 2, 0, 0, 1, 0, 0], 1, "bitlen"),
    (FLOAT, [0x12, 23, 0x01, 0, 0], 1, "exponent above 22"),
    (FLOAT, [0x15, 19, 0x01, 0, 0x01, 0], 1, "exponent above 18"),
    (FLOAT, [0x14, 61, 0x01, 0], 1, "-60..=60"),
    (FLOAT, [0x14, 0, 0x01, 0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20], 1, "above 2\\^53"),
    (FLOAT, [0x12, 0, 0x01, 0, 2, 0, 0], 1, "patch count"),
    (FLOAT, [0x17], 1, "unknown float codec"),
    (STRING, [0x20, 0x01, 2, 0xFF], 1, "not UTF-8"),
    (STRING, [0x20, 0x01, 2, ord("a")], 2, "exceed the stream"),
    (STRING, [0x20, 0x01, 3], 1, "negative"),
    (STRING, [0x21, 1, 0x21, 1, 0x20, 0x01, 0, 0x01, 0, 0x01, 0], 1, "not allowed"),
    (STRING, [0x21, 1, 0x20, 0x01, 0, 0x01, 2], 1, "code out of range"),
    (STRING, [0x22, 0x01, 0, 0x01, 2], 1, "zero count"),
    (STRING, [0x22, 0x01, 2, 0x01, 130, 1], 1, "zero count"),
    (STRING, [0x23, 4, 0x01, 0], 1, "hex flags"),
    (STRING, [0x24, 1, 9, 0], 1, "symbol length"),
    (STRING, [0x24, 1, 1, ord("a"), 0x01, 2, 1], 1, "not in the table"),
    (STRING, [0x24, 0, 0x01, 2, 255], 1, "escape at the end"),
    (STRING, [0x24, 0, 0x01, 4, 255, 0xC3, 255, 0x28], 1, "not UTF-8"),
]


@pytest.mark.parametrize("family, data, n, message", BAD_STREAMS)
def test_bad_streams_are_format_errors(family, data, n, message):
    with pytest.raises(FormatError, match=message):
        stream(data, n, family)


def test_bool_columns_hold_only_zero_and_one():
    group = build_group(3, [], [node(0, 0, 0, 1 << packed.BOOL)], [(0, packed.S_BOOL, 3)],
                        [(0, [[3, [0x02, 0, 2, 0x06]]])])  # FOR width 2: 2, 1, 0
    with pytest.raises(FormatError, match="not 0 or 1"):
        packed.read_group(group, 0, len(group))


def test_every_truncation_of_a_stream_fails():
    for name, family, data, values in CODEC_VECTORS:
        for cut in range(len(data)):
            with pytest.raises(FormatError):
                stream(data[:cut], len(values), family)


def test_string_dictionary_expansion_is_bounded():
    # One 1100-byte string, repeated 65,536 times by a 2-byte constant code stream: 72 MB.
    data = [0x21, 1, 0x20, 0x01, 0x98, 0x11] + [ord("a")] * 1100 + [0x01, 0]
    with pytest.raises(FormatError, match="max_page_bytes"):
        page(data, 65_536, STRING)
    assert page(data, 1000, STRING) == ["a" * 1100] * 1000


def test_page_values_are_limited():
    with pytest.raises(FormatError, match="exceeds the limit"):
        page([0x01, 0], 65_537, INT)


# -- the zstd stage (§13.5.4) -------------------------------------------------------------

def zstd_page(inner, declared=None):
    import zstandard

    frame = zstandard.ZstdCompressor(level=3).compress(bytes(inner))
    return bytes([0x30]) + varint(len(inner) if declared is None else declared) + varint(len(frame)) + frame


def test_zstd_stage_round_trips():
    pytest.importorskip("zstandard")
    inner = bytes([0x00, 8]) + b"".join(struct.pack("<q", j % 10 * 1_000_003) for j in range(4096))
    data = zstd_page(inner)
    assert len(data) < len(inner) // 4
    assert page(data, 4096, INT) == [j % 10 * 1_000_003 for j in range(4096)]
    assert page(zstd_page([0x01, 0]), 3, INT) == [0, 0, 0]


def test_zstd_declared_size_above_the_limit_is_refused_before_decoding():
    # D of 2^40 bytes in a 10-byte page, and D one byte above max_page_bytes.
    for d in (1 << 40, packed.MAX_PAGE_BYTES + 1):
        data = bytes([0x30]) + varint(d) + bytes([3, 1, 2, 3])
        with pytest.raises(FormatError, match="exceeds the limit"):
            page(data, 1, INT)


def test_zstd_lies_and_bombs_are_format_errors():
    zstandard = pytest.importorskip("zstandard")
    # 8 MiB of zeros in a small frame, declared as 1,000 bytes: stopped near 1,000 bytes.
    zeros = zstandard.ZstdCompressor(level=3, write_content_size=False).compress(bytes(8 << 20))
    bomb = bytes([0x30]) + varint(1000) + varint(len(zeros)) + zeros
    cases = [
        (bomb, "exactly D bytes"),
        (zstd_page([0x01, 0], declared=3), "content size differs from D"),
        (bytes([0x30, 2, 4, 1, 2, 3, 4]), "not exactly one zstd frame"),
        (zstd_page(zstd_page([0x01, 0])), "unknown integer codec"),  # a zstd stage inside one
        (zstd_page([0x01, 0, 0]), "D bytes"),  # the stream inside must use all D bytes
        (zstd_page([0x01, 0]) + b"\0", "after the zstd frame"),
    ]
    two_frames = zstd_page([0x01, 0])
    frame = two_frames[3:]
    cases.append((bytes([0x30, 2]) + varint(2 * len(frame)) + frame + frame, "not exactly one zstd frame"))
    cases.append((two_frames[:-1], "truncated"))
    for data, message in cases:
        with pytest.raises(FormatError, match=message):
            page(data, 1, INT)


# -- (b) column groups written by the Rust writer ------------------------------------------

def _splitmix(x):
    mask = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def _deep():
    value = 1
    for _ in range(40):
        value = [value]
    return value


def _quantized(v):
    return round(v * 4096) / 4096  # round-half-even, as the lossy codec 0x14 with t = -12


SPECIALS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 5e-324, 1.7976931348623157e308, 0.1, 1e300]

# name -> the elements the Rust writer was given (tests/data/packed_groups/README.md)
RUST_GROUPS = {
    "records": lambda: [
        {"id": 1, "name": "a", "price": "30000000000000000000", "tags": ["x", "y"]},
        {"id": 2, "name": "b", "price": None},
        {"id": 3, "name": "a", "price": "500", "tags": []},
    ],
    "points": lambda: [{"p": [1.5, 2]}, {"p": [3.5, 4.25]}, {"p": [0, 1]}],
    "keyed": lambda: [{f"user{i * 10 + k}": k for k in range(10)} for i in range(10)],
    "intmap": lambda: [{1: "a", -5: True}, {}, {7: None}],
    "residual": lambda: [(1 << 64) - 1, 1.5, b"\x01\x02", 123456789012345678901234567890, 1, "s"],
    "deep": lambda: [_deep()],
    "many": lambda: [{"id": i, "v": i * 0.5} for i in range(10_000)],
    "long": lambda: [[i * 0.001 for i in range(10_000)]],
    "zstd": lambda: [{"t": f"decentraland wearable {j % 37} of the collection", "n": j * 1_000_003 % 65_521}
                     for j in range(2000)],
    "lossy": lambda: [_quantized(math.sin(j * 0.7) * 100.0) for j in range(300)],
    "empty": lambda: [],
    "nulls": lambda: [None, None, None],
    "mixed": lambda: [True, False, 1, 2.5, "x", None, [1], {"a": 1}],
    "numeric": lambda: [str(j * 1000 - 7000) for j in range(200)],
    "hex": lambda: [f"0x{j * 2654435761 % 4294967296:08x}" for j in range(200)],
    "dict": lambda: [["alpha", "beta", "gamma"][j % 3] for j in range(200)],
    "text": lambda: [f"héllo wörld number {j} of many" for j in range(200)],
    "ints": lambda: [-(1 << 63) + j if j % 97 == 0 else j % 5 for j in range(3000)],
    "coords": lambda: [-69.99693762899992 + j * 1e-6 for j in range(3000)],
    "specials": lambda: [SPECIALS[j % len(SPECIALS)] for j in range(90)],
    "runs": lambda: [j // 300 for j in range(4000)],
    "random": lambda: [f64(_splitmix(j)) for j in range(300)],
    "split": lambda: [math.sin(j * 0.7) * 100.0 for j in range(1000)],
}


def rust_group(name):
    return (GROUPS / f"{name}.bin").read_bytes()


def document(group, *, flags=1, nested=False):
    """A document whose root (or, nested, the only element of the root array) is a packed
    array holding `group`."""
    block = varint(len(group)) + group
    if not nested:
        return header(root_record(1, 112, packed_tag(), 0, 112 + len(block)), flags=flags) + block
    # An array of width 8 at 112: layout, count, tag, padding to 120, the slot; block at 128.
    array = bytes([0x03, 1, 0x0E]) + bytes(5) + struct.pack("<Q", 128)
    return header(root_record(1, 112, 0x0A, 0, 128 + len(block)), flags=flags) + array + block


def packed_tag():
    return reference.PACKED


def test_rust_group_files_are_all_listed():
    assert sorted(p.stem for p in GROUPS.glob("*.bin")) == sorted(RUST_GROUPS)


@pytest.mark.parametrize("name", sorted(RUST_GROUPS))
def test_rust_groups_decode_to_their_elements(name):
    group = rust_group(name)
    expected = RUST_GROUPS[name]()
    assert same(packed.read_group(group, 0, len(group)), expected)
    assert same(loads(document(group)), expected)
    assert same(loads(document(group, nested=True)), [expected])


def test_the_groups_use_every_codec_but_split_and_pco():
    """What the Rust-written groups cover, so that a change of the writer's choices that
    drops a codec from them is noticed (split is covered by its hand-written vector)."""
    seen = set()
    originals = {name: getattr(packed, name) for name in ("read_ints", "read_floats", "read_strings")}

    def spy(name):
        def read(r, n, *args, **kwargs):
            if n and r.pos < r.end:
                seen.add(r.buf[r.pos])
            return originals[name](r, n, *args, **kwargs)
        return read

    try:
        for name in originals:
            setattr(packed, name, spy(name))
        packed.STREAM_READERS.update({packed.S_FLOAT: packed.read_floats, packed.S_STRING: packed.read_strings})
        zstd_pages = []
        unwrap = packed._unwrap_zstd
        packed._unwrap_zstd = lambda r: zstd_pages.append(r.pos) or unwrap(r)
        for name in RUST_GROUPS:
            group = rust_group(name)
            packed.read_group(group, 0, len(group))
    finally:
        for name, function in originals.items():
            setattr(packed, name, function)
        packed.STREAM_READERS.update({packed.S_FLOAT: packed.read_floats, packed.S_STRING: packed.read_strings})
        packed._unwrap_zstd = unwrap
    assert seen >= set(range(0x00, 0x07)) | {0x10, 0x12, 0x14, 0x15} | set(range(0x20, 0x25))
    assert zstd_pages


# -- (b) packed documents of real data, written by the Rust encoder ------------------------

SAMPLES = REPO / "tests" / "data" / "sample"
PACKED_DOCUMENTS = REPO / "tests" / "data" / "packed_documents"
SOURCES = {
    "decentraland_marketplace_orders": "graphql/decentraland_marketplace_orders.json",
    "countries": "geojson/countries.geojson.gz",
    "twitter": "json/twitter.json",
    "github_events": "json/github_events.json",
    "canada": "json/canada.json",
}


@pytest.mark.parametrize("path", sorted(PACKED_DOCUMENTS.glob("*.lw")), ids=lambda p: p.stem)
def test_rust_packed_documents_decode_to_their_json(path):
    source = SAMPLES / SOURCES[path.stem.removesuffix("_zstd")]
    text = gzip.decompress(source.read_bytes()) if source.suffix == ".gz" else source.read_bytes()
    data = path.read_bytes()
    assert struct.unpack_from("<H", data, 10)[0] & 1, "feature bit 0"
    assert same(loads(data), json.loads(text))


# -- (b) spec/vectors/packed/ ------------------------------------------------------------

def packed_vectors():
    return sorted(PACKED_VECTORS.glob("*.lw"))


@pytest.mark.parametrize("path", packed_vectors() or [None], ids=lambda p: p.stem if p else "none-yet")
def test_packed_vectors_decode_to_their_json(path):
    if path is None:
        pytest.skip("spec/vectors/packed/ holds no vector yet")
    expectation = vector_expectation(path)  # NAME.json, or NAME.txt for values JSON lacks
    assert expectation is not None, f"{path.name} has neither a .json nor a .txt beside it"
    expected = expectation[0]
    data = path.read_bytes()
    assert struct.unpack_from("<H", data, 10)[0] & 1, "a packed vector sets feature bit 0"
    assert same(loads(data), expected)


# -- (c) malformed groups and documents -----------------------------------------------------

def node(parent, role, name, kinds, flags=0, k=None, shapes=None):
    """A node table entry (§13.2)."""
    out = varint(parent) + bytes([role]) + varint(name) + struct.pack("<HB", kinds, flags)
    if k is not None:
        out += bytes([k])
    if shapes is not None:
        out += varint(len(shapes)) + b"".join(varint(len(s)) + b"".join(varint(i) for i in s) for s in shapes)
    return out


def chunk(pages):
    """pages: [(n, page bytes)]."""
    if not pages:
        return b""
    if len(pages) == 1:
        return varint(1) + bytes(pages[0][1])
    directory = b"".join(varint(n) + varint(len(p)) for n, p in pages)
    return varint(len(pages)) + directory + b"".join(bytes(p) for _, p in pages)


def build_group(n, keys, nodes, columns, stripes):
    """A group block (§13.2): `stripes` is [(first element, [[count, page bytes] or
    [count, [(n, page), ...]] per column])]."""
    out = bytes([1, 0]) + varint(n) + varint(len(nodes)) + varint(len(columns)) + varint(len(stripes))
    out += varint(len(keys)) + b"".join(varint(len(k.encode())) + k.encode() for k in keys)
    out += b"".join(nodes)
    out += b"".join(varint(c[0]) + bytes([c[1]]) + varint(c[2]) for c in columns)
    bodies = []
    for _, chunks in stripes:
        encoded = []
        for count, pages in chunks:
            pages = pages if pages and isinstance(pages[0], tuple) else ([(count, pages)] if count else [])
            encoded.append((count, chunk(pages)))
        bodies.append(b"".join(varint(c) + varint(len(b)) for c, b in encoded) + b"".join(b for _, b in encoded))
    offset = 0
    for (first, _), body in zip(stripes, bodies):
        out += varint(first) + varint(offset)
        offset += len(body)
    return out + b"".join(bodies)


OBJECT, INT_KIND = 1 << packed.OBJECT, 1 << packed.INT


def records_group(parent_of_field=0, page=(0x00, 1, 1, 2)):
    """[{"a": 1}, {"a": 2}]: an object root of one shape and an int field."""
    return build_group(2, ["a"], [node(0, 0, 0, OBJECT, shapes=[[0]]), node(parent_of_field, 1, 0, INT_KIND)],
                       [(1, packed.S_INT, 2)], [(0, [[2, list(page)]])])


def test_a_hand_built_group_reads():
    group = records_group()
    assert packed.read_group(group, 0, len(group)) == [{"a": 1}, {"a": 2}]
    assert loads(document(group)) == [{"a": 1}, {"a": 2}]


def check_malformed(group, message):
    with pytest.raises(FormatError, match=message):
        packed.read_group(group, 0, len(group))
    with pytest.raises(FormatError):
        loads(document(group))


def test_truncated_groups_fail():
    for name in ("records", "keyed", "residual", "zstd", "mixed", "intmap"):
        group = rust_group(name)
        for cut in range(len(group)):
            with pytest.raises(FormatError):
                packed.read_group(group, 0, cut)
        data = document(group)
        for cut in range(112, len(data), max(1, len(data) // 50)):
            with pytest.raises(FormatError):
                loads(data[:cut])


def test_bad_version_and_flags():
    group = records_group()
    check_malformed(b"\x02" + group[1:], "version")
    check_malformed(group[:1] + b"\x04" + group[2:], "unknown column group flags")
    # Bit 0 says every stripe begins with a framing byte: this group's do not.
    check_malformed(group[:1] + b"\x01" + group[2:], "framing byte|stripe|chunk")
    # Bit 1 says the tables are a zstd frame: these are not.
    check_malformed(group[:1] + b"\x02" + group[2:], "zstd")


def test_node_parent_forward_reference():
    nodes = [node(0, 0, 0, OBJECT, shapes=[[0]]), node(2, 1, 0, INT_KIND), node(1, 1, 0, INT_KIND)]
    group = build_group(2, ["a"], nodes, [(1, packed.S_INT, 2), (2, packed.S_INT, 0)], [(0, [[2, [0x01, 2]], [0, []]])])
    check_malformed(group, "parent is not an earlier node")
    check_malformed(records_group(parent_of_field=1), "parent is not an earlier node")


def test_nesting_deeper_than_three_in_a_page():
    four_deep = (0x06, 1, 0x06, 1, 0x06, 1, 0x06, 1, 0x01, 0, 0, 0, 0, 0)
    group = build_group(1, ["a"], [node(0, 0, 0, OBJECT, shapes=[[0]]), node(0, 1, 0, INT_KIND)],
                        [(1, packed.S_INT, 1)], [(0, [[1, list(four_deep)]])])
    check_malformed(group, "nested deeper than 3")


def test_zstd_page_declared_above_the_limit_in_a_group():
    page = bytes([0x30]) + varint(packed.MAX_PAGE_BYTES + 1) + bytes([3, 1, 2, 3])
    check_malformed(records_group(page=page), "exceeds the limit")


@pytest.mark.parametrize("change, message", [
    # the header and tables
    (lambda g: g[:3] + b"\x00" + g[4:], "node count"),
    (lambda g: g[:4] + b"\x02" + g[5:], "column count"),
    (lambda g: g[:5] + b"\x00" + g[6:], "stripe count"),
    (lambda g: g[:7] + b"a" + g[7:], "key count|key runs past|truncated|out of range"),
])
def test_broken_headers(change, message):
    check_malformed(change(records_group()), message)


def test_structural_rules():
    obj, arr, nul = OBJECT, 1 << packed.ARRAY, 1 << packed.NULL
    root_obj = node(0, 0, 0, obj, shapes=[[0]])
    cases = [
        # a role that does not fit the parent: an element node below an object node
        (build_group(1, ["a"], [root_obj, node(0, 2, 0, INT_KIND)], [(1, packed.S_INT, 1)],
                     [(0, [[1, [0x01, 2]]])]), "role does not fit"),
        # two nodes for one field
        (build_group(1, ["a"], [root_obj, node(0, 1, 0, INT_KIND), node(0, 1, 0, INT_KIND)],
                     [(1, packed.S_INT, 1), (2, packed.S_INT, 0)], [(0, [[1, [0x01, 2]], [0, []]])]), "two nodes"),
        # kinds with an unknown bit
        (build_group(1, [], [node(0, 0, 0, 1 << 9)], [], [(0, [])]), "kinds empty or unknown"),
        # a tuple of 17
        (build_group(1, [], [node(0, 0, 0, arr, flags=1, k=17)], [], [(0, [])]), "tuple"),
        # keyed without objects
        (build_group(1, [], [node(0, 0, 0, arr, flags=2)], [(0, packed.S_LEN, 1)], [(0, [[1, [0x01, 0]]])]), "keyed"),
        # a shape that repeats a key, a shape with an unknown key
        (build_group(1, ["a"], [node(0, 0, 0, obj, shapes=[[0, 0]])], [], [(0, [])]), "repeats a key"),
        (build_group(1, ["a"], [node(0, 0, 0, obj, shapes=[[1]])], [], [(0, [])]), "key id out of range"),
        # columns out of the node table's order
        (build_group(2, ["a"], [root_obj, node(0, 1, 0, INT_KIND)], [(1, packed.S_FLOAT, 2)],
                     [(0, [[2, [0x01, 2]]])]), "column table"),
        # a column whose values no element uses
        (build_group(1, ["a"], [root_obj, node(0, 1, 0, INT_KIND)], [(1, packed.S_INT, 2)],
                     [(0, [[2, [0x01, 2]]])]), "no element uses"),
        # a column that runs out: an array of 3 ints, and 2 ints in the column
        (build_group(1, [], [node(0, 0, 0, arr), node(0, 2, 0, INT_KIND)], [(0, packed.S_LEN, 1), (1, packed.S_INT, 2)],
                     [(0, [[1, [0x01, 6]], [2, [0x01, 2]]])]), "runs out"),
        # a kind the node does not have
        (build_group(2, [], [node(0, 0, 0, nul | INT_KIND), ], [(0, packed.S_KIND, 2), (0, packed.S_INT, 1)],
                     [(0, [[2, [0x00, 1, 0, 5]], [1, [0x01, 2]]])]), "kind not among"),
        # a stripe index that does not start at 0
        (build_group(2, ["a"], [root_obj, node(0, 1, 0, INT_KIND)], [(1, packed.S_INT, 2)],
                     [(1, [[2, [0x01, 2]]])]), "stripe index"),
        # chunk counts that fall short of the column table's
        (build_group(2, ["a"], [root_obj, node(0, 1, 0, INT_KIND)], [(1, packed.S_INT, 3)],
                     [(0, [[2, [0x01, 2]]])]), "do not add up"),
        # a page of more values than its chunk
        (build_group(2, ["a"], [root_obj, node(0, 1, 0, INT_KIND)], [(1, packed.S_INT, 2)],
                     [(0, [[2, [(1, [0x01, 2]), (2, [0x01, 2])]]])]), "page value counts"),
    ]
    for group, message in cases:
        with pytest.raises(FormatError, match=message):
            packed.read_group(group, 0, len(group))


def test_bytes_after_the_last_chunk_of_a_stripe_are_malformed():
    group = records_group() + b"\0"
    check_malformed(group, "stripe bytes after its last chunk")


def test_a_group_that_expands_past_the_budget_is_an_error():
    # [[null] * 2,000,000]: a length page of 5 bytes and an element node of no columns.
    group = build_group(1, [], [node(0, 0, 0, 1 << packed.ARRAY), node(0, 2, 0, 1 << packed.NULL)],
                        [(0, packed.S_LEN, 1)], [(0, [[1, [0x01] + list(varint(4_000_000))]])])
    check_malformed(group, "decode budget")
    small = build_group(1, [], [node(0, 0, 0, 1 << packed.ARRAY), node(0, 2, 0, 1 << packed.NULL)],
                        [(0, packed.S_LEN, 1)], [(0, [[1, [0x01] + list(varint(2_000))]])])
    assert packed.read_group(small, 0, len(small)) == [[None] * 1000]


def test_residual_errors_are_reported_in_the_document():
    group = rust_group("residual")
    at = group.index(b"LEAFWIRE")
    bad = group[:at] + b"LEAFWIRX" + group[at + 8:]
    with pytest.raises(FormatError, match="in a residual page: bad magic") as info:
        packed.read_group(bad, 0, len(bad))
    assert info.value.offset == at


def test_feature_bit_0_goes_with_tag_0x0e():
    group = records_group()
    with pytest.raises(FormatError, match="unknown tag 0x0e"):
        loads(document(group, flags=0))
    with pytest.raises(FormatError, match="unknown tag 0x0e"):
        loads(document(group, flags=0, nested=True))
    with pytest.raises(FormatError, match="unknown feature flags"):
        loads(document(group, flags=1 | 4))
    assert loads(document(group, flags=1 | 2)) == [{"a": 1}, {"a": 2}]  # with page checksums' bit
    plain = header(root_record(1, 5, reference.INT, 0, 112), flags=1)
    with pytest.raises(FormatError, match="holds no packed array"):
        loads(plain)


def test_a_packed_array_counts_for_the_nesting_limit_as_the_array_it_stands_for():
    # The element is 40 nested lists: with the packed array, 41 containers deep.
    data = document(rust_group("deep"))
    assert same(loads(data, max_depth=41), [_deep()])
    with pytest.raises(FormatError, match="nesting deeper than 40 inside a packed array"):
        loads(data, max_depth=40)
    nested = document(rust_group("deep"), nested=True)  # one array more around it
    assert same(loads(nested, max_depth=42), [[_deep()]])
    with pytest.raises(FormatError, match="nesting deeper than 41"):
        loads(nested, max_depth=41)


def test_a_packed_block_past_the_document_end():
    data = document(records_group())
    with pytest.raises(FormatError):
        loads(data[:-1])
    cut = bytearray(data)
    cut[112] += 1  # L one byte longer than the document
    with pytest.raises(FormatError):
        loads(bytes(cut))


def test_mutated_groups_are_values_or_format_errors(monkeypatch):
    """Bytes of valid groups overwritten at random: a list or a FormatError, never another
    exception. (A small budget keeps mutated lengths from decoding a million nulls.)"""
    monkeypatch.setattr(packed, "decode_budget", lambda length: 50_000)
    rng = random.Random(12)
    for name in sorted(set(RUST_GROUPS) - {"coords", "ints", "long", "many"}):  # the slow ones
        group = rust_group(name)
        for _ in range(150):
            bad = bytearray(group)
            for _ in range(rng.randint(1, 3)):
                bad[rng.randrange(len(bad))] = rng.choice([0, 0xFF, rng.randrange(256), (bad[0] + 1) & 0xFF])
            try:
                assert isinstance(packed.read_group(bytes(bad), 0, len(bad)), list)
            except FormatError:
                pass


# -- the Python package's packed documents (when the package is built) ---------------------

def _package():
    try:
        import leafwire
        leafwire.dumps  # the compiled extension is there
        return leafwire
    except (ImportError, AttributeError):
        return None


def test_package_packed_documents_read_the_same_in_the_reference_reader():
    """Random arrays of records through ``leafwire.dumps(packed=True)``: the reference
    reader gives back the value, and so does the package's own ``loads``."""
    leafwire = _package()
    if leafwire is None:
        pytest.skip("the leafwire package is not built")
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-(1 << 70), 1 << 70), st.floats(),
                        st.text(max_size=6), st.binary(max_size=3))
    values = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.sampled_from(["id", "name", "tags", "x", "y"]), inner, max_size=4),
        st.dictionaries(st.integers(-3, 3), inner, max_size=3),
    ), max_leaves=12)
    documents = st.tuples(st.lists(values, min_size=64, max_size=100), st.sampled_from([None, 3]))

    packed_documents = []

    @hypothesis.settings(max_examples=60, deadline=None, derandomize=True)
    @hypothesis.given(documents)
    def check(case):
        rows, zstd = case
        data = leafwire.dumps({"rows": rows}, packed=True, zstd=zstd)
        packed_documents.append(struct.unpack_from("<H", data, 10)[0] & 1)
        assert same(loads(data), {"rows": rows})
        assert same(leafwire.loads(data, arrays="list"), {"rows": rows})

    check()
    assert sum(packed_documents) > len(packed_documents) // 2, "most of the documents hold a packed array"
