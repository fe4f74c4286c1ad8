#!/usr/bin/env python3
"""Writes the negative test vectors of spec/vectors/invalid/ (spec §9, "Invalid vectors").

Each vector is a small document, built here byte by byte from the spec, that breaks
exactly one rule of spec §9 or one limit of §10; every other rule holds, and the root
record's CRC is recomputed, so the rule under test is what a validator trips on. Beside
each NAME.lw stands NAME.json:

    rule         the rule broken ("§9.N ...")
    category     the error category `leafwire::validate` reports
    offset       the byte offset it reports (`err.position()`): the broken field, or the
                 block (container, data block, dictionary, root record) that holds it
    description  what was broken
    decode       "error" when a reader that decodes everything (decode, to_json, a full
                 lazy walk) must fail too, because the rule is one lazy access checks on
                 the bytes it reads (§9, last paragraph); "unchecked" when only
                 validation is required to find it
    reference    present only when the reference reader (python/leafwire/reference.py)
                 accepts the vector: "not read by a decoder" (hash indexes, the
                 dictionary's hash table and spare capacity, of containers or typed
                 arrays, are never read to decode a value)
    note         anything else (optional)

Standard library only. Run from anywhere: `python3 scripts/make_invalid_vectors.py`
rewrites the directory; `--check` only compares it with what would be written.
"""

import json
import struct
import sys
import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "spec" / "vectors" / "invalid"
U64 = (1 << 64) - 1

NULL, FALSE, TRUE, INT, UINT, F64, F32, STRING, BYTES, BIGNUM, ARRAY, OBJECT, INTMAP, TYPED = range(14)
TABLE = 0x0F
BOOL, I8, I16, I32, I64, U8, U16, U32, U64E, F32E, F64E = range(11)
ELEMENT_FORMATS = "BbhiqBHIQfd"


# -- primitives (§1) --------------------------------------------------------------------

def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))


def align(p, n):
    return (p + n - 1) // n * n


def keyhash(key):
    """§4.2."""
    h = len(key) * 0x9E3779B97F4A7C15 & U64
    for i in range(0, len(key), 8):
        h = (h ^ int.from_bytes(key[i:i + 8].ljust(8, b"\0"), "little")) * 0xBF58476D1CE4E5B9 & U64
        h ^= h >> 31
    return h


def home_bucket(h, size):
    """§4.1."""
    return (h * 0x9E3779B97F4A7C15 & U64) >> (64 - (size.bit_length() - 1))


def hash_table(hashes, size):
    """Linear probing: entry i + 1 for hash i, 0 for empty."""
    table = [0] * size
    for i, h in enumerate(hashes):
        b = home_bucket(h, size)
        while table[b]:
            b = (b + 1) % size
        table[b] = i + 1
    return table


def table_size(c):
    t = 2
    while t < 2 * c:
        t *= 2
    return t


# -- the header (§2) --------------------------------------------------------------------

def record(root, tag, end, dictionary=0, generation=1, crc=None, flags=0):
    """A 48-byte root record, its CRC computed unless given."""
    head = struct.pack("<QQQQQBB2x", generation, root & U64, dictionary, end, 0, tag, flags)
    return head + struct.pack("<I", zlib.crc32(head) if crc is None else crc)


def document(body, tag, root=112, dictionary=0, record_b=bytes(48), magic=b"LEAFWIRE", major=1, flags=0):
    end = 112 + len(body)
    head = magic + struct.pack("<BBH4x", major, 0, flags)
    return head + record(root, tag, end, dictionary) + record_b + bytes(body)


def lay_out(blocks, start=112):
    """Places blocks one after the other from `start`. Each block is (name, build) with
    build(p, at) -> bytes, where p is its offset and at maps names to offsets; laid out
    twice so that blocks may refer to later ones. Returns (body, at)."""
    at = {}
    for _ in range(2):
        body = bytearray()
        for name, build in blocks:
            at[name] = start + len(body)
            body += build(at[name], _Offsets(at))
    return bytes(body), at


class _Offsets(dict):
    def __init__(self, at):
        super().__init__(at)

    def __missing__(self, name):  # first pass: later blocks are not placed yet
        return 0


# -- blocks -----------------------------------------------------------------------------

def width_of(tag, payload):
    if tag in (STRING, BYTES, BIGNUM, ARRAY, OBJECT, INTMAP, TYPED):
        return 2
    if tag == INT:
        return next(w for w in (1, 2, 4, 8) if -(1 << (8 * w - 1)) <= payload < 1 << (8 * w - 1))
    return {UINT: 8, F64: 8, F32: 4}.get(tag, 1)


def container(p, children, kind=ARRAY, w=None, keys=(), k=None, capacity=None,
              index=None, layout=None, count=None, tweak_index=None):
    """A container block at offset p (§4). children: (tag, payload) pairs; keys: key ids
    (objects) or integers (intmaps); index: the hashes to index the children by."""
    n = len(children)
    c = n if capacity is None else capacity
    if w is None:
        w = max((width_of(t, v) for t, v in children), default=1)
    if k is None:
        k = 0 if kind == ARRAY else max((width_of(INT, key) for key in keys), default=1)
    if layout is None:
        layout = (w.bit_length() - 1) | (max(k, 1).bit_length() - 1) << 2
        layout |= (0x10 if capacity is not None else 0) | (0x20 if index is not None else 0)
    out = bytearray([layout]) + varint(n if count is None else count)
    if capacity is not None:
        out += varint(capacity)
    out += bytes(t for t, _ in children) + bytes(c - n)
    for key in keys:
        out += key.to_bytes(k, "little", signed=kind == INTMAP)
    out += bytes(k * (c - n)) + bytes(align(p + len(out), w) - p - len(out))
    for t, v in children:
        out += v.to_bytes(w, "little", signed=(t == INT and v < 0))
    out += bytes(w * (c - n))
    if index is not None:
        entry = 1 if c < 255 else 2 if c < 65535 else 4
        table = hash_table(index, table_size(c))
        if tweak_index:
            tweak_index(table)
        out += bytes(align(p + len(out), entry) - p - len(out))
        out += b"".join(e.to_bytes(entry, "little") for e in table)
    return bytes(out)


def data(content):
    """A string, bytes or bignum block (§5.1)."""
    return varint(len(content)) + content


def typed(p, element, shape, values=None, raw=None, rank=None, mask=None, spare_rows=None):
    """A typed array block at offset p (§5.2); `raw` replaces the packed values."""
    fmt = ELEMENT_FORMATS[element]
    size = struct.calcsize(fmt)
    if rank is None:
        rank = len(shape) | (0x40 if mask is not None else 0) | (0x80 if spare_rows is not None else 0)
    out = bytearray([element, rank]) + b"".join(varint(d) for d in shape)
    if spare_rows is not None:
        out += varint(spare_rows)
    out += bytes(align(p + len(out), size) - p - len(out))
    out += raw if raw is not None else struct.pack(f"<{len(values)}{fmt}", *values)
    if mask is not None:
        out += bytes(mask)
    return bytes(out)


def dictionary(keys, capacity=None, size=None, offsets=None, blob=None, tweak_table=None):
    """A key dictionary (§6) holding `keys` in this order (ids are positions)."""
    c = len(keys) if capacity is None else capacity
    if offsets is None:
        offsets = [0]
        for key in keys:
            offsets.append(offsets[-1] + len(key))
        offsets += [offsets[-1]] * (c - len(keys))
    if blob is None:
        blob = b"".join(keys)
    t = table_size(c) if size is None else size
    table = hash_table([keyhash(key) for key in keys], t) if t and t & (t - 1) == 0 else [0] * t
    if tweak_table:
        tweak_table(table)
    out = struct.pack("<IIII", len(keys), c, len(blob), t) + struct.pack(f"<{len(offsets)}I", *offsets) + blob
    out += bytes(align(len(out), 4) - len(out))
    return out + struct.pack(f"<{t}I", *table)


def object_doc(keys, children, key_ids=None, **dict_options):
    """A document whose root is an object over a dictionary at 112; returns (doc, root)."""
    d = dictionary(keys, **dict_options)
    ids = list(range(len(children))) if key_ids is None else key_ids
    body, at = lay_out([("root", lambda p, at: container(p, children, OBJECT, keys=ids, k=1))], 112 + len(d))
    return document(d + body, OBJECT, root=at["root"], dictionary=112), at["root"]


# -- a valid base document for the header cases: [1, "a"] (as in test_known_bytes) -----

def base_body():
    return lay_out([
        ("root", lambda p, at: container(p, [(INT, 1), (STRING, at["s"])])),
        ("s", lambda p, at: data(b"a")),
    ])[0]


def with_header(**options):
    return document(base_body(), ARRAY, **options)


def patched(doc, at, raw):
    return doc[:at] + raw + doc[at + len(raw):]


# -- the vectors ------------------------------------------------------------------------

VECTORS = {}


def vector(name, rule, category, offset, description, doc, decode="error", reference=None, note=None, owned=None):
    assert name not in VECTORS, name
    meta = {"rule": rule, "category": category, "offset": offset, "description": description, "decode": decode}
    if owned:  # what a reader that owns its copy (an editor, a file reader) reports instead
        meta["owned"] = {"category": owned[0], "offset": owned[1]}
    if reference:
        meta["reference"] = reference
    if note:
        meta["note"] = note
    VECTORS[name] = (doc, meta)


NOT_READ = "not read by a decoder"


def header_vectors():
    good = with_header()
    rule = "§9.1 header"
    vector("header_bad_magic", rule, "Malformed", 0, "the magic is LEAFWIRX", patched(good, 0, b"LEAFWIRX"))
    vector("header_major_version_2", rule, "Unsupported", 8, "major version 2", patched(good, 8, b"\x02"))
    vector("header_unknown_flag", rule, "Unsupported", 10,
           "feature flag bit 2 (reserved) is set", patched(good, 10, b"\x04\x00"))
    end = len(good)
    bad_a = record(112, ARRAY, end, crc=zlib.crc32(record(112, ARRAY, end)[:44]) ^ 1)
    bad_b = record(112, ARRAY, end, generation=2, crc=0)
    vector("header_both_records_bad_crc", rule, "Malformed", 16,
           "record A (generation 1) and record B (generation 2) both fail their CRC",
           patched(patched(good, 16, bad_a), 64, bad_b))
    vector("header_no_record_in_use", rule, "Malformed", 16,
           "both root records have generation 0 (unused), with correct CRCs",
           patched(good, 16, record(112, ARRAY, end, generation=0)))
    vector("header_truncated", rule, "Malformed", 100, "the document is cut to 100 bytes, inside the header",
           good[:100], note="a truncation is reported where the bytes run out")
    vector("header_end_past_buffer", rule, "Malformed", 16, "record A says end = buffer length + 1",
           patched(good, 16, record(112, ARRAY, end + 1)))
    vector("header_end_below_112", rule, "Malformed", 16, "record A says end = 111",
           patched(good, 16, record(112, ARRAY, 111)))
    vector("header_unknown_root_tag", rule, "Malformed", 16, "the root tag is 0x11 (reserved)",
           patched(good, 16, record(112, 0x11, end)))
    vector("header_unknown_record_flag", rule, "Unsupported", 57,
           "record A's flags byte (41) has bit 1 set, which no version defines",
           patched(good, 16, record(112, ARRAY, end, flags=2)),
           note="reported at the flags byte of the active record")
    vector("header_journal_of_borrowed_bytes", "§8.5 redo journal", "Unsupported", 16,
           "record A has the journal flag: a reader of borrowed bytes cannot apply the journal (here there is none)",
           patched(good, 16, record(112, ARRAY, end, flags=1)), owned=("Malformed", align(end, 8)),
           note="a reader that owns its copy finishes the commit instead, and reports the missing journal")
    vector("header_record_b_end_past_buffer", rule, "Malformed", 64,
           "record B (generation 2, the active record) says end = buffer length + 1; record A is valid",
           patched(good, 64, record(112, ARRAY, end + 1, generation=2)),
           note="the error is in record B, so it is reported at 64, not at record A")


def offset_vectors():
    rule = "§9.2 offsets inside [112, end)"
    body = base_body()
    vector("offset_root_outside_document", rule, "Malformed", 16,
           "the root is an array at offset 200, past end (122)",
           document(body, ARRAY, root=200),
           note="reported at the root record that holds the offset, as every root-record error")
    vector("offset_root_into_header", rule, "Malformed", 16, "the root is an array at offset 50, inside the header",
           document(body, ARRAY, root=50), note="reported at the root record that holds the offset")
    body, at = lay_out([("root", lambda p, at: container(p, [(INT, 1), (STRING, 0x7FFF)]))])
    vector("offset_child_outside_document", rule, "Malformed", 112,
           "child 1 of the root array is a string at offset 32767, past end",
           document(body, ARRAY), note="reported at the container that holds the offset")
    body, at = lay_out([("root", lambda p, at: container(p, [(INT, 1), (STRING, 50)]))])
    vector("offset_child_into_header", rule, "Malformed", 112,
           "child 1 of the root array is a string at offset 50, inside the header", document(body, ARRAY))
    vector("string_past_end", "§9.2 every block fits before end", "Malformed", 112,
           "the root string's length is 10 but 3 bytes follow", document(b"\x0aabc", STRING))
    body = bytes([0x10, 1, 100, INT]) + bytes(4)  # width 1, count 1, capacity 100: 100 tags and 100 slots
    vector("container_past_end", "§9.2 every block fits before end", "Malformed", 112,
           "the root array has capacity 100 but the document ends 8 bytes after it", document(body, ARRAY))
    for name, payload in (("typed_offset_near_u64_max", 0xFFFF_FFFF_FFFF_FFF0), ("typed_offset_u64_max", U64)):
        body, _ = lay_out([("root", lambda p, at: container(p, [(TYPED, payload)], w=8))])
        vector(name, rule, "Malformed", 112,
               f"the root array (slot width 8) holds a typed array at offset {payload:#x}", document(body, ARRAY),
               note="issue 9: near u64::MAX the typed-array header check `p + 2` wrapped and validate "
                    "panicked; reported at the container that holds the offset")


def width_vectors():
    def one(name, rule, description, children=None, decode="error", reference=None, **options):
        body, _ = lay_out([("root", lambda p, at: container(p, children or [(INT, 1)], **options))])
        vector(name, rule, "Malformed", 112, description, document(body, ARRAY), decode=decode, reference=reference)

    rule = "§9.3 tags are known"
    one("unknown_child_tag", rule, "child 0 of the root array has tag 0x11", [(0x11, 0)])
    rule = "§9.3 the layout byte (§4)"
    one("container_reserved_layout_bits", rule, "the root array's layout byte has bit 6 set", layout=0x40)
    one("array_key_width", rule, "the root array's layout byte says key width 2 (arrays have none)", layout=0x04)
    one("array_index_bit", rule, "the root array's layout byte has the hash-index bit", layout=0x20)
    d = dictionary([b"a"])
    body, at = lay_out([("root", lambda p, at: container(p, [(INT, 1)], OBJECT, keys=[0], k=8, layout=0x0C))],
                       112 + len(d))
    vector("object_key_width_8", rule, "Malformed", at["root"],
           "the root object's layout byte says key width 8 (objects use 1, 2 or 4)",
           document(d + body, OBJECT, root=at["root"], dictionary=112))
    rule = "§9.3 slot payloads fit the container's width"
    one("f64_in_width_4", rule, "an f64 child in an array of slot width 4", [(F64, 0x3FF80000)], w=4)
    one("f32_in_width_2", rule, "an f32 child in an array of slot width 2", [(F32, 0x3FC0)], w=2)
    one("uint_fits_i64", "§9.3 uint payloads (§3.1: uint is for values above i64::MAX)",
        "a uint child of value 5 in an array of slot width 8", [(UINT, 5)], w=8, decode="unchecked")
    rule = "§9.4 counts and capacities"
    one("count_above_capacity", rule, "the root array has count 3 and capacity 2", [(INT, 1), (INT, 2)],
        capacity=2, count=3)
    # layout 0x10 (width 1, a capacity), count 1, capacity 2^32, then one tag and one slot
    vector("capacity_2_pow_32", rule + " (§4, §10: a container has fewer than 2^32 positions)", "Malformed", 112,
           "the root array's capacity is 2^32", document(bytes([0x10, 1]) + varint(1 << 32) + bytes([INT, 1]), ARRAY),
           note="a document's count or capacity of 2^32 or more breaks §4 (Malformed); LimitExceeded is what "
                "a writer reports for a value with that many children")
    body, _ = lay_out([("root", lambda p, at: container(p, [(INT, 1), (INT, 2)], capacity=3))])
    body = patched(body, 5, bytes([INT]))  # layout, count, capacity, 2 tags: spare tag 2 at 112 + 5
    vector("spare_capacity_not_zero", "§9.4 spare capacity (§4: positions n..c-1 are zero)", "Malformed", 112,
           "the root array has count 2, capacity 3 and the tag byte 0x03 at spare position 2",
           document(body, ARRAY), decode="unchecked", reference=NOT_READ)


def varint_vectors():
    rule = "§9.4 varints are at most 10 bytes and fit where they are used"
    vector("varint_truncated", rule, "Malformed", 113,
           "the root string's length varint is 0x80 and the document ends after it", document(b"\x80", STRING),
           note="a truncation is reported where the bytes run out: at end")
    vector("varint_11_bytes", rule, "Malformed", 112, "the root string's length varint has 11 bytes (value 0)",
           document(b"\x80" * 10 + b"\x00", STRING))
    vector("varint_overflows_64_bits", rule, "Malformed", 113,
           "the root array's count varint has 10 bytes and a value of 2^64 + 2^63 - 1",
           document(bytes([0x00]) + b"\xff" * 9 + b"\x02", ARRAY), note="reported at the varint's first byte")


def text_vectors():
    rule = "§9.5 strings are valid UTF-8"
    vector("string_invalid_utf8", rule, "Malformed", 112, "the root string is the bytes FF FE",
           document(data(b"\xff\xfe"), STRING))
    doc, _ = object_doc([b"\xff"], [(INT, 1)])
    vector("key_invalid_utf8", "§9.5 keys are valid UTF-8", "Malformed", 112,
           "the only dictionary key is the byte FF (the hash table is consistent with it)", doc)
    rule = "§9.5 bignums are well-formed and outside the 64-bit range"
    for name, text, description, decode in (
        ("bignum_leading_zero", b"0123456789012345678901234567890", "a bignum with a leading zero", "error"),
        ("bignum_not_digits", b"12345678901234567890x", "a bignum with a letter in it", "error"),
        ("bignum_in_64_bit_range", b"12345", "the bignum 12345, which is an int", "unchecked"),
        ("bignum_u64_max", b"18446744073709551615", "the bignum 2^64-1, which is a uint", "unchecked"),
        ("bignum_i64_min", b"-9223372036854775808", "the bignum -2^63, which is an int", "unchecked"),
    ):
        vector(name, rule, "Malformed", 112, f"the root is {description}", document(data(text), BIGNUM), decode=decode)


def key_vectors():
    doc, root = object_doc([b"a"], [(INT, 1)], key_ids=[1], capacity=2)
    vector("key_id_not_below_k", "§9.6 object key ids are < K", "Malformed", root,
           "the root object uses key id 1; the dictionary has K = 1 key and room (capacity) for 2", doc)
    doc, root = object_doc([b"a"], [(INT, 1), (INT, 2)], key_ids=[0, 0])
    vector("object_duplicate_key", "§9.6 keys within a container are distinct", "Malformed", root,
           "the root object has key id 0 twice", doc, decode="unchecked")
    body, _ = lay_out([("root", lambda p, at: container(p, [(INT, 1), (INT, 2)], INTMAP, keys=[7, 7]))])
    vector("intmap_duplicate_key", "§9.6 keys within a container are distinct", "Malformed", 112,
           "the root intmap has key 7 twice", document(body, INTMAP), decode="unchecked")

    keys = [-4, 0, 3, 9, 17, 100, 1000, -77, 5]
    hashes = [k & U64 for k in keys]
    children = [(INT, i) for i in range(len(keys))]
    rule = "§9.6 the hash index satisfies §4.1"

    def intmap_with(tweak):
        body, _ = lay_out([("root", lambda p, at: container(p, children, INTMAP, keys=keys, index=hashes,
                                                             tweak_index=tweak))])
        return document(body, INTMAP)

    def drop_one(table):
        table[table.index(4)] = 0

    def extra(table):
        table[table.index(0)] = len(keys) + 1

    def misplace(table):
        b = table.index(1)  # child 0: move its entry past an empty bucket
        table[b] = 0
        e = next(x % len(table) for x in range(b + 1, b + 1 + len(table)) if table[x % len(table)] == 0)
        table[e] = 1

    for name, tweak, description in (
        ("hash_index_missing_entry", drop_one, "the intmap's hash index lacks child 3"),
        ("hash_index_names_child_past_count", extra, "an empty bucket of the intmap's hash index names child 9 of 9"),
        ("hash_index_entry_unreachable", misplace,
         "child 0's entry sits past an empty bucket, out of reach from its home bucket"),
    ):
        vector(name, rule, "Malformed", 112, description + " (9 children, an indexed intmap)", intmap_with(tweak),
               decode="unchecked", reference=NOT_READ)


def dictionary_vectors():
    rule = "§9.7 the dictionary satisfies §6"
    two = [b"a", b"b"]
    children = [(INT, 1), (INT, 2)]

    d = dictionary([b"a"])
    body, at = lay_out([("root", lambda p, at: container(p, [(INT, 1)], OBJECT, keys=[0], k=1))], 114 + len(d))
    vector("dict_offset_unaligned", rule, "Malformed", 114, "the dictionary is at offset 114, not a multiple of 4",
           document(bytes(2) + d + body, OBJECT, root=at["root"], dictionary=114),
           note="reported at the dictionary's offset")
    body, at = lay_out([("root", lambda p, at: container(p, [], OBJECT))])
    vector("dict_offset_outside_document", rule, "Malformed", 16,
           "the root record names a dictionary at offset 4096, past end",
           document(body, OBJECT, dictionary=4096),
           note="reported at the root record that holds the offset")
    doc, _ = object_doc(two, children)
    vector("dict_count_above_capacity", rule, "Malformed", 112, "the dictionary has K = 2 and C = 1",
           patched(doc, 116, struct.pack("<I", 1)))
    doc, _ = object_doc(two, children, size=0)
    vector("dict_capacity_past_end", "§9.4 counts consistent with the bytes available", "Malformed", 112,
           "the dictionary (no hash table) has capacity 2^28: its offsets would run past end",
           patched(doc, 116, struct.pack("<I", 1 << 28)))
    doc, _ = object_doc(two, children, offsets=[0, 1, 0], blob=b"ab")
    vector("dict_offsets_decreasing", rule, "Malformed", 132, "the dictionary's offsets are [0, 1, 0] (key 1 would end before it starts)", doc,
           note="reported at offsets[1], where key 1 starts")
    doc, _ = object_doc([b"a\0"], [(INT, 1)], offsets=[0, 2], blob=b"a")  # hashed as the "a\0" it reads
    vector("dict_offset_past_key_bytes", rule, "Malformed", 128,
           "key 0 ends at offsets[1] = 2 but the key bytes are B = 1 long (it reaches into the padding)", doc,
           decode="unchecked", note="reported at offsets[0], where key 0 starts")
    doc, _ = object_doc([b"a", b"a"], children)
    vector("dict_duplicate_keys", rule, "Malformed", 112,
           "the dictionary holds \"a\" twice (ids 0 and 1); its hash table is consistent", doc, decode="unchecked")
    doc, _ = object_doc([b"a", b"a"], children, size=0)
    vector("dict_duplicate_keys_no_table", rule, "Malformed", 112,
           "the dictionary (no hash table, T = 0) holds \"a\" twice", doc, decode="unchecked")

    rule = "§9.11 the dictionary's hash table satisfies §6"
    doc, _ = object_doc(two, children, size=6)
    vector("dict_table_size_not_power_of_two", rule, "Malformed", 112, "C = 2 and the table size is 6", doc,
           reference=NOT_READ)
    doc, _ = object_doc([b"a", b"b", b"c"], children + [(INT, 3)], size=4)
    vector("dict_table_size_below_2c", rule, "Malformed", 112, "C = 3 and the table size is 4 (< 2·C)", doc,
           reference=NOT_READ)
    d = dictionary([], size=1)
    body, at = lay_out([
        ("root", lambda p, at: container(p, [(OBJECT, at["o"]), (STRING, at["s"])])),
        ("o", lambda p, at: container(p, [], OBJECT)),
        ("s", lambda p, at: data(b"x")),
    ], 112 + len(d))
    vector("dict_table_size_1", rule, "Malformed", 112,
           "K = C = 0 and the table size is 1; the root is [{}, \"x\"]",
           document(d + body, ARRAY, root=at["root"], dictionary=112), reference=NOT_READ,
           note="issue 9: a one-bucket table passed validation and the first key lookup (here, in the "
                "empty object) shifted by 64; the table size is 0 or a power of two >= max(2, 2·C)")
    doc, _ = object_doc([b"a"], [(INT, 1)], size=1)
    vector("dict_table_size_1_one_key", rule, "Malformed", 112, "K = C = 1 and the table size is 1", doc,
           reference=NOT_READ)
    d_len = 16 + 4 * 3 + 4  # header, offsets, key bytes "ab" padded to 4
    doc, _ = object_doc(two, children, tweak_table=lambda t: t.__setitem__(t.index(2), 0))
    vector("dict_table_missing_key", rule, "Malformed", 112 + d_len,
           "the dictionary's hash table lacks key 1", doc, decode="unchecked", reference=NOT_READ,
           note="reported at the table")

    def misplace(table):
        b = table.index(1)
        table[b] = 0
        e = next(x % len(table) for x in range(b + 1, b + 1 + len(table)) if table[x % len(table)] == 0)
        table[e] = 1

    doc, _ = object_doc(two, children, tweak_table=misplace)
    vector("dict_table_entry_unreachable", rule, "Malformed", 112 + d_len,
           "key 0's entry sits past an empty bucket, out of reach from its home bucket", doc,
           decode="unchecked", reference=NOT_READ, note="reported at the table")
    doc, _ = object_doc(two, children, tweak_table=lambda t: t.__setitem__(t.index(0), 3))
    vector("dict_table_names_id_past_count", rule, "Malformed", 112 + d_len,
           "an empty bucket of the dictionary's hash table names id 2 of K = 2", doc,
           decode="unchecked", reference=NOT_READ, note="reported at the table")


def typed_vectors():
    def one(name, rule, description, decode="error", reference=None, note=None, **options):
        vector(name, rule, "Malformed", 112, description, document(typed(112, **options), TYPED),
               decode=decode, reference=reference, note=note)

    rule = "§9.8 typed arrays"
    vector("typed_unknown_element", rule, "Malformed", 112, "element type 11, rank 1, shape [1], one data byte",
           document(bytes([11, 1, 1, 7]), TYPED))
    one("typed_rank_0", rule, "rank 0", element=U8, shape=[], raw=b"")
    one("typed_rank_33", rule + " (§10: rank at most 32)", "rank 33, every dimension 1",
        element=U8, shape=[1] * 33, raw=b"\x07")
    one("typed_shape_overflows_u64", rule, "a u8 array of shape [2, 2^63]: the element count overflows u64",
        element=U8, shape=[2, 1 << 63], raw=b"")
    one("typed_shape_more_rows_than_bytes", rule + " (§5.2 partial products)",
        "an f64 array of shape [2^40, 0]: more rows than the document has bytes",
        element=F64E, shape=[1 << 40, 0], raw=b"")
    one("typed_zero_dim_huge_product", rule + " (§5.2 product of the non-zero dimensions)",
        "an f64 array of shape [0, 2^33, 2^33]: no element, but the non-zero dimensions multiply to 2^66",
        element=F64E, shape=[0, 1 << 33, 1 << 33], raw=b"",
        note="issue 9: the row stride overflowed (a panic in debug builds); the non-zero dimensions "
             "times the element size must stay below 2^63 bytes, so every stride fits numpy's intp")
    one("typed_data_past_end", rule, "an f64 array of shape [4] with 2 elements of data before end",
        element=F64E, shape=[4], values=[1.5, 2.5])
    one("typed_spare_rows_past_end", rule, "an f64 array of shape [2] with 1000 spare rows past end",
        element=F64E, shape=[2], values=[1.5, 2.5], spare_rows=1000, reference=NOT_READ)
    one("typed_bool_2", rule, "a bool array holding the byte 2", element=BOOL, shape=[3], values=[1, 2, 0],
        decode="unchecked")
    one("typed_mask_on_i32", rule + " (§5.2 only f64 carries a mask)", "an i32 array with the mask bit",
        element=I32, shape=[2], values=[1, 2], mask=[0b11])
    one("typed_mask_with_capacity", rule + " (§5.2 mask and capacity exclude each other)",
        "an f64 array with both the mask bit and the capacity bit", element=F64E, shape=[2],
        values=[1.0, 2.0], mask=[0b11], spare_rows=0)
    one("typed_masked_not_integer", rule + " (§5.2 masked elements are integers)",
        "an f64 array [1, 2.5] whose mask marks both elements", element=F64E, shape=[2], values=[1.0, 2.5],
        mask=[0b11], decode="unchecked")
    one("typed_masked_above_2_53", rule + " (§5.2 masked elements have |v| <= 2^53)",
        "an f64 array [2^54] whose mask marks the element", element=F64E, shape=[1], values=[2.0 ** 54],
        mask=[0b1], decode="unchecked")


def tree_vectors():
    rule = "§9.9 the value is a tree"
    body, _ = lay_out([("root", lambda p, at: container(p, [(ARRAY, 112)]))])
    vector("cycle", rule, "Malformed", 112, "the root array's only child is the root array itself",
           document(body, ARRAY))
    body, at = lay_out([
        ("root", lambda p, at: container(p, [(ARRAY, at["a"]), (ARRAY, at["a"])])),
        ("a", lambda p, at: container(p, [(INT, 7)])),
    ])
    vector("shared_subtree", rule, "Malformed", at["a"], "both children of the root array point at one array [7]",
           document(body, ARRAY), decode="unchecked", note="reported at the block reached twice")
    body, at = lay_out([
        ("root", lambda p, at: container(p, [(STRING, at["s"]), (STRING, at["s"])])),
        ("s", lambda p, at: data(b"leaf")),
    ])
    vector("shared_string", rule, "Malformed", at["s"], "both children of the root array point at one string",
           document(body, ARRAY), decode="unchecked", note="reported at the block reached twice")
    body, at = lay_out([
        ("root", lambda p, at: container(p, [(STRING, at["s"]), (STRING, at["s"] + 2)])),
        ("s", lambda p, at: data(b"x\x02hi")),
    ])
    vector("overlapping_blocks", rule, "Malformed", at["s"] + 2,
           "the root array holds the string \"x\\u0002hi\" and the string \"hi\" that starts inside it",
           document(body, ARRAY), decode="unchecked", note="reported at the later of the two blocks")

    blocks = [(f"a{i}", (lambda i: lambda p, at: container(p, [(ARRAY, at[f"a{i + 1}"])]))(i)) for i in range(128)]
    blocks.append(("a128", lambda p, at: container(p, [])))
    body, at = lay_out(blocks)
    vector("nesting_129", "§9.10 nesting depth <= 128 (§10)", "DepthLimit", at["a128"],
           "129 nested arrays; the innermost is empty", document(body, ARRAY),
           note="reported at the first container deeper than the limit")

# -- tables (§15) -----------------------------------------------------------------------

def table_body(rows, columns, tweak=None):
    """A table body (§15.1) laid out by the placement rule. columns: dicts with name,
    kind (0 numbers, 1 strings), element, data (bytes: numbers, or the offsets), strings
    (the string bytes), validity (bytes or None), unit, zone. tweak(body, places) may
    change the bytes afterwards."""
    entries_end = 16 + 56 * len(columns)
    at, places = entries_end, []
    for c in columns:
        place = {"name": at}
        at += len(c["name"])
        place["zone"] = at if c.get("zone") else 0
        at += len(c.get("zone", b""))
        places.append(place)
    for c, place in zip(columns, places):
        size = struct.calcsize(ELEMENT_FORMATS[c["element"]])
        at = align(at, size)
        place["data"] = at
        at += len(c["data"])
        place["bytes"] = at if c["kind"] == 1 else 0
        at += len(c.get("strings", b""))
        place["validity"] = at if c.get("validity") is not None else 0
        at += len(c.get("validity") or b"")
    body = bytearray(at)
    body[0:16] = struct.pack("<QII", rows, len(columns), 0)
    for i, (c, place) in enumerate(zip(columns, places)):
        e = 16 + 56 * i
        flags = 1 if c.get("validity") is not None else 0
        body[e:e + 56] = struct.pack("<BBBBIQQQQQII", c["kind"], c["element"], flags, c.get("unit", 0), len(c["name"]),
                                     place["name"], place["data"], place["bytes"], place["validity"], place["zone"],
                                     len(c.get("zone", b"")), 0)
        for key, content in (("name", c["name"]), ("zone", c.get("zone", b"")), ("data", c["data"]),
                             ("bytes", c.get("strings", b"")), ("validity", c.get("validity") or b"")):
            body[place[key]:place[key] + len(content)] = content
    if tweak:
        tweak(body, places)
    return bytes(body)


def table_block(p, body, length=None):
    head = varint(len(body) if length is None else length)
    return head + bytes(align(p + len(head), 8) - p - len(head)) + body


def numbers(name, fmt, values, validity=None, unit=0, zone=b""):
    element = ELEMENT_FORMATS.index(fmt) if fmt != "?" else BOOL
    return {"name": name, "kind": 0, "element": element, "data": struct.pack(f"<{len(values)}{fmt if fmt != '?' else 'B'}", *values),
            "validity": validity, "unit": unit, "zone": zone}


def strings(name, cells, validity=None, offsets=None):
    data = b"".join(cells)
    if offsets is None:
        offsets = [0]
        for c in cells:
            offsets.append(offsets[-1] + len(c))
    return {"name": name, "kind": 1, "element": U32, "data": struct.pack(f"<{len(offsets)}I", *offsets),
            "strings": data, "validity": validity}


def table_vectors():
    rule = "§9 tables (§15.1)"
    # Every vector: the root is a table at 112, body at 120 (a one-byte length), first entry at 136.
    body_at, entry0 = 120, 136

    def one(name, description, rows, columns, offset, decode="unchecked", tweak=None, length=None, category="Malformed"):
        body = table_body(rows, columns, tweak)
        vector(name, rule, category, offset, description, document(table_block(112, body, length), TABLE), decode=decode)

    ints = lambda: numbers(b"n", "q", [1, 2, 3])
    one("table_body_past_end", "the table's body length runs 64 bytes past the end of the document", 3, [ints()],
        112, decode="error", length=len(table_body(3, [ints()])) + 64)
    one("table_rows_exceed_body", "the head says 2^40 rows, more than the body has bits", 1 << 40, [ints()],
        body_at, decode="error")
    one("table_unknown_kind", "column 0 has kind 2", 3, [ints()], entry0, decode="error",
        tweak=lambda b, _: b.__setitem__(entry0 - body_at, 2))
    one("table_unit_needs_i32", "a date column (unit 1) of i64 elements", 3, [numbers(b"d", "q", [1, 2, 3], unit=1)],
        entry0, decode="error")
    one("table_buffer_misplaced", "column 0's name is said to start one byte later than the placement rule puts it",
        3, [ints()], entry0, tweak=lambda b, p: b.__setitem__(slice(24, 32), struct.pack("<Q", p[0]["name"] + 1)))
    one("table_offsets_decrease", "string offsets 0, 3, 2, 5", 3, [strings(b"s", [b"abc", b"", b"de"], offsets=[0, 3, 2, 5])],
        entry0, decode="error")
    one("table_string_not_utf8", "string cell 1 is the byte 0xFF", 2, [strings(b"s", [b"ok", b"\xff"])], entry0, decode="error")
    one("table_duplicate_names", "two columns named n", 3, [ints(), ints()], entry0 + 56)
    one("table_missing_row_holds_number", "row 1 is missing (validity 0b101) but holds 2", 3,
        [numbers(b"n", "q", [1, 2, 3], validity=bytes([0b101]))], entry0)
    one("table_validity_past_rows", "validity bits past row 3 are set", 3, [numbers(b"n", "q", [1, 2, 3], validity=bytes([0xFF]))], entry0)
    one("table_zone_on_plain_column", "an i64 column of unit 0 carries the zone UTC", 3, [numbers(b"n", "q", [1, 2, 3], zone=b"UTC")], entry0)
    one("table_bool_2", "a bool column holds the byte 2", 3, [numbers(b"b", "?", [1, 2, 0])], entry0)
    one("table_reserved_not_zero", "the head's reserved field is 1", 3, [ints()], 112,
        tweak=lambda b, _: b.__setitem__(slice(12, 16), struct.pack("<I", 1)))
    one("table_padding_not_zero", "a padding byte between the name and the data is 0x01", 3, [ints()], body_at + 16 + 56 + 1,
        tweak=lambda b, p: b.__setitem__(16 + 56 + 1, 1))
    vector("table_body_longer_than_columns", rule, "Malformed", body_at, "the body has 8 bytes after the last buffer",
           document(table_block(112, table_body(3, [ints()]) + bytes(8)), TABLE), decode="unchecked")


def build():
    VECTORS.clear()
    header_vectors()
    offset_vectors()
    width_vectors()
    varint_vectors()
    text_vectors()
    key_vectors()
    dictionary_vectors()
    typed_vectors()
    tree_vectors()
    table_vectors()
    return {name: (doc, json.dumps(meta, indent=2, ensure_ascii=False) + "\n") for name, (doc, meta) in VECTORS.items()}


def main():
    files = build()
    check = "--check" in sys.argv[1:]
    wanted = {f"{name}{ext}" for name in files for ext in (".lw", ".json")}
    present = {p.name for p in OUT.iterdir()} if OUT.is_dir() else set()
    problems = sorted(present - wanted)
    if not check:
        OUT.mkdir(parents=True, exist_ok=True)
        for stale in problems:
            (OUT / stale).unlink()
        problems = []
    for name, (doc, meta) in sorted(files.items()):
        for path, content in ((OUT / f"{name}.lw", doc), (OUT / f"{name}.json", meta.encode())):
            if check:
                if not path.exists() or path.read_bytes() != content:
                    problems.append(path.name)
            else:
                path.write_bytes(content)
    if problems:
        sys.exit(f"spec/vectors/invalid differs from the generator: {', '.join(problems)}")
    print(f"{'checked' if check else 'wrote'} {len(files)} vectors in {OUT}")


if __name__ == "__main__":
    main()
