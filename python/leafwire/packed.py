"""Pure-Python reader of packed arrays (spec/SPEC.md §13), the companion of reference.py.

A packed array (tag 0x0E) points at a packed block holding one *column group*: the
elements of an array shredded into per-path nodes whose values are stored as columns of
compressed pages. ``read_group`` turns such a group back into the list of its elements.
Like reference.py it follows the spec literally and favours clarity over speed: one small
function per codec, every count checked against the bytes that hold it and against the
limits of §13.6 before anything is built, and every error a ``FormatError`` carrying the
byte offset (in the document) of the field at fault.

Standard library only, plus ``zstandard``, imported when a page uses the zstd stage
(codec 0x30). Codec 0x11 (pco) is not supported: a page that uses it is rejected.
"""

import json
import struct

try:
    from .reference import ARRAY as TAG_ARRAY, MAX_DEPTH, FormatError, loads, root_tag
except ImportError:  # loaded by path beside reference.py, which sets these names first
    pass

__all__ = ["read_group", "decode_budget"]

# §13.6 limits.
MAX_NODES = 65_536
MAX_PAGE_VALUES = 65_536
MAX_PAGE_BYTES = 64 << 20
MAX_NESTING = 3  # nested streams below a page's own stream
MAX_SHRED_DEPTH = 32  # nodes lie at most 33 levels below the root node
MAX_TUPLE = 16
MAX_EXACT = 1 << 53
U64 = (1 << 64) - 1

# §13.1 kinds, streams and roles.
NULL, BOOL, INT, FLOAT, STRING, ARRAY, OBJECT, INTMAP, RESIDUAL = range(9)
S_KIND, S_BOOL, S_INT, S_FLOAT, S_STRING, S_SHAPE, S_LEN, S_KEY, S_RESIDUAL = range(9)
ROOT, FIELD, ELEMENT, POSITION, MAP_VALUE = range(5)
FLAG_TUPLE, FLAG_KEYED = 1, 2
# Group flag bit 0: every stripe begins with a framing byte, bare or zstd frame (§13.4).
GROUP_STRIPE_FRAMES = 1
# Group flag bit 1: the key, node and column tables are one zstd frame (§13.2).
GROUP_TABLES_FRAMED = 2
STRIPE_BARE, STRIPE_FRAMED = 0, 1

# §13.5 codec bytes.
INT_PLAIN, INT_CONSTANT, INT_FOR, INT_DELTA, INT_RLE, INT_PATCHED, INT_DICT = range(7)
FLOAT_PLAIN, FLOAT_PCO, FLOAT_DECIMAL, FLOAT_SPLIT, FLOAT_QUANTIZED, FLOAT_RESIDUAL = range(0x10, 0x16)
STR_PLAIN, STR_DICT, STR_NUMERIC, STR_HEX, STR_SYMBOLS = range(0x20, 0x25)
ZSTD = 0x30
ESCAPE = 255
PLAIN_FORMATS = {1: "b", 2: "h", 4: "i", 8: "q"}


def decode_budget(document_length):
    """§13.6: what one group may decode to, in values plus string bytes."""
    return (1 << 20) + 256 * document_length


def read_group(buf, start, end):
    """The elements (a list) of the column group in ``buf[start:end]``; ``buf`` is the
    whole document, so errors carry document offsets and the budget its length."""
    return _Group(bytes(buf), start, end).elements()


def read_object(buf, start, end, at):
    """§13.7: the object (a dict) of the packed object whose column group is in
    ``buf[start:end]``: its elements are the entries [key, value], the root a tuple node
    of two positions holding arrays only, position 0 strings only; keys distinct; or, in
    the whole form, its one element kept whole is the object. ``at``
    is the packed block's offset, where errors of the object's shape are reported."""
    group = _Group(bytes(buf), start, end)
    root = group.nodes[0]
    if group.n == 0:
        raise FormatError(at, "packed object without entries")
    if root.kinds == 1 << RESIDUAL and root.tuple is None:
        # The whole form: one element kept whole, the object itself.
        if group.n != 1:
            raise FormatError(at, "packed object whose whole form holds more than one element")
        (whole,) = group.elements()
        if not isinstance(whole, dict) or not whole:
            raise FormatError(at, "packed object whose whole form is not an object of entries")
        return whole
    if root.tuple != 2 or root.kinds != 1 << ARRAY:
        raise FormatError(at, "packed object whose root is not a tuple node of two positions")
    keys = root.children.get((POSITION, 0))
    if keys is None or group.nodes[keys].kinds != 1 << STRING:
        raise FormatError(at, "packed object with a key that is not a string")
    out = {}
    for key, value in group.elements():
        if key in out:
            raise FormatError(at, f"packed object repeats the key {key!r}")
        out[key] = value
    return out


def _unique_keys(pairs):
    """A JSON object of the residual JSON form (§13.3), whose keys MUST be distinct."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("an object repeats a key")
    return out


def _not_json(name):
    raise ValueError(f"{name} is not JSON (RFC 8259)")


def _nesting(value):
    """How many containers deep ``value`` nests (iteratively: the text may be deep)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (list, dict)):
            deepest = max(deepest, depth + 1)
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


# -- shared definitions (§13.5) ----------------------------------------------------------

def _wrap(x):
    """x as a two's-complement i64 (arithmetic on stream values wraps)."""
    return (x + (1 << 63) & U64) - (1 << 63)


def _unzigzag(u):
    return (u >> 1) ^ -(u & 1)


def _bitlen(u):
    return u.bit_length()


def _unpack_bits(data, n, w):
    """The n values of pack(n, w) in ``data``: value j at bits [j·w, j·w + w), least
    significant bit first. Eight values take exactly w bytes, so they are cut eight at a
    time."""
    if w == 0:
        return [0] * n
    mask = (1 << w) - 1
    out = []
    for g in range(0, n, 8):
        chunk = int.from_bytes(data[g * w // 8:(g + 8) * w // 8], "little")
        for _ in range(min(8, n - g)):
            out.append(chunk & mask)
            chunk >>= w
    return out


def _f64(bits):
    return struct.unpack("<d", bits.to_bytes(8, "little"))[0]


def _bits(value):
    return int.from_bytes(struct.pack("<d", value), "little")


class _Cursor:
    """A bounds-checked position in ``buf[:end]``; errors name absolute offsets."""

    def __init__(self, buf, pos, end):
        self.buf, self.pos, self.end = buf, pos, end

    def fail(self, at, message):
        raise FormatError(at, message)

    def remaining(self):
        return max(self.end - self.pos, 0)

    def u8(self):
        if self.pos >= self.end:
            self.fail(self.pos, "packed stream truncated")
        self.pos += 1
        return self.buf[self.pos - 1]

    def u16(self):
        low = self.u8()
        return low | self.u8() << 8

    def varint(self):
        """§1: unsigned LEB128, at most 10 bytes, below 2^64."""
        at, value = self.pos, 0
        for i in range(10):
            byte = self.u8()
            value |= (byte & 0x7F) << (7 * i)
            if byte < 0x80:
                if value > U64:
                    break
                return value
        self.fail(at, "varint longer than 10 bytes or over 64 bits")

    def zvarint(self):
        return _unzigzag(self.varint())

    def count(self, low, high, message):
        at = self.pos
        value = self.varint()
        if not low <= value <= high:
            self.fail(at, message)
        return value

    def take(self, n):
        if n > self.remaining():
            self.fail(self.pos, "packed stream truncated")
        self.pos += n
        return self.buf[self.pos - n:self.pos]

    def packed(self, n, w):
        """The bytes of pack(n, w), checked to fit before anything is unpacked."""
        if w > 64:
            self.fail(self.pos - 1, "bit width above 64")
        return self.take((n * w + 7) // 8)

    def check_values(self, n):
        if n > MAX_PAGE_VALUES:
            self.fail(self.pos, f"packed stream of {n} values exceeds the limit of {MAX_PAGE_VALUES}")

    def check_depth(self, depth):
        if depth > MAX_NESTING:
            self.fail(self.pos, "packed streams nested deeper than 3")


class _Positions:
    """Patch positions from their gaps (0x05, 0x12, 0x13): the first gap is the first
    position, every later gap is at least 1, every position is below n."""

    def __init__(self, n):
        self.n, self.last, self.started = n, 0, False

    def next(self, gap, r, at):
        if self.started and gap == 0:
            r.fail(at, "patch positions not increasing")
        self.started = True
        self.last += gap
        if self.last >= self.n:
            r.fail(at, "patch position not below n")
        return self.last


# -- integer codecs (§13.5.1) ------------------------------------------------------------

def read_ints(r, n, depth=0, forbid=None):
    """A stream of n i64 values."""
    r.check_values(n)
    if n == 0:
        return []  # an empty stream has no bytes, not even a codec byte
    r.check_depth(depth)
    at = r.pos
    codec = r.u8()
    if codec == forbid:
        r.fail(at, "codec not allowed in this nested stream")
    if codec == INT_PLAIN:
        k = r.u8()
        if k not in PLAIN_FORMATS:
            r.fail(at + 1, "plain integer width not 1, 2, 4 or 8")
        return list(struct.unpack(f"<{n}{PLAIN_FORMATS[k]}", r.take(n * k)))
    if codec == INT_CONSTANT:
        return [r.zvarint()] * n
    if codec == INT_FOR:
        base = r.zvarint()
        w = r.u8()
        return [_wrap(base + u) for u in _unpack_bits(r.packed(n, w), n, w)]
    if codec == INT_DELTA:
        return _read_delta(r, n, depth)
    if codec == INT_RLE:
        return _read_rle(r, n, depth)
    if codec == INT_PATCHED:
        return _read_patched(r, n)
    if codec == INT_DICT:
        return _read_int_dict(r, n, depth)
    r.fail(at, "unknown integer codec")


def _read_delta(r, n, depth):
    out = [r.zvarint()]
    for d in read_ints(r, n - 1, depth + 1, forbid=INT_DELTA):
        out.append(_wrap(out[-1] + d))
    return out


def _read_rle(r, n, depth):
    runs = r.count(1, n, "RLE run count not in 1..=n")
    values = read_ints(r, runs, depth + 1)
    lengths_at = r.pos
    lengths = read_ints(r, runs, depth + 1)
    if min(lengths) < 1:
        r.fail(lengths_at, "RLE run length below 1")
    if sum(lengths) != n:
        r.fail(lengths_at, "RLE run lengths do not sum to n")
    out = []
    for value, length in zip(values, lengths):
        out.extend([value] * length)
    return out


def _read_patched(r, n):
    reference = r.zvarint()
    w_at = r.pos
    w = r.u8()
    u = _unpack_bits(r.packed(n, w), n, w)
    m = r.count(0, n, "patch count above n")
    if m:
        pw, hw = r.u8(), r.u8()
        if w + hw > 64:
            r.fail(w_at, "patched widths w + hw above 64")
        gaps_at = r.pos
        gaps = _unpack_bits(r.packed(m, pw), m, pw)
        highs = _unpack_bits(r.packed(m, hw), m, hw)
        positions = _Positions(n)
        for gap, high in zip(gaps, highs):
            p = positions.next(gap, r, gaps_at)
            u[p] |= high << w
    return [_wrap(reference + _unzigzag(x)) for x in u]


def _read_int_dict(r, n, depth):
    d = r.count(1, n, "dictionary size not in 1..=n")
    values = read_ints(r, d, depth + 1)
    w_at = r.pos
    w = r.u8()
    if w != _bitlen(d - 1):
        r.fail(w_at, "dictionary code width is not bitlen(d - 1)")
    codes = _unpack_bits(r.packed(n, w), n, w)
    if codes and max(codes) >= d:
        r.fail(w_at + 1, "dictionary code out of range")
    return [values[c] for c in codes]


# -- float codecs (§13.5.2) --------------------------------------------------------------

def read_floats(r, n, depth=0):
    """A stream of n binary64 values."""
    r.check_values(n)
    if n == 0:
        return []
    r.check_depth(depth)
    at = r.pos
    codec = r.u8()
    if codec == FLOAT_PLAIN:
        return list(struct.unpack(f"<{n}d", r.take(8 * n)))
    if codec == FLOAT_DECIMAL:
        return _read_decimal(r, n, depth, at)
    if codec == FLOAT_SPLIT:
        return _read_split(r, n)
    if codec == FLOAT_QUANTIZED:
        return _read_quantized(r, n, depth, at)
    if codec == FLOAT_RESIDUAL:
        return _read_decimal_residual(r, n, depth, at)
    if codec == FLOAT_PCO:
        r.fail(at, "float codec 0x11 (pco) is not supported by this reader")
    r.fail(at, "unknown float codec")


def _exact_ints(r, n, depth):
    """A nested integer stream whose values all satisfy abs(i) <= 2^53."""
    at = r.pos
    values = read_ints(r, n, depth + 1)
    if any(abs(i) > MAX_EXACT for i in values):
        r.fail(at, "decimal or quantized integer above 2^53")
    return values


def _decimal(i, e):
    """i ⊘ 10^e: one correctly rounded binary64 division of two exact doubles."""
    return float(i) / float(10 ** e)


def _read_decimal(r, n, depth, at):
    e = r.u8()
    if e > 22:
        r.fail(at + 1, "decimal exponent above 22")
    out = [_decimal(i, e) for i in _exact_ints(r, n, depth)]
    m = r.count(0, n, "patch count above n")
    if m:
        pw = r.u8()
        gaps_at = r.pos
        gaps = _unpack_bits(r.packed(m, pw), m, pw)
        raw = struct.unpack(f"<{m}d", r.take(8 * m))
        positions = _Positions(n)
        for gap, value in zip(gaps, raw):
            out[positions.next(gap, r, gaps_at)] = value
    return out


def _read_quantized(r, n, depth, at):
    t = struct.unpack("b", bytes([r.u8()]))[0]
    if not -60 <= t <= 60:
        r.fail(at + 1, "quantization step exponent outside -60..=60")
    step = 2.0 ** t  # exact, and so is every product below
    return [float(q) * step for q in _exact_ints(r, n, depth)]


def _read_decimal_residual(r, n, depth, at):
    e = r.u8()
    if e > 18:
        r.fail(at + 1, "decimal + residual exponent above 18")
    ints = _exact_ints(r, n, depth)
    residuals = read_ints(r, n, depth + 1)
    return [_f64(_bits(_decimal(i, e)) + d & U64) for i, d in zip(ints, residuals)]


def _read_split(r, n):
    l_at = r.pos
    left_bits = r.u8()
    if not 1 <= left_bits <= 16:
        r.fail(l_at, "split left width not in 1..=16")
    d = r.u8()
    if not 1 <= d <= 8:
        r.fail(l_at + 1, "split dictionary size not in 1..=8")
    dict_at = r.pos
    dictionary = [r.u16() for _ in range(d)]
    if any(x >> left_bits for x in dictionary):
        r.fail(dict_at, "split left value wider than L")
    dw_at = r.pos
    dw = r.u8()
    if dw != _bitlen(d - 1):
        r.fail(dw_at, "split code width is not bitlen(d - 1)")
    codes = _unpack_bits(r.packed(n, dw), n, dw)
    right_width = 64 - left_bits
    rights = _unpack_bits(r.packed(n, right_width), n, right_width)
    if max(codes) >= d:
        r.fail(dw_at + 1, "split code out of range")
    lefts = [dictionary[c] for c in codes]
    m = r.count(0, n, "patch count above n")
    positions = _Positions(n)
    for _ in range(m):
        gap_at = r.pos
        p = positions.next(r.varint(), r, gap_at)
        left = r.u16()
        if left >> left_bits:
            r.fail(gap_at, "split left value wider than L")
        lefts[p] = left
    return [_f64(left << right_width | right) for left, right in zip(lefts, rights)]


# -- string codecs (§13.5.3) -------------------------------------------------------------

def read_strings(r, n, depth=0, forbid=None):
    """A stream of n UTF-8 strings."""
    r.check_values(n)
    if n == 0:
        return []
    r.check_depth(depth)
    at = r.pos
    codec = r.u8()
    if codec == forbid:
        r.fail(at, "codec not allowed in this nested stream")
    if codec == STR_PLAIN:
        return _read_plain_strings(r, n, depth)
    if codec == STR_DICT:
        return _read_str_dict(r, n, depth)
    if codec == STR_NUMERIC:
        return _read_numeric(r, n, depth)
    if codec == STR_HEX:
        return _read_hex(r, n, depth)
    if codec == STR_SYMBOLS:
        return _read_symbols(r, n, depth)
    r.fail(at, "unknown string codec")


def _too_big(r, at):
    r.fail(at, f"decoded strings of a page exceed {MAX_PAGE_BYTES} bytes (max_page_bytes)")


def _utf8(r, data, at):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        r.fail(at + error.start, "string is not UTF-8")


def _read_lengths(r, n, depth):
    """Byte lengths from a nested stream: each >= 0, their sum within the bytes left."""
    at = r.pos
    lengths = read_ints(r, n, depth + 1)
    if min(lengths) < 0:
        r.fail(at, "negative string length")
    if sum(lengths) > r.remaining():
        r.fail(at, "string lengths exceed the stream")
    return lengths


def _split(data, lengths):
    p = 0
    for length in lengths:
        yield p, data[p:p + length]
        p += length


def _read_plain_strings(r, n, depth):
    lengths = _read_lengths(r, n, depth)
    data_at = r.pos
    data = r.take(sum(lengths))
    return [_utf8(r, part, data_at + p) for p, part in _split(data, lengths)]


def _read_str_dict(r, n, depth):
    d = r.count(1, n, "dictionary size not in 1..=n")
    values = read_strings(r, d, depth + 1, forbid=STR_DICT)
    codes_at = r.pos
    codes = read_ints(r, n, depth + 1)
    if min(codes) < 0 or max(codes) >= d:
        r.fail(codes_at, "dictionary code out of range")
    sizes = [len(v.encode("utf-8")) for v in values]
    if sum(sizes[c] for c in codes) > MAX_PAGE_BYTES:
        _too_big(r, codes_at)
    return [values[c] for c in codes]


def _read_numeric(r, n, depth):
    significands = read_ints(r, n, depth + 1)
    zeros_at = r.pos
    zeros = read_ints(r, n, depth + 1)
    if sum(20 + min(max(z, 0), 64) for z in zeros) > MAX_PAGE_BYTES:
        _too_big(r, zeros_at)
    out = []
    for s, z in zip(significands, zeros):
        if not 0 <= z <= 64 or (s == 0 and z != 0):
            r.fail(zeros_at, "numeric text zero count out of range")
        out.append(str(s) + "0" * z)
    return out


def _read_hex(r, n, depth):
    flags_at = r.pos
    flags = r.u8()
    if flags > 3:
        r.fail(flags_at, "unknown hex flags")
    lengths = _read_lengths(r, n, depth)
    data = r.take(sum(lengths))
    prefix = "0x" if flags & 1 else ""
    if 2 * len(data) + n * len(prefix) > MAX_PAGE_BYTES:
        _too_big(r, flags_at)
    return [prefix + (part.hex().upper() if flags & 2 else part.hex()) for _, part in _split(data, lengths)]


def _read_symbols(r, n, depth):
    s = r.u8()
    lengths_at = r.pos
    symbol_lengths = r.take(s)
    if any(not 1 <= length <= 8 for length in symbol_lengths):
        r.fail(lengths_at, "symbol length not in 1..=8")
    table = list(_split(r.take(sum(symbol_lengths)), symbol_lengths))
    symbols = [symbol for _, symbol in table]
    lengths = _read_lengths(r, n, depth)
    data_at = r.pos
    data = r.take(sum(lengths))
    out, total = [], 0
    for p, encoded in _split(data, lengths):
        text, i = bytearray(), 0
        while i < len(encoded):
            c = encoded[i]
            if c < s:
                text += symbols[c]
                i += 1
            elif c == ESCAPE and i + 1 < len(encoded):
                text.append(encoded[i + 1])
                i += 2
            else:
                r.fail(data_at + p + i, "symbol code not in the table, or an escape at the end")
        total += len(text)
        if total > MAX_PAGE_BYTES:
            _too_big(r, data_at + p)
        out.append(_utf8(r, bytes(text), data_at + p))
    return out


# -- pages and the zstd stage (§13.4, §13.5.4) -------------------------------------------

STREAM_READERS = {S_FLOAT: read_floats, S_STRING: read_strings}


def read_page(buf, pos, end, n, stream):
    """The n values of the page at ``buf[pos:end]`` (not a residual page): one stream,
    possibly inside a zstd stage, that ends exactly at ``end``."""
    r = _Cursor(buf, pos, end)
    r.check_values(n)
    if n == 0:
        r.fail(pos, "page of zero values")
    read = STREAM_READERS.get(stream, read_ints)
    if pos < end and buf[pos] == ZSTD:
        r.pos += 1
        inner = _unwrap_zstd(r)
        if r.pos != end:
            r.fail(r.pos, "page bytes after the zstd frame")
        q = _Cursor(inner, 0, len(inner))
        try:
            values = read(q, n)
            if q.pos != len(inner):
                q.fail(q.pos, "stream ends before the zstd stage's D bytes")
        except FormatError as error:  # offsets inside the frame mean nothing in the document
            raise FormatError(pos, f"in the zstd stage: {error}") from None
        return values
    values = read(r, n)
    if r.pos != end:
        r.fail(r.pos, "page stream ends before its byte length")
    return values


def _unwrap_zstd(r):
    """§13.5.4: varint D, varint C, C bytes of exactly one zstd frame of D bytes."""
    d_at = r.pos
    d = r.varint()
    if d > MAX_PAGE_BYTES:
        r.fail(d_at, f"zstd stage of {d} bytes exceeds the limit of {MAX_PAGE_BYTES} (max_page_bytes)")
    c = r.varint()
    frame_at = r.pos
    frame = r.take(c)
    try:
        import zstandard  # only pages with a zstd stage need it
    except ImportError:
        r.fail(frame_at, "a page with a zstd stage needs the zstandard package (pip install zstandard)")

    try:
        size = zstandard.frame_content_size(frame)
        if size != -1 and size != d:
            r.fail(frame_at, "zstd frame content size differs from D")
        decoder = zstandard.ZstdDecompressor().decompressobj()
        out = bytearray()
        # Fed a few bytes at a time, a frame cannot expand far past D before it is stopped.
        for i in range(0, len(frame), 64):
            out += decoder.decompress(frame[i:i + 64])
            if len(out) > d:
                break
        complete = decoder.eof and not decoder.unused_data
    except zstandard.ZstdError:
        complete, out = False, b""
    if not complete and len(out) <= d:
        r.fail(frame_at, "zstd stage is not exactly one zstd frame")
    if len(out) != d:
        r.fail(frame_at, "zstd frame does not decode to exactly D bytes")
    return bytes(out)


# -- the group block (§13.2-13.4) --------------------------------------------------------

class _Node:
    def __init__(self, parent, role, name, depth):
        self.parent, self.role, self.name, self.depth = parent, role, name, depth
        self.kinds, self.tuple, self.keyed = 0, None, False
        self.shapes = []
        self.children = {}  # (role, name) -> node index

    def has(self, kind):
        return self.kinds >> kind & 1 == 1

    def mixed(self):
        """Whether more than one kind occurs here (then a kind column says which)."""
        return bin(self.kinds).count("1") > 1

    def streams(self):
        """§13.2: the columns this node stores, in column-table order."""
        maps = self.has(INTMAP) or (self.has(OBJECT) and self.keyed)
        present = [
            (self.mixed(), S_KIND),
            (self.has(BOOL), S_BOOL),
            (self.has(INT), S_INT),
            (self.has(FLOAT), S_FLOAT),
            (self.has(STRING), S_STRING),
            (self.has(OBJECT) and not self.keyed and len(self.shapes) > 1, S_SHAPE),
            ((self.has(ARRAY) and self.tuple is None) or maps, S_LEN),
            (maps, S_KEY),
            (self.has(RESIDUAL), S_RESIDUAL),
        ]
        return [stream for wanted, stream in present if wanted]


class _Group:
    def __init__(self, buf, start, end):
        self.buf, self.end = buf, end
        self.budget = decode_budget(len(buf))
        r = _Cursor(buf, start, end)
        if r.u8() != 1:
            r.fail(start, "unknown column group version")
        flags = r.u8()
        if flags & ~(GROUP_STRIPE_FRAMES | GROUP_TABLES_FRAMED):
            r.fail(start + 1, "unknown column group flags")
        self.framed = bool(flags & GROUP_STRIPE_FRAMES)
        self.n = r.count(0, (1 << 32) - 1, "group element count above 2^32 - 1")
        nodes_at, node_count = r.pos, r.varint()
        columns_at, column_count = r.pos, r.varint()
        # Every stripe takes at least 2 bytes of the index.
        stripe_range = (1, min(self.n, r.remaining() // 2)) if self.n else (0, 0)
        stripe_count = r.count(*stripe_range, "group stripe count out of range")
        if flags & GROUP_TABLES_FRAMED:
            frame_at = r.pos
            tables = _unwrap_zstd(r)
            t = _Cursor(tables, 0, len(tables))
            try:
                self.read_tables(t, (nodes_at, node_count), (columns_at, column_count))
                if t.pos != len(tables):
                    t.fail(t.pos, "bytes after the tables")
            except FormatError as error:  # offsets inside the frame mean nothing in the document
                raise FormatError(frame_at, f"in the group's tables frame: {error}") from None
        else:
            self.read_tables(r, (nodes_at, node_count), (columns_at, column_count))
        self.stripes = self.read_stripe_index(r, stripe_count)

    def read_tables(self, r, nodes, columns):
        """§13.2: the key, node and column tables, in place or their frame's content;
        ``nodes`` and ``columns`` are the counts and where the header holds them."""
        (nodes_at, node_count), (columns_at, column_count) = nodes, columns
        # Every node takes at least 5 bytes, every column 3.
        if not 1 <= node_count <= min(MAX_NODES, r.remaining() // 5):
            r.fail(nodes_at, "group node count out of range")
        if column_count > min(16 * node_count, r.remaining() // 3):
            r.fail(columns_at, "group column count out of range")
        self.keys = self.read_keys(r)
        self.nodes = []
        for i in range(node_count):
            self.read_node(r, i)
        self.columns = self.read_columns(r, column_count)

    def read_keys(self, r):
        """§13.2: K distinct UTF-8 keys; errors are reported at the key's length."""
        keys, seen = [], set()
        for _ in range(r.count(0, r.remaining(), "group key count out of range")):
            at = r.pos
            try:
                key = r.take(r.count(0, r.remaining(), "group key runs past the block")).decode("utf-8")
            except UnicodeDecodeError:
                r.fail(at, "group key is not UTF-8")
            if key in seen:
                r.fail(at, "group key repeated")
            seen.add(key)
            keys.append(key)
        return keys

    def read_node(self, r, i):
        """§13.2 node table entry i."""
        at = r.pos
        parent, role, name = r.varint(), r.u8(), r.varint()
        kinds, flags = r.u16(), r.u8()
        if (kinds == 0 and (i != 0 or self.n != 0)) or kinds >> (RESIDUAL + 1):
            r.fail(at, "node kinds empty or unknown")
        if flags & ~(FLAG_TUPLE | FLAG_KEYED):
            r.fail(at, "unknown node flags")
        if i == 0:
            if parent or role != ROOT or name:
                r.fail(at, "node 0 is not the root")
            node = _Node(0, ROOT, 0, 0)
        else:
            if parent >= i:
                r.fail(at, "node parent is not an earlier node")
            p = self.nodes[parent]
            fits = {
                FIELD: p.has(OBJECT) and not p.keyed and name < len(self.keys),
                ELEMENT: p.has(ARRAY) and p.tuple is None and name == 0,
                POSITION: p.tuple is not None and name < p.tuple,
                MAP_VALUE: (p.has(INTMAP) or (p.has(OBJECT) and p.keyed)) and name == 0,
            }
            if not fits.get(role, False):
                r.fail(at, "node role does not fit its parent")
            if (role, name) in p.children:
                r.fail(at, "two nodes with one parent and role")
            if p.depth > MAX_SHRED_DEPTH:
                r.fail(at, "node deeper than the shredding depth limit")
            p.children[(role, name)] = i
            node = _Node(parent, role, name, p.depth + 1)
        node.kinds = kinds
        node.keyed = bool(flags & FLAG_KEYED)
        if node.keyed and not node.has(OBJECT):
            r.fail(at, "keyed flag on a node without objects")
        if flags & FLAG_TUPLE:
            k = r.u8()
            if not node.has(ARRAY) or not 1 <= k <= MAX_TUPLE:
                r.fail(at, "tuple flag on a node without arrays, or tuple length out of range")
            node.tuple = k
        if node.has(OBJECT) and not node.keyed:
            for _ in range(r.count(1, r.remaining(), "shape count out of range")):
                shape = []
                for _ in range(r.count(0, r.remaining(), "shape runs past the block")):
                    id_at = r.pos
                    key_id = r.varint()
                    if key_id >= len(self.keys):
                        r.fail(id_at, "shape key id out of range")
                    shape.append(key_id)
                if len(set(shape)) != len(shape):
                    r.fail(at, "shape repeats a key")
                if shape in node.shapes:
                    r.fail(at, "shape repeated")
                node.shapes.append(shape)
        self.nodes.append(node)

    def read_columns(self, r, column_count):
        """§13.2: exactly the streams the node table calls for, in that order."""
        expected = [(i, s) for i, node in enumerate(self.nodes) for s in node.streams()]
        if len(expected) != column_count:
            r.fail(r.pos, "column count differs from what the node table calls for")
        columns = []
        for node, stream in expected:
            at = r.pos
            if r.varint() != node or r.u8() != stream:
                r.fail(at, "column table out of the node table's order")
            columns.append((node, stream, r.count(0, ((1 << 32) - 1) * 16, "column count out of range")))
        return columns

    def read_stripe_index(self, r, stripe_count):
        """§13.4: (first element, directory position) of each stripe."""
        index = []
        for s in range(stripe_count):
            at = r.pos
            first, offset = r.varint(), r.varint()
            if s == 0:
                ok = first == 0 and offset == 0
            else:
                ok = index[-1][0] < first < self.n and offset >= index[-1][1]
            if not ok:
                r.fail(at, "stripe index not increasing from 0")
            index.append((first, offset))
        body = r.pos
        if index and body + index[-1][1] > self.end:
            r.fail(body, "stripe offset past the group")
        return [(first, body + offset) for first, offset in index]

    # -- stripes, chunks, pages ----------------------------------------------------------

    def elements(self):
        out = []
        totals = [0] * len(self.columns)
        for s in range(len(self.stripes)):
            out.extend(self.read_stripe(s, totals))
        if any(t != c[2] for t, c in zip(totals, self.columns)):
            at = self.stripes[0][1] if self.stripes else self.end
            raise FormatError(at, "chunk counts do not add up to the column table's")
        return out

    def read_stripe(self, s, totals):
        first, directory = self.stripes[s]
        last = s + 1 == len(self.stripes)
        count = self.n - first if last else self.stripes[s + 1][0] - first
        stripe_end = self.end if last else self.stripes[s + 1][1]
        if not self.framed:
            return self.read_chunks(self.buf, directory, stripe_end, count, totals, directory)
        r = _Cursor(self.buf, directory, stripe_end)
        framing = r.u8()
        if framing == STRIPE_BARE:
            return self.read_chunks(self.buf, directory + 1, stripe_end, count, totals, directory + 1)
        if framing != STRIPE_FRAMED:
            r.fail(directory, "unknown stripe framing byte")
        content = _unwrap_zstd(r)
        if r.pos != stripe_end:
            r.fail(r.pos, "stripe bytes after its zstd frame")
        try:
            return self.read_chunks(content, 0, len(content), count, totals, directory)
        except FormatError as error:  # offsets inside the frame mean nothing in the document
            raise FormatError(directory, f"in a stripe frame: {error}") from None

    def read_chunks(self, buf, directory, stripe_end, count, totals, at):
        """§13.4: the chunk directory at ``buf[directory:]`` and the chunks after it, up
        to ``stripe_end``; the stripe's elements, whose errors are reported at ``at``."""
        r = _Cursor(buf, directory, stripe_end)
        chunks = []
        for c, (_, _, column_total) in enumerate(self.columns):
            values = r.count(0, column_total - totals[c], "chunk count past the column's")
            length = r.count(0, r.remaining(), "chunk runs past its stripe")
            totals[c] += values
            chunks.append((values, length))
        pos = r.pos
        streams = {}
        for (node, stream, _), (values, length) in zip(self.columns, chunks):
            if pos + length > stripe_end:
                raise FormatError(pos, "chunk runs past its stripe")
            streams[(node, stream)] = self.read_chunk(buf, pos, pos + length, values, self.nodes[node], stream)
            pos += length
        if pos != stripe_end:
            raise FormatError(pos, "stripe bytes after its last chunk")
        return _Unshredder(self, streams, at).elements(count)

    def read_chunk(self, buf, pos, end, count, node, stream):
        """§13.4: nothing for no values; else varint P, the page directory when P >= 2,
        and the pages back to back."""
        if count == 0:
            if pos != end:
                raise FormatError(pos, "a chunk of no values has bytes")
            return []
        r = _Cursor(buf, pos, end)
        pages = r.count(1, count, "chunk page count out of range")
        if pages == 1:
            directory = [(count, end - r.pos)]
        else:
            directory, left = [], count
            for _ in range(pages):
                n = r.count(1, left, "page value counts exceed the chunk's")
                directory.append((n, r.count(1, r.remaining(), "page runs past its chunk")))
                left -= n
            if left:
                r.fail(pos, "page value counts fall short of the chunk's")
        at, values = r.pos, []
        for n, length in directory:
            if at + length > end:
                raise FormatError(at, "page runs past its chunk")
            if stream == S_RESIDUAL:
                values.extend(self.read_residual_page(buf, at, at + length, n))
            else:
                values.extend(self.checked(read_page(buf, at, at + length, n, stream), node, stream, at))
            at += length
        if at != end:
            raise FormatError(at, "chunk bytes after its last page")
        return values

    def checked(self, values, node, stream, at):
        """The rules a column's integers obey beyond being i64 (§13.1)."""
        if stream == S_KIND and any(not 0 <= k < 16 or not node.has(k) for k in values):
            raise FormatError(at, "kind not among the node's kinds")
        if stream == S_SHAPE and any(not 0 <= k < len(node.shapes) for k in values):
            raise FormatError(at, "shape id out of range")
        if stream == S_BOOL:
            if any(v not in (0, 1) for v in values):
                raise FormatError(at, "boolean column value not 0 or 1")
            return [v == 1 for v in values]
        if stream == S_LEN and any(not 0 <= v < 1 << 32 for v in values):
            raise FormatError(at, "length out of range")
        return values

    def read_residual_page(self, buf, pos, end, n):
        """§13.3: one complete Leafwire document whose root is an array of the n values,
        or (first byte 0x30) a zstd stage holding the JSON text of that array."""
        if end > pos and buf[pos] == ZSTD:
            return self.read_json_page(buf, pos, end, n)
        self.charge(end - pos, pos)
        page = buf[pos:end]
        try:
            # One level deeper than the limit: the root array's own.
            tag, values = root_tag(page), loads(page, max_depth=MAX_DEPTH + 1)
        except FormatError as error:
            raise FormatError(pos, f"in a residual page: {error}") from None
        if tag != TAG_ARRAY or len(values) != n:
            raise FormatError(pos, "a residual page's document is not an array of its n values")
        return values

    def read_json_page(self, buf, pos, end, n):
        """§13.3, the JSON form: D is charged to the budget before the frame is read."""
        r = _Cursor(buf, pos + 1, end)
        self.charge(_Cursor(buf, pos + 1, end).varint(), pos)
        text = _unwrap_zstd(r)
        if r.pos != end:
            raise FormatError(pos, "a residual page's zstd frame does not fill the page")
        try:
            values = json.loads(text.decode("utf-8"), object_pairs_hook=_unique_keys, parse_constant=_not_json)
        except (ValueError, RecursionError) as error:
            raise FormatError(pos, f"in a residual page's JSON text: {error}") from None
        if _nesting(values) > MAX_DEPTH + 1:
            raise FormatError(pos, "a residual page's JSON text nests deeper than the depth limit")
        if not isinstance(values, list) or len(values) != n:
            raise FormatError(pos, "a residual page's JSON text is not an array of its n values")
        return values

    def charge(self, units, at):
        self.budget -= units
        if self.budget < 0:
            raise FormatError(at, "the group decodes to more values than the decode budget allows")


class _Unshredder:
    """Rebuilds a stripe's elements from its columns, depth first (§13.1), checking that
    every column is used up exactly."""

    def __init__(self, group, streams, at):
        self.group, self.streams, self.at = group, streams, at
        self.cursors = {column: 0 for column in streams}

    def fail(self, message):
        raise FormatError(self.at, message)

    def next(self, node, stream):
        column = (node, stream)
        values = self.streams.get(column, ())
        i = self.cursors.get(column, 0)
        if i >= len(values):
            self.fail("a column of the group runs out of values")
        self.cursors[column] = i + 1
        return values[i]

    def elements(self, count):
        out = [self.read(0) for _ in range(count)]
        if any(self.cursors[c] != len(v) for c, v in self.streams.items()):
            self.fail("a column of the group holds values that no element uses")
        return out

    def charge(self, units):
        self.group.charge(units, self.at)

    def child(self, node, role, name=0):
        i = node.children.get((role, name))
        if i is None:
            self.fail("a value has no node for its children")
        return i

    def read(self, i):
        self.charge(1)
        node = self.group.nodes[i]
        kind = self.next(i, S_KIND) if node.mixed() else (node.kinds & -node.kinds).bit_length() - 1
        if kind == NULL:
            return None
        if kind in (BOOL, INT, FLOAT, RESIDUAL):
            return self.next(i, {BOOL: S_BOOL, INT: S_INT, FLOAT: S_FLOAT, RESIDUAL: S_RESIDUAL}[kind])
        if kind == STRING:
            text = self.next(i, S_STRING)
            self.charge(len(text) if text.isascii() else len(text.encode("utf-8")))
            return text
        if kind == ARRAY:
            return self.read_array(i, node)
        if kind == OBJECT and node.keyed:
            return self.read_map(i, node, lambda key_id: self.key(key_id))
        if kind == OBJECT:
            shape = self.next(i, S_SHAPE) if len(node.shapes) > 1 else 0
            return {self.group.keys[k]: self.read(self.child(node, FIELD, k)) for k in node.shapes[shape]}
        if kind == INTMAP:
            return self.read_map(i, node, lambda key: key)
        self.fail("unknown kind")

    def read_array(self, i, node):
        length = node.tuple if node.tuple is not None else self.next(i, S_LEN)
        self.charge(length)
        if node.tuple is not None:
            return [self.read(self.child(node, POSITION, p)) for p in range(length)]
        return [self.read(self.child(node, ELEMENT)) for _ in range(length)]

    def read_map(self, i, node, key_of):
        length = self.next(i, S_LEN)
        self.charge(length)
        out = {}
        for _ in range(length):
            key = key_of(self.next(i, S_KEY))
            if key in out:
                self.fail("a map repeats a key")
            out[key] = self.read(self.child(node, MAP_VALUE))
        return out

    def key(self, key_id):
        if not 0 <= key_id < len(self.group.keys):
            self.fail("key id out of range")
        return self.group.keys[key_id]
