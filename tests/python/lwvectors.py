"""Shared test helpers: load the reference reader, a tiny canonical encoder (spec §7) for
hand-built documents, strict structural equality, and the spec/vectors/ loader."""

import importlib.util
import json
import math
import struct
import zlib
from decimal import Decimal
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VECTOR_DIR = REPO / "spec" / "vectors"
INVALID_DIR = VECTOR_DIR / "invalid"


def _load_reference():
    # Loaded by path so the tests do not depend on the package's __init__ (which may need
    # the compiled extension).
    path = REPO / "python" / "leafwire" / "reference.py"
    spec = importlib.util.spec_from_file_location("leafwire_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = _load_reference()

NULL, FALSE, TRUE, INT, UINT, F64, F32, STRING, BYTES, BIGNUM, ARRAY, OBJECT, INTMAP, TYPED = range(14)
U64 = (1 << 64) - 1
ELEMENT_FORMATS = "BbhiqBHIQfd"
BOOL, I8, I16, I32, I64, U8, U16, U32, U64_ELEMENT, F32_ELEMENT, F64_ELEMENT = range(11)


# -- values the encoder accepts besides plain Python ones ------------------------------

class Float32(float):
    """A value to encode with tag f32 (its binary32 rounding is what reads back)."""


class IntMap(dict):
    """A dict with int keys, encoded as an intmap."""


class Typed:
    """A typed array: element code, shape, row-major flat values. With `masked`, an f64
    array whose int elements get their integer-mask bit."""

    def __init__(self, element, shape, flat, masked=False):
        assert math.prod(shape) == len(flat)
        self.element, self.shape, self.flat, self.masked = element, list(shape), list(flat), masked

    def nested(self):
        """The value the reference reader should produce."""
        flat = self.flat
        if self.element == F32_ELEMENT:
            flat = [widen_f32(v) for v in flat]
        elif self.element == F64_ELEMENT:
            flat = [v if self.masked and type(v) is int else float(v) for v in flat]
        return reference._nest(flat, self.shape)


def widen_f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def expected(value):
    """The Python value the reference reader gives for an encoder input."""
    if isinstance(value, Typed):
        return value.nested()
    if isinstance(value, Float32):
        return widen_f32(value)
    if isinstance(value, list):
        return [expected(v) for v in value]
    if isinstance(value, dict):
        return {k: expected(v) for k, v in value.items()}
    return value


# -- primitives -------------------------------------------------------------------------

def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def align(p, n):
    return (p + n - 1) // n * n


def keyhash(data):
    """§4.2: eight bytes per step, the last chunk zero-padded."""
    h = (len(data) * 0x9E3779B97F4A7C15) & U64
    for i in range(0, len(data), 8):
        chunk = int.from_bytes(data[i:i + 8].ljust(8, b"\0"), "little")
        h = ((h ^ chunk) * 0xBF58476D1CE4E5B9) & U64
        h ^= h >> 31
    return h


def home_bucket(h, table_size):
    """§4.1: (h × 0x9E3779B97F4A7C15 mod 2^64) >> (64 − log2 T)."""
    return ((h * 0x9E3779B97F4A7C15) & U64) >> (64 - (table_size.bit_length() - 1))


def index_geometry(capacity):
    """§4.1: (table size T, entry width e)."""
    table_size = 2
    while table_size < 2 * capacity:
        table_size *= 2
    entry = 1 if capacity < 255 else 2 if capacity < 65535 else 4
    return table_size, entry


def signed_width(v, widths=(1, 2, 4, 8)):
    return next(w for w in widths if -(1 << (8 * w - 1)) <= v < (1 << (8 * w - 1)))


def root_record(generation, root, root_tag, dictionary, end, garbage=0, crc=None):
    """§2.2: a 48-byte root record; `crc` overrides the computed CRC."""
    body = struct.pack("<QQQQQB3x", generation, root & U64, dictionary, end, garbage, root_tag)
    return body + struct.pack("<I", zlib.crc32(body) if crc is None else crc)


def header(record_a, record_b=bytes(48), major=1, minor=0, flags=0):
    return b"LEAFWIRE" + struct.pack("<BBH4x", major, minor, flags) + record_a + record_b


# -- the encoder (§7) -------------------------------------------------------------------

class _Node:
    def __init__(self, value, keys):
        self.offset = 0
        self.children = []  # (key, node) for containers; key None in arrays
        self.payload = 0
        if value is None:
            self.tag = NULL
        elif isinstance(value, bool):
            self.tag = TRUE if value else FALSE
        elif isinstance(value, int):
            if -(1 << 63) <= value < (1 << 63):
                self.tag, self.payload = INT, value
            elif 0 <= value <= U64:
                self.tag, self.payload = UINT, value
            else:
                self.tag = BIGNUM
                self.content = format(Decimal(value), "f").encode()
        elif isinstance(value, Float32):
            self.tag, self.payload = F32, struct.unpack("<I", struct.pack("<f", value))[0]
        elif isinstance(value, float):
            self.tag, self.payload = F64, struct.unpack("<Q", struct.pack("<d", value))[0]
        elif isinstance(value, str):
            self.tag, self.content = STRING, value.encode("utf-8")
        elif isinstance(value, bytes):
            self.tag, self.content = BYTES, value
        elif isinstance(value, Typed):
            self.tag, self.typed = TYPED, value
        elif isinstance(value, list):
            self.tag = ARRAY
            self.children = [(None, _Node(v, keys)) for v in value]
        elif isinstance(value, IntMap):
            self.tag = INTMAP
            self.children = [(k, _Node(v, keys)) for k, v in value.items()]
        elif isinstance(value, dict):
            self.tag = OBJECT
            self.children = [(k.encode("utf-8"), _Node(v, keys)) for k, v in value.items()]
            keys.update(k for k, _ in self.children)
        else:
            raise TypeError(f"cannot encode {type(value).__name__}")

    @property
    def is_container(self):
        return self.tag in (ARRAY, OBJECT, INTMAP)

    @property
    def is_block(self):
        return self.tag in (STRING, BYTES, BIGNUM, TYPED) or self.is_container

    def slot_payload(self):
        return self.offset if self.is_block else self.payload

    def slot_width(self, pointer_width):
        if self.is_block:
            return pointer_width
        if self.tag == INT:
            return signed_width(self.payload)
        return {NULL: 1, FALSE: 1, TRUE: 1, UINT: 8, F64: 8, F32: 4}[self.tag]


def _dictionary(keys):
    """§6 at offset 112: sorted keys, C = K, B = offsets[K]."""
    offsets, blob = [0], b""
    for key in keys:
        blob += key
        offsets.append(len(blob))
    table_size = 2
    while table_size < 2 * len(keys):
        table_size *= 2
    table = [0] * table_size
    for key_id, key in enumerate(keys):
        bucket = home_bucket(keyhash(key), table_size)
        while table[bucket]:
            bucket = (bucket + 1) % table_size
        table[bucket] = key_id + 1
    head = struct.pack("<IIII", len(keys), len(keys), len(blob), table_size)
    body = head + struct.pack(f"<{len(offsets)}I", *offsets) + blob
    body += bytes(align(len(body), 4) - len(body))
    return body + struct.pack(f"<{table_size}I", *table)


def _container(node, p, pointer_width, key_ids):
    n = len(node.children)
    w = max((child.slot_width(pointer_width) for _, child in node.children), default=1)
    if node.tag == ARRAY:
        k, keys = 1, []
    elif node.tag == OBJECT:
        ids = [key_ids[key] for key, _ in node.children]
        k = next(k for k in (1, 2, 4) if max(ids, default=0) < 1 << (8 * k))
        keys = [i.to_bytes(k, "little") for i in ids]
    else:
        k = max((signed_width(key) for key, _ in node.children), default=1)
        keys = [key.to_bytes(k, "little", signed=True) for key, _ in node.children]
    indexed = node.tag != ARRAY and n > 8
    layout = (w.bit_length() - 1) | (k.bit_length() - 1) << 2 | (0x20 if indexed else 0)
    out = bytearray([layout]) + varint(n)
    out += bytes(child.tag for _, child in node.children) + b"".join(keys)
    out += bytes(align(p + len(out), w) - (p + len(out)))
    for _, child in node.children:
        out += child.slot_payload().to_bytes(w, "little", signed=(child.tag == INT))
    if indexed:
        table_size, entry = index_geometry(n)
        table = [0] * table_size
        for i, (key, _) in enumerate(node.children):
            h = keyhash(key) if node.tag == OBJECT else key & U64
            bucket = home_bucket(h, table_size)
            while table[bucket]:
                bucket = (bucket + 1) % table_size
            table[bucket] = i + 1
        out += bytes(align(p + len(out), entry) - (p + len(out)))
        out += b"".join(e.to_bytes(entry, "little") for e in table)
    return bytes(out)


def _data_block(node, p):
    if node.tag != TYPED:
        return varint(len(node.content)) + node.content
    t = node.typed
    fmt = ELEMENT_FORMATS[t.element]
    size = struct.calcsize(fmt)
    out = bytearray([t.element, len(t.shape) | (0x40 if t.masked else 0)])
    for dimension in t.shape:
        out += varint(dimension)
    out += bytes(align(p + len(out), size) - (p + len(out)))
    flat = [float(v) for v in t.flat] if t.element >= F32_ELEMENT else t.flat
    out += struct.pack(f"<{len(flat)}{fmt}", *flat)
    if t.masked:
        mask = bytearray((len(flat) + 7) // 8)
        for i, v in enumerate(t.flat):
            if type(v) is int:
                mask[i // 8] |= 1 << (i % 8)
        out += mask
    return bytes(out)


def encode(value):
    """The canonical document (§7) for `value`."""
    keys = set()
    root = _Node(value, keys)
    key_ids = {key: i for i, key in enumerate(sorted(keys))}
    containers = [root] if root.is_container else []
    blocks = [root] if root.is_block and not root.is_container else []
    for container in containers:  # grows while iterated: breadth-first
        for _, child in container.children:
            if child.is_container:
                containers.append(child)
            elif child.is_block:
                blocks.append(child)
    for pointer_width in (2, 4, 8):
        for node in containers + blocks:
            node.offset = 0
        for _ in range(2):  # pass 1 places the blocks, pass 2 writes their offsets
            body = _dictionary(sorted(keys)) if keys else b""
            for node in containers + blocks:
                node.offset = 112 + len(body)
                if node.is_container:
                    body += _container(node, node.offset, pointer_width, key_ids)
                else:
                    body += _data_block(node, node.offset)
            end = 112 + len(body)
            if end >= 1 << (8 * pointer_width):
                break  # offsets do not fit: try the next pointer width
        else:
            break
    record = root_record(1, root.slot_payload(), root.tag, 112 if keys else 0, end)
    return header(record) + body


# -- comparison and vectors -------------------------------------------------------------

def _bits(x):
    return struct.pack("<d", x)


def same(a, b):
    """Strict structural equality: types match exactly, floats by bits when NaN or zero,
    dict key order matters."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        if math.isnan(a) or math.isnan(b) or a == 0 or b == 0:
            return _bits(a) == _bits(b)
        return a == b
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return (len(a) == len(b)
                and all(same(ka, kb) for ka, kb in zip(a, b))
                and all(same(a[k], b[k]) for k in a))
    return a == b


def to_json_model(value):
    """§11 Leafwire → JSON on decoded values: bytes as arrays of numbers, intmap keys as
    decimal strings (typed arrays already are lists, bignums ints)."""
    if isinstance(value, bytes):
        return list(value)
    if isinstance(value, list):
        return [to_json_model(v) for v in value]
    if isinstance(value, dict):
        return {str(k) if isinstance(k, int) else k: to_json_model(v) for k, v in value.items()}
    return value


def vector_paths(directory=VECTOR_DIR):
    """The .lw vectors of `directory`. When it holds none, one placeholder that does not
    exist, so that a test parametrized over the vectors fails on it (see `require`)
    instead of being skipped for an empty parameter set."""
    return sorted(directory.glob("*.lw")) or [directory / "NO-VECTORS.lw"]


def require(path):
    """Fails with a clear message when `path` is the placeholder of `vector_paths`."""
    if not path.is_file():
        how = ("python3 scripts/make_invalid_vectors.py" if path.parent == INVALID_DIR
               else "REGENERATE=1 cargo test -p leafwire --test vectors")
        pytest.fail(f"{path.parent} holds no .lw vector ({how} writes them)", pytrace=False)
    return path


def vector_expectation(path):
    """(expected value, is_json) for spec/vectors/NAME.lw, or None if neither file exists."""
    json_path, txt_path = path.with_suffix(".json"), path.with_suffix(".txt")
    if json_path.exists():
        return json.loads(json_path.read_text(encoding="utf-8")), True
    if txt_path.exists():
        last = txt_path.read_text(encoding="utf-8").rstrip("\n").splitlines()[-1]
        assert last.startswith("value: "), f"{txt_path}: last line must start with 'value: '"
        scope = {"__builtins__": {}, "nan": float("nan"), "inf": float("inf")}
        return eval(last[len("value: "):], scope), False
    return None
