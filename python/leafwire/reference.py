"""Pure-Python reference reader for Leafwire 1.0, the executable companion of spec/SPEC.md.

It decodes a whole document into plain Python values and is written to be read next to
the spec: one small method per block kind, every multi-byte field decoded explicitly as
little-endian with ``struct``. It is the oracle that the Rust core and the Python
bindings are diffed against, so it favours clarity over speed.

It rejects every document whose value the rules of spec §9 decide: the header (§2),
offsets and block bounds, container headers, tags and slot widths, varints, UTF-8,
bignums, key ids and distinct keys, typed array headers and elements, a tree without
shared or overlapping blocks, and a nesting limit (§10). It is still not a validator: it
never reads what a decoder does not need, so hash indexes (§4.1), the dictionary's hash
table (§6), spare capacity (§8), padding and reserved bytes go unchecked (the negative
vectors in spec/vectors/invalid/ that break only those say "not read by a decoder"). A
budget keeps hostile input from hanging it: a document cannot yield more values, typed
array elements and empty rows of empty typed arrays than it has bytes (only a cyclic or
shared subtree runs into it before the tree check at the end).

Packed arrays and objects (tags 0x0E and 0x10, feature bit 0, spec §13) are read by
packed.py beside this file, imported on the first packed value met (zstandard is needed only for pages with a
zstd stage).

Tables (tag 0x0F, spec §15) are read with every rule of §15.1 checked (bounds against
the body and the document, every position against the placement rule, reserved fields,
flags and padding zero, string offsets, UTF-8, bools, missing cells, bitmap bits).

Streams (spec §14) are read by ``iter_stream``: the header, every frame's length and CRC,
the key table, vector frames, and value frames decoded by the same code as documents
(each frame's section read as a document whose object keys are the stream's).

Python mapping: null -> None, false/true -> bool, int/uint/bignum -> int, f64 and f32
-> float (binary32 widened), string -> str, bytes -> bytes, array -> list, object ->
dict (insertion order), intmap -> dict with int keys, typed array -> nested lists
(row-major; masked f64 elements -> int), packed array -> list, table -> dict from column
name to the list of its cells (§15.2: None when missing, bool elements -> bool, numbers
as int/float, dates and date-times as their integer counts; with ``dates="text"``, as
their §15.2 JSON text instead).
"""

import importlib.util
import math
import os
import re
import struct
import zlib
from decimal import Decimal

__all__ = ["FormatError", "MAX_DEPTH", "iter_stream", "load", "loads"]

MAGIC = b"LEAFWIRE"
HEADER_SIZE = 112
RECORD_OFFSETS = (16, 64)  # root records A and B, 48 bytes each
MAX_DEPTH = 128  # §10: nesting depth of containers

# §3.1 type tags.
NULL, FALSE, TRUE, INT, UINT, F64, F32, STRING, BYTES, BIGNUM, ARRAY, OBJECT, INTMAP, TYPED, PACKED, TABLE, PACKED_OBJECT = range(17)

# §2.1 feature flags: bit 0 packed arrays (§13); bit 1 page checksums (§2.3), which this
# reader does not check.
FLAG_PACKED, FLAG_CHECKSUMS = 1, 2

# §5.2 element codes 0..10 -> struct format character; the size follows from it.
ELEMENT_FORMATS = "BbhiqBHIQfd"
BOOL_ELEMENT, F64_ELEMENT = 0, 10

SIGNED_FORMATS = {1: "b", 2: "h", 4: "i", 8: "q"}  # upper case is the unsigned twin
BIGNUM_TEXT = re.compile(rb"-?[1-9][0-9]*")


class FormatError(ValueError):
    """A document the reference reader cannot decode; ``offset`` is the byte at fault."""

    def __init__(self, offset, message):
        super().__init__(f"{message} (at byte offset {offset})")
        self.offset = offset
        self.message = message


def load(fp, *, max_depth=MAX_DEPTH, dates="counts"):
    """Decode the Leafwire document read from the binary file object ``fp``."""
    return loads(fp.read(), max_depth=max_depth, dates=dates)


def loads(data, *, max_depth=MAX_DEPTH, dates="counts"):
    """Decode a whole Leafwire document (bytes-like) to Python values. ``dates``: how the
    date and date-time cells of tables come out, ``"counts"`` (the value of §15.2: days,
    or seconds...nanoseconds since the epoch) or ``"text"`` (their JSON text, §15.2)."""
    if dates not in ("counts", "text"):
        raise ValueError('dates must be "counts" or "text"')
    doc = bytes(data)
    record, dictionary, end, root_tag = _active_record(doc)
    packed = struct.unpack_from("<H", doc, 10)[0] & FLAG_PACKED != 0
    reader = _Reader(doc[:end], dictionary, max_depth, packed)  # bytes past `end` are ignored
    reader.dates_as_text = dates == "text"
    try:
        root = reader.slot(record + 8, 8, root_tag)  # §2.2: the root is a slot of width 8
        value = reader.value(root_tag, root, record + 40, 0)
    except RecursionError:
        raise FormatError(record, "nesting too deep for Python's recursion limit") from None
    if packed and not reader.packed_blocks:
        raise FormatError(10, "feature bit 0 set but the document holds no packed array")
    blocks = sorted(reader.blocks)  # §9.9: a tree, so no block is reached twice or overlaps
    for (_, end), (start, _) in zip(blocks, blocks[1:]):
        if start < end:
            raise FormatError(start, "shared or overlapping blocks")
    return value


def root_tag(data):
    """The tag of a document's root value (§2.2), its header checked as ``loads`` checks it."""
    return _active_record(bytes(data))[3]


def _active_record(doc):
    """§2.1-2.2: check the header; return (record offset, dictionary, end, root tag)."""
    if len(doc) < HEADER_SIZE:
        raise FormatError(len(doc), "truncated header: a document has at least 112 bytes")
    if doc[:8] != MAGIC:
        raise FormatError(0, "bad magic: not a Leafwire document")
    major, _minor, flags = struct.unpack_from("<BBH", doc, 8)
    if major != 1:
        raise FormatError(8, f"unsupported major version {major}")
    if flags & ~(FLAG_PACKED | FLAG_CHECKSUMS):
        raise FormatError(10, f"unknown feature flags 0x{flags:04x}")
    valid = []
    for at in RECORD_OFFSETS:
        generation, crc = struct.unpack_from("<Q36xI", doc, at)
        if generation != 0 and zlib.crc32(doc[at:at + 44]) == crc:
            valid.append((generation, at))
    if not valid:
        raise FormatError(16, "no valid root record")
    _, at = max(valid, key=lambda record: record[0])  # on a tie, record A
    dictionary, end, _garbage, root_tag, flags = struct.unpack_from("<QQQBBxx", doc, at + 16)
    if flags or doc[at + 42:at + 44] != b"\0\0":  # §8.5: a journal is applied by a file's reader
        raise FormatError(at + 41, "unfinished commit (journal flag) or unknown record flags")
    if not HEADER_SIZE <= end <= len(doc):
        raise FormatError(at + 24, f"end {end} outside [112, {len(doc)}]")
    if dictionary and (dictionary % 4 or not HEADER_SIZE <= dictionary < end):
        raise FormatError(at + 16, f"dictionary offset {dictionary} misplaced")
    return at, dictionary, end, root_tag


_PACKED_MODULE = None


def _packed_module():
    """packed.py, imported on first use: as ``leafwire.packed`` inside the package, or
    from its path beside this file when this file was itself loaded by path (the tests)."""
    global _PACKED_MODULE
    if _PACKED_MODULE is None:
        if __package__:
            from . import packed as module
        else:
            path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "packed.py")
            spec = importlib.util.spec_from_file_location(__name__ + "_packed", path)
            module = importlib.util.module_from_spec(spec)
            module.FormatError, module.loads, module.root_tag = FormatError, loads, root_tag
            module.MAX_DEPTH, module.TAG_ARRAY = MAX_DEPTH, ARRAY
            spec.loader.exec_module(module)
        _PACKED_MODULE = module
    return _PACKED_MODULE


def _nesting(value):
    """Containers (lists and dicts) on the deepest path of a decoded value, itself included."""
    if isinstance(value, list):
        return 1 + max(map(_nesting, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_nesting, value.values()), default=0)
    return 0


def _align(p, n):
    return (p + n - 1) // n * n


def _nest(flat, shape):
    """Row-major flat list -> nested lists of `shape` (one level of lists per axis)."""
    if len(shape) == 1:
        return flat
    row = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * row:(i + 1) * row], shape[1:]) for i in range(shape[0])]


class _Reader:
    """Decodes values of one document; `doc` is already cut at `end`."""

    def __init__(self, doc, dictionary, max_depth, packed):
        self.doc = doc
        self.dictionary = dictionary
        self.max_depth = max_depth
        self.packed = packed  # feature bit 0: tag 0x0E may occur
        self.packed_blocks = 0
        self.dates_as_text = False  # table date and date-time cells as text (§15.2)
        self.budget = len(doc)  # values, typed elements and empty rows still allowed
        self.blocks = []  # (start, end) of every block read

    # -- primitive reads: every one is bounds-checked and raises FormatError ------------

    def unpack(self, fmt, p):
        try:
            return struct.unpack_from("<" + fmt, self.doc, p)
        except (struct.error, OverflowError):  # OverflowError: p beyond any buffer size
            raise FormatError(p, "read past the end of the document") from None

    def take(self, p, n):
        if n < 0 or p + n > len(self.doc):
            raise FormatError(p, f"{n}-byte block runs past the end of the document")
        return self.doc[p:p + n]

    def integer(self, p, width, signed):
        fmt = SIGNED_FORMATS[width]
        return self.unpack(fmt if signed else fmt.upper(), p)[0]

    def varint(self, p):
        """§1: unsigned LEB128, at most 10 bytes; returns (value, offset after it)."""
        value = 0
        for i in range(10):
            (byte,) = self.unpack("B", p + i)
            value |= (byte & 0x7F) << (7 * i)
            if byte < 0x80 and value < 1 << 64:
                return value, p + i + 1
        raise FormatError(p, "varint longer than 10 bytes or over 64 bits")

    def utf8(self, p, n):
        try:
            return self.take(p, n).decode("utf-8")
        except UnicodeDecodeError as error:
            raise FormatError(p + error.start, "invalid UTF-8") from None

    def slot(self, p, width, tag):
        """§3.2: the payload, sign-extended for `int`, zero-extended for other tags."""
        return self.integer(p, width, signed=(tag == INT))

    # -- values -------------------------------------------------------------------------

    def value(self, tag, payload, at, depth):
        """§3.1: the value of (tag, payload); `at` is where the tag byte lives."""
        self.budget -= 1
        if self.budget < 0:
            raise FormatError(at, "more values than bytes: shared or cyclic subtree")
        if tag in (PACKED, PACKED_OBJECT) and not self.packed:  # known tags only with feature bit 0
            raise FormatError(at, f"unknown tag 0x{tag:02x} (a packed value needs feature bit 0)")
        if STRING <= tag <= PACKED_OBJECT and payload < HEADER_SIZE:
            raise FormatError(at, f"block offset {payload} inside the header")
        if tag == NULL:
            return None
        if tag in (FALSE, TRUE):
            return tag == TRUE
        if tag in (INT, UINT):
            return payload
        if tag == F64:
            return struct.unpack("<d", payload.to_bytes(8, "little"))[0]
        if tag == F32:
            return struct.unpack("<f", (payload & 0xFFFFFFFF).to_bytes(4, "little"))[0]
        if tag == STRING:
            return self.utf8(*self.length_prefixed(payload))
        if tag == BYTES:
            return self.take(*self.length_prefixed(payload))
        if tag == BIGNUM:
            return self.bignum(payload)
        if tag in (ARRAY, OBJECT, INTMAP):
            return self.container(tag, payload, depth + 1)
        if tag == TYPED:
            return self.typed(payload)
        if tag in (PACKED, PACKED_OBJECT):
            return self.packed_value(tag, payload, depth + 1)
        if tag == TABLE:
            return self.table(payload)
        raise FormatError(at, f"unknown tag 0x{tag:02x}")

    def length_prefixed(self, p):
        """§5.1: varint length L, then L bytes; returns (content offset, L)."""
        length, q = self.varint(p)
        self.blocks.append((p, q + length))
        return q, length

    def bignum(self, p):
        """§5.1: ASCII decimal integer (Decimal avoids Python's int-from-str digit limit)."""
        q, length = self.length_prefixed(p)
        text = self.take(q, length)
        if not BIGNUM_TEXT.fullmatch(text):
            raise FormatError(q, "malformed bignum text")
        value = int(Decimal(text.decode("ascii")))
        if -(1 << 63) <= value < 1 << 64:
            raise FormatError(p, "bignum inside the 64-bit range")
        return value

    def key(self, key_id, at):
        """§6: the text of dictionary key `key_id`."""
        if self.dictionary == 0:
            raise FormatError(at, "object key but the document has no dictionary")
        count, capacity, size = self.unpack("III", self.dictionary)
        offsets = self.dictionary + 16
        start, stop = self.unpack("II", offsets + 4 * key_id)
        if not (key_id < count <= capacity and start <= stop <= size):
            raise FormatError(at, f"key id {key_id} is not a key of the dictionary")
        key_bytes = offsets + 4 * (capacity + 1)
        return self.utf8(key_bytes + start, stop - start)

    def container(self, tag, p, depth):
        """§4: array -> list, object -> dict with str keys, intmap -> dict with int keys."""
        if depth > self.max_depth:
            raise FormatError(p, f"nesting deeper than {self.max_depth}")
        (layout,) = self.unpack("B", p)
        w = 1 << (layout & 3)
        k = 0 if tag == ARRAY else 1 << (layout >> 2 & 3)
        n, q = self.varint(p + 1)
        c, q = self.varint(q) if layout & 0x10 else (n, q)
        if layout & 0xC0 or layout & 0x2C and tag == ARRAY or layout & 0x0C == 0x0C and tag == OBJECT \
                or not n <= c < 1 << 32:
            raise FormatError(p, f"invalid container header (layout 0x{layout:02x}, {n} of {c})")
        slots = _align(q + c + c * k, w)
        items = []
        for i in range(n):  # positions n..c-1 are spare capacity
            (child_tag,) = self.unpack("B", q + i)
            if tag == OBJECT:
                key_at = q + c + i * k
                items.append(self.key(self.integer(key_at, k, signed=False), key_at))
            elif tag == INTMAP:
                items.append(self.integer(q + c + i * k, k, signed=True))
            payload = self.slot(slots + i * w, w, child_tag)
            if w < {F64: 8, UINT: 8, F32: 4}.get(child_tag, 1) or child_tag == UINT and payload < 1 << 63:
                raise FormatError(q + i, f"tag 0x{child_tag:02x} in slot width {w}")
            items.append(self.value(child_tag, payload, q + i, depth))
        self.blocks.append((p, slots + c * w))
        if tag == ARRAY:
            return items
        result = dict(zip(items[0::2], items[1::2]))
        if len(result) != n:
            raise FormatError(p, "the same key twice in one container")
        return result

    def packed_value(self, tag, p, depth):
        """§13: a packed block (varint L, then L bytes of one column group) -> list, or
        dict for a packed object (§13.7). For the nesting limit it is the container it
        stands for (§9.12): at `depth`, holding its values' lists and dicts."""
        q, length = self.length_prefixed(p)
        if q + length > len(self.doc):
            raise FormatError(p, f"packed block of {length} bytes runs past the end of the document")
        self.packed_blocks += 1
        module = _packed_module()
        if tag == PACKED_OBJECT:
            value = module.read_object(self.doc, q, q + length, p)
        else:
            value = module.read_group(self.doc, q, q + length)
        if depth + _nesting(value) - 1 > self.max_depth:
            what = "object" if tag == PACKED_OBJECT else "array"
            raise FormatError(p, f"nesting deeper than {self.max_depth} inside a packed {what}")
        return value

    def typed(self, p):
        """§5.2: an N-dimensional typed array -> nested lists."""
        element, rank = self.unpack("BB", p)
        if element >= len(ELEMENT_FORMATS):
            raise FormatError(p, f"unknown element type {element}")
        fmt = ELEMENT_FORMATS[element]
        size = struct.calcsize(fmt)
        d = rank & 0x3F
        if not 1 <= d <= 32:
            raise FormatError(p + 1, f"typed array rank {d} outside 1..32")
        shape, q = [], p + 2
        for _ in range(d):
            dimension, q = self.varint(q)
            shape.append(dimension)
        if rank & 0x80:
            _spare_rows, q = self.varint(q)  # spare rows follow the data (§8)
        if rank & 0x40 and (element != F64_ELEMENT or rank & 0x80):
            raise FormatError(p + 1, "only f64 arrays without a capacity carry a mask")
        count = math.prod(shape)
        # Every element costs one unit of the budget, and so does every empty list
        # of an empty array, which has no bytes of its own; and no shape may describe
        # more rows than the document has bytes, nor strides of 2^63 bytes (§5.2).
        self.budget -= count if count else math.prod(shape[:shape.index(0)])
        if self.budget < 0 or math.prod(d for d in shape if d) * size >= 1 << 63:
            raise FormatError(p, "typed array larger than the document")
        data = _align(q, size)
        values = list(struct.unpack(f"<{count}{fmt}", self.take(data, count * size)))
        if element == BOOL_ELEMENT:
            if max(values, default=0) > 1:
                raise FormatError(data, "bool element other than 0 or 1")
            values = [v == 1 for v in values]
        mask = self.take(data + count * size, (count + 7) // 8) if rank & 0x40 else b""
        for i, v in enumerate(values):
            if mask and mask[i // 8] >> (i % 8) & 1:
                if not (abs(v) <= 2 ** 53 and v.is_integer()):
                    raise FormatError(data + 8 * i, "masked element is not an integer")
                values[i] = int(v)
        self.blocks.append((p, data + count * size + len(mask)))
        return _nest(values, shape)

    def table(self, p):
        """§15: a table block -> dict from column name to the list of its cells."""
        length, q = self.varint(p)
        b = _align(q, 8)  # the body start; positions count from it
        if b + length > len(self.doc):
            raise FormatError(p, f"table body of {length} bytes runs past the end of the document")
        if any(self.doc[q:b]):
            raise FormatError(q, "table padding is not zero")
        self.blocks.append((p, b + length))
        if length < TABLE_HEAD:
            raise FormatError(b, "table body shorter than its 16-byte head")
        rows, count, reserved = self.unpack("QII", b)
        # Checked against the body before anything is read (§15.1, Limits).
        if count > (length - TABLE_HEAD) // TABLE_ENTRY or rows > 8 * length or rows >= 1 << 63:
            raise FormatError(b, f"table of {rows} rows and {count} columns does not fit its {length}-byte body")
        if reserved:
            raise FormatError(b + 12, "table head's reserved field is not zero")

        def inside(at, n, where):
            if at + n > length:
                raise FormatError(where, "a column buffer lies outside the table body")
            return b + at

        columns = []
        for i in range(count):
            e = b + TABLE_HEAD + TABLE_ENTRY * i
            kind, element, flags, unit, name_len, name_at, data_at, bytes_at, validity_at, zone_at, zone_len, \
                reserved = self.unpack("BBBBIQQQQQII", e)
            if reserved or flags & ~1:
                raise FormatError(e, f"column {i}: reserved field or unknown flags not zero")
            if kind == 0:
                if element >= len(ELEMENT_FORMATS) or unit > 5 or (unit == 1 and element != I32_ELEMENT) \
                        or (unit >= 2 and element != I64_ELEMENT):
                    raise FormatError(e, f"column {i}: element {element} with unit {unit}")
                if bytes_at:
                    raise FormatError(e + 24, f"column {i}: bytes_at of a number column is not 0")
            elif kind == 1:
                if element not in (U32_ELEMENT, U64_ELEMENT) or unit:
                    raise FormatError(e, f"column {i}: string offsets are u32 or u64, without a unit")
            else:
                raise FormatError(e, f"column {i}: unknown column kind {kind}")
            if zone_len and unit < 2:
                raise FormatError(e + 48, f"column {i}: a time zone on a column that is not of date-times")
            if not zone_len and zone_at:
                raise FormatError(e + 40, f"column {i}: zone_at without a zone")
            if not flags & 1 and validity_at:
                raise FormatError(e + 32, f"column {i}: validity_at without a bitmap")
            name = self.utf8(inside(name_at, name_len, e), name_len)
            zone = self.utf8(inside(zone_at, zone_len, e), zone_len)
            if any(c["name"] == name for c in columns):
                raise FormatError(e, f"column {i}: duplicate column name {name!r}")
            columns.append(dict(at=e, kind=kind, element=element, validity=flags & 1, unit=unit, name=name,
                                zone=zone, name_at=name_at, zone_at=zone_at, data_at=data_at,
                                bytes_at=bytes_at, validity_at=validity_at, name_len=name_len, zone_len=zone_len))

        # The placement rule (§15.1): names and zones, then each column's buffers.
        at = TABLE_HEAD + TABLE_ENTRY * count
        for c in columns:
            if c["name_at"] != at or (c["zone_len"] and c["zone_at"] != at + c["name_len"]):
                raise FormatError(c["at"] + 8, f"column {c['name']!r}: name or zone not where the placement rule puts it")
            at += c["name_len"] + c["zone_len"]
        self.budget -= rows * count
        if self.budget < 0:
            raise FormatError(b, "table has more cells than the document has bytes")
        table = {}
        for c in columns:
            fmt = ELEMENT_FORMATS[c["element"]]
            size = struct.calcsize(fmt)
            data = _align(at, size)
            if c["data_at"] != data:
                raise FormatError(c["at"] + 16, f"column {c['name']!r}: data not where the placement rule puts it")
            if any(self.doc[b + at:b + data]):
                raise FormatError(b + at, "table padding is not zero")
            n = rows + 1 if c["kind"] == 1 else rows
            values = list(struct.unpack(f"<{n}{fmt}", self.doc[inside(data, n * size, c["at"]):b + data + n * size]))
            at = data + n * size
            if c["kind"] == 1:
                if c["bytes_at"] != at:
                    raise FormatError(c["at"] + 24, f"column {c['name']!r}: bytes not where the placement rule puts it")
                if values[0] != 0 or any(x > y for x, y in zip(values, values[1:])):
                    raise FormatError(b + data, f"column {c['name']!r}: string offsets do not start at 0 or decrease")
                strings = self.doc[inside(at, values[-1], c["at"]):b + at + values[-1]]
                cells = []
                for i in range(rows):
                    try:
                        cells.append(strings[values[i]:values[i + 1]].decode("utf-8"))
                    except UnicodeDecodeError as error:
                        raise FormatError(b + at + values[i] + error.start, f"row {i}: invalid UTF-8") from None
                at += values[-1]
            else:
                cells = values
                if c["element"] == BOOL_ELEMENT:
                    if max(cells, default=0) > 1:
                        raise FormatError(b + data, f"column {c['name']!r}: bool element other than 0 or 1")
                    cells = [v == 1 for v in cells]
                elif c["unit"] and self.dates_as_text:
                    cells = [_time_text(v, c["unit"], bool(c["zone"])) for v in cells]
            if c["validity"]:
                if c["validity_at"] != at:
                    raise FormatError(c["at"] + 32, f"column {c['name']!r}: bitmap not where the placement rule puts it")
                bitmap = self.doc[inside(at, (rows + 7) // 8, c["at"]):b + at + (rows + 7) // 8]
                at += len(bitmap)
                if rows % 8 and bitmap[-1] >> (rows % 8):
                    raise FormatError(b + at - 1, f"column {c['name']!r}: validity bits past the last row are set")
                for i in range(rows):
                    if not bitmap[i // 8] >> (i % 8) & 1:
                        if (c["kind"] == 1 and values[i] != values[i + 1]) \
                                or (c["kind"] == 0 and struct.pack("<" + fmt, values[i]) != bytes(size)):
                            raise FormatError(b + data, f"column {c['name']!r}: missing row {i} is not zero or empty")
                        cells[i] = None
            table[c["name"]] = cells
        if at != length:
            raise FormatError(b, f"table body is {length} bytes; its columns end at {at}")
        return table


TABLE_HEAD, TABLE_ENTRY = 16, 56
I32_ELEMENT, I64_ELEMENT, U32_ELEMENT, U64_ELEMENT = 3, 4, 7, 8


def _civil_from_days(days):
    """Days since 1970-01-01 -> (year, month, day), proleptic Gregorian (H. Hinnant)."""
    z = days + 719468
    era, doe = divmod(z, 146097)
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def _time_text(count, unit, zoned):
    """§15.2: a date cell as YYYY-MM-DD; a date-time cell as YYYY-MM-DDTHH:MM:SS, a
    fraction of the unit's digits (3, 6, 9) when not zero, and Z when the column is zoned."""
    if unit == 1:
        return "%04d-%02d-%02d" % _civil_from_days(count)
    per = 10 ** (3 * (unit - 2))
    secs, frac = divmod(count, per)
    days, sod = divmod(secs, 86400)
    text = "%04d-%02d-%02dT%02d:%02d:%02d" % (*_civil_from_days(days), sod // 3600, sod // 60 % 60, sod % 60)
    if frac:
        text += ".%0*d" % (3 * (unit - 2), frac)
    return text + ("Z" if zoned else "")


# -- streams (§14) --------------------------------------------------------------------------

STREAM_MAGIC = b"LWSTREAM"
FLAG_CRC = 1  # §14.1: every frame ends with a CRC-32
KIND_KEYS, KIND_RESET = 0x40, 0x41
KIND_VECTOR = 0x50  # §14.5: a vector frame's kind is 0x50 + its element type code
VECTOR_MAX_BYTES = 64
# §14.3: the payload widths a scalar frame may have, by root tag.
SCALAR_WIDTHS = {NULL: (0,), FALSE: (0,), TRUE: (0,), INT: (1, 2, 4, 8), UINT: (1, 2, 4, 8), F64: (8,), F32: (4, 8)}
MAX_FRAME, MAX_KEYS, MAX_KEY_BYTES = 64 << 20, 1 << 20, 64 << 20  # the reader's bounds (§14.2, §14.4)


def iter_stream(data, *, max_depth=MAX_DEPTH, max_frame=MAX_FRAME, max_keys=MAX_KEYS, max_key_bytes=MAX_KEY_BYTES):
    """Yield the messages of a whole Leafwire stream (bytes-like) as Python values, mapped
    as ``loads`` maps a document's (a vector frame gives a list). Errors are FormatError at
    a stream offset; a torn frame raises after every complete message before it."""
    data = bytes(data)
    flags = _stream_header(data)
    keys = []  # §14.4: the key table; a key's id is its index
    f = HEADER_SIZE
    while f < len(data):
        length, b = _frame_length(data, f, max_frame)
        end = b + length
        after = end + (4 if flags & FLAG_CRC else 0)
        if after > len(data):
            raise FormatError(f, "truncated frame: the stream ends inside it")
        if flags & FLAG_CRC and zlib.crc32(data[f:end]) != struct.unpack_from("<I", data, end)[0]:
            raise FormatError(f, "frame checksum mismatch")
        kind = data[b]
        if kind <= TYPED:
            yield _value_frame(data, b, end, kind, keys, max_depth)
        elif 0 <= kind - KIND_VECTOR < len(ELEMENT_FORMATS):
            yield _vector_frame(data, b, end, kind - KIND_VECTOR)
        elif kind == KIND_KEYS:
            keys += _keys_frame(data, b, end, keys, max_keys, max_key_bytes)
        elif kind == KIND_RESET and length == 1:
            keys = []
        elif kind == KIND_RESET:
            raise FormatError(b, "a reset frame with a body")
        else:
            raise FormatError(b, f"reserved frame kind 0x{kind:02x}")
        f = after


def _stream_header(data):
    """§14.1: check the 112-byte header; return its flags."""
    if data[:8] != STREAM_MAGIC[:len(data)]:
        raise FormatError(0, "not a Leafwire stream (bad magic)")
    if len(data) < HEADER_SIZE:
        raise FormatError(len(data), "truncated stream header")
    major, _minor, flags = struct.unpack_from("<BBH", data, 8)
    if major != 1:
        raise FormatError(8, f"unsupported stream major version {major}")
    if flags & ~FLAG_CRC:
        raise FormatError(10, f"unknown stream flags 0x{flags:04x}")
    if any(data[12:HEADER_SIZE]):
        raise FormatError(12, "reserved stream header bytes are not zero")
    return flags


def _varint_in(data, p, end, what):
    """§1 varint in data[p:end]; returns (value, offset after it)."""
    value = 0
    for i in range(10):
        if p + i >= end:
            break
        byte = data[p + i]
        value |= (byte & 0x7F) << (7 * i)
        if byte < 0x80:
            if value >= 1 << 64:
                break
            return value, p + i + 1
    raise FormatError(p, f"truncated or overlong {what}")


def _frame_length(data, f, max_frame):
    """§14.2: the frame length at `f`; returns (L, body offset B)."""
    if f + 10 > len(data) and all(byte >= 0x80 for byte in data[f:]):
        raise FormatError(f, "truncated frame: the stream ends inside its length")
    length, b = _varint_in(data, f, len(data), "frame length")
    if length == 0:
        raise FormatError(f, "frame of length 0")
    if length > max_frame:
        raise FormatError(f, f"frame of {length} bytes, above the limit of {max_frame}")
    return length, b


def _value_frame(data, b, end, tag, keys, max_depth):
    """§14.3: a scalar root's payload follows the kind byte; a block root lies in the
    frame's section, read as a document from the origin's 112 bytes before."""
    if tag < STRING:
        width = end - b - 1
        if width not in SCALAR_WIDTHS[tag]:
            raise FormatError(b, f"a scalar frame of tag 0x{tag:02x} with a payload of {width} bytes")
        payload = int.from_bytes(data[b + 1:end], "little", signed=tag == INT)
        reader = _Reader(b"", 0, max_depth, False)
        reader.budget = 1  # one value, with no bytes of its own in a document
        return reader.value(tag, payload, b, 0)
    origin = b - b % 8
    base = origin - HEADER_SIZE  # the stream offset of the section's offset 0
    start = HEADER_SIZE + b + 1 - origin  # s: the first byte a block may use
    reader = _FrameReader(data[base:end], keys, max_depth)
    root = start if tag in (ARRAY, OBJECT, INTMAP) else _align(start, 8)
    try:
        value = reader.value(tag, root, start - 1, 0)
        blocks = sorted(reader.blocks)
        if blocks and blocks[0][0] < start:
            raise FormatError(blocks[0][0], "a block before the frame's section")
        for (_, stop), (begin, _) in zip(blocks, blocks[1:]):  # a tree, as in a document
            if begin < stop:
                raise FormatError(begin, "shared or overlapping blocks")
    except FormatError as error:
        raise FormatError(base + error.offset, error.message) from None
    except RecursionError:
        raise FormatError(b, "nesting too deep for Python's recursion limit") from None
    return value


class _FrameReader(_Reader):
    """Reads a frame's section (§14.3): object keys are ids of the stream's key table."""

    def __init__(self, section, keys, max_depth):
        super().__init__(section, 0, max_depth, False)
        self.keys = keys

    def key(self, key_id, at):
        if key_id >= len(self.keys):
            # Reported where the frame's offsets start, as §14.3 says the reference does.
            raise FormatError(0, f"key id {key_id} is not in the stream's key table of {len(self.keys)}")
        return self.keys[key_id]


def _vector_frame(data, b, end, code):
    """§14.5: 1 to 64 bytes of whole elements of type `code` (from the kind) -> a list."""
    fmt = ELEMENT_FORMATS[code]
    size, n = struct.calcsize(fmt), end - b - 1
    if n == 0 or n % size or n > VECTOR_MAX_BYTES:
        raise FormatError(b, f"vector frame: {n} bytes of elements, not a positive multiple of {size} up to 64")
    values = list(struct.unpack_from(f"<{n // size}{fmt}", data, b + 1))
    if code == BOOL_ELEMENT:
        for i, v in enumerate(values):
            if v > 1:
                raise FormatError(b + 1 + i, "bool element other than 0 or 1")
        values = [v == 1 for v in values]
    return values


def _keys_frame(data, b, end, keys, max_keys, max_key_bytes):
    """§14.4: a varint n >= 1, then n keys (varint length, UTF-8), ending with the body."""
    n, p = _varint_in(data, b + 1, end, "key count")
    if n == 0 or n > end - b - 1:
        raise FormatError(b + 1, f"keys frame: {n} keys in {end - b - 1} bytes")
    new = []
    for _ in range(n):
        length, q = _varint_in(data, p, end, "key length")
        if q + length > end:
            raise FormatError(p, "keys frame: a key runs past the frame")
        try:
            new.append(data[q:q + length].decode("utf-8"))
        except UnicodeDecodeError:
            raise FormatError(q, "keys frame: a key is not valid UTF-8") from None
        p = q + length
    if p != end:
        raise FormatError(p, "keys frame: bytes after the last key")
    if len(set(keys + new)) != len(keys) + len(new):
        raise FormatError(b, "keys frame: a key the table already holds")
    if len(keys) + len(new) > max_keys or sum(len(k.encode()) for k in keys + new) > max_key_bytes:
        raise FormatError(b, "the stream's key table passes the reader's bounds")
    return new
