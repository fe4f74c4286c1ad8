#!/usr/bin/env python3
"""Size estimate for Leafwire's proposed packed mode (spec/design/packed.md).

Shreds the three bench datasets the way packed.md §3 describes, splits the
columns into stripes and pages (§4), encodes every page with the codecs of §5
as chosen by the sampling selector of §6, and prints the packed size next to
the anchors (zstd -3/-19 of compact JSON and of MessagePack; Tree-Buf, Avro and
current Leafwire from bench/RESULTS.md).

The page payloads are real bytes (so the zstd stage compresses real bytes);
the container headers, stripe index and node table are counted with the
varint sizes §4 gives them, not written out. This is a prototype for sizing,
not a reader or a writer.

Needs numpy, zstandard, msgpack (and optionally pcodec, for a comparison
line). Usage:

    python3 -m venv .venv-design
    .venv-design/bin/pip install numpy zstandard msgpack pcodec
    nice .venv-design/bin/python spec/design/packed_estimate.py [--breakdown N] [--what-if]
"""

import argparse
import gzip
import json
import math
import re
import sys
from collections import Counter, defaultdict

import msgpack
import numpy as np
import zstandard

try:
    import pcodec
    from pcodec import standalone as pco_standalone
except ImportError:  # optional: only the comparison line needs it
    pcodec = None

DATA = "/work/shared/data"
PAGE = 4096  # values per page (and the stripe threshold), §4.3
SAMPLE_RUNS, SAMPLE_RUN = 10, 64  # BtrBlocks-style sample, §6
LOSSY_STEP_LOG2 = -12  # Tree-Buf's LossyFloatTolerance(-12)

# ---------------------------------------------------------------- datasets


class Rng:
    """SplitMix64, as bench/src/harness/rng.rs."""

    M = (1 << 64) - 1

    def __init__(self, seed):
        self.s = seed

    def next_u64(self):
        self.s = (self.s + 0x9E3779B97F4A7C15) & self.M
        z = self.s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.M
        return z ^ (z >> 31)

    def below(self, n):
        return (self.next_u64() * n) >> 64

    def range(self, lo, hi):
        return lo + self.below(hi - lo + 1)

    def unit(self):
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))

    def word(self, n):
        a = "abcdefghijklmnopqrstuvwxyz0123456789"
        return "".join(a[self.below(36)] for _ in range(n))


def workbook(shape):
    """bench/src/workbook/model.rs `generate`, field for field (Rust evaluates
    struct fields in source order; BTreeMap keeps the last duplicate, sorted)."""
    pages_n, rows_n, items, skeys = shape
    rng = Rng(0xC217E02017)

    def doubles():
        n = rng.range(*items)
        return [(rng.unit() - 0.5) * 2e4 for _ in range(n)]

    pages = []
    for p in range(pages_n):
        name = f"page-{p}-{rng.word(6)}"
        rows = []
        for _ in range(rows_n):
            ln = rng.range(8, 16)
            nw = rng.range(*items)
            ns = rng.range(*skeys)
            key = rng.word(12)
            label = rng.word(ln)
            value = (rng.unit() - 0.5) * 2e6
            values = doubles()
            weights = {}
            for _ in range(nw):
                k = rng.below(100_000)
                weights[k] = rng.unit()
            series = {}
            for _ in range(ns):
                k = rng.below(1000)
                series[k] = doubles()
            rows.append(
                {
                    "key": key,
                    "label": label,
                    "value": value,
                    "values": values,
                    "weights": IntMap(sorted(weights.items())),
                    "series": IntMap(sorted(series.items())),
                }
            )
        pages.append({"name": name, "rows": rows})
    return {"pages": pages}


class IntMap(dict):
    """An integer-keyed map (Leafwire's intmap, what serde gives BTreeMap<i32, _>)."""


def to_jsonable(v):
    if isinstance(v, IntMap):
        return {str(k): to_jsonable(x) for k, x in v.items()}
    if isinstance(v, dict):
        return {k: to_jsonable(x) for k, x in v.items()}
    if isinstance(v, list):
        return [to_jsonable(x) for x in v]
    return v


def datasets():
    with open(f"{DATA}/graphql/decentraland_marketplace_orders.json", "rb") as f:
        yield "graphql", json.loads(f.read()), None
    with gzip.open(f"{DATA}/geojson/countries.geojson.gz", "rb") as f:
        yield "geojson", json.loads(f.read()), None
    for name, shape in (("workbook small", (3, 5, (1, 9), (1, 9))), ("workbook big", (4, 50, (100, 300), (5, 15)))):
        w = workbook(shape)
        yield name, w, shape


# Figures from bench/RESULTS.md (full run), bytes.
RESULTS = {
    "graphql": {"tree-buf": 39117, "leafwire": 299919, "rmp-serde (arrays)": 169067},
    "geojson": {"tree-buf": 6782489, "tree-buf 1m (published)": 2268041, "leafwire": 8861024},
    "workbook small": {"apache-avro": 5267, "leafwire": 7624, "bincode": 5293},
    "workbook big": {"apache-avro": 4001999, "leafwire": 4279480, "bincode": 4055299},
}

# ---------------------------------------------------------------- shredding (§3)

NULL, BOOL, INT, FLOAT, STR, ARR, OBJ, IMAP = range(8)
KIND_NAMES = ["null", "bool", "int", "float", "string", "array", "object", "intmap"]
TUPLE_MAX = 16


def kind_of(v):
    if v is None:
        return NULL
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, float):
        return FLOAT
    if isinstance(v, str):
        return STR
    if isinstance(v, list):
        return ARR
    if isinstance(v, IntMap):
        return IMAP
    if isinstance(v, dict):
        return OBJ
    raise TypeError(type(v))


def array_lengths(v, path, out):
    """Pass 1: the set of lengths of the arrays at each path (for tuple nodes)."""
    k = kind_of(v)
    if k == ARR:
        # a tuple node needs scalar elements (§3.3): coordinate pairs, not rows
        out[path].add(len(v) if all(kind_of(x) < ARR for x in v) else -1)
        for x in v:
            array_lengths(x, path + "[]", out)
    elif k == OBJ:
        for key, x in v.items():
            array_lengths(x, f"{path}.{key}", out)
    elif k == IMAP:
        for x in v.values():
            array_lengths(x, path + "{}", out)


class Node:
    """One path of a shredded group: its streams (§3.2)."""

    def __init__(self, path, lens_at):
        self.path = path
        self.lens_at = lens_at
        self.kinds = []
        self.vals = {BOOL: [], INT: [], FLOAT: [], STR: []}
        self.shapes = []  # object: shape id per object value
        self.shape_ids = {}
        self.fields = {}
        self.lens = []  # array: length per array value
        self.elem = None
        lens = lens_at.get(path, set())
        self.tuple_k = next(iter(lens)) if len(lens) == 1 and 1 <= next(iter(lens)) <= TUPLE_MAX else None
        self.pos = None
        self.mlens, self.mkeys, self.mval = [], [], None  # intmap

    def add(self, v):
        k = kind_of(v)
        self.kinds.append(k)
        if k in self.vals:
            self.vals[k].append(v)
        elif k == OBJ:
            shape = tuple(v.keys())
            sid = self.shape_ids.setdefault(shape, len(self.shape_ids))
            self.shapes.append(sid)
            for key, x in v.items():
                child = self.fields.get(key)
                if child is None:
                    child = self.fields[key] = Node(f"{self.path}.{key}", self.lens_at)
                child.add(x)
        elif k == ARR:
            if self.tuple_k is not None:
                if self.pos is None:
                    self.pos = [Node(f"{self.path}[{i}]", {}) for i in range(self.tuple_k)]
                for i, x in enumerate(v):
                    self.pos[i].add(x)
            else:
                self.lens.append(len(v))
                if self.elem is None:
                    self.elem = Node(self.path + "[]", self.lens_at)
                for x in v:
                    self.elem.add(x)
        elif k == IMAP:
            self.mlens.append(len(v))
            if self.mval is None:
                self.mval = Node(self.path + "{}", self.lens_at)
            for key, x in v.items():
                self.mkeys.append(key)
                self.mval.add(x)

    def columns(self):
        """(path, stream, kind-of-values, list) for every stream that is stored."""
        if len(set(self.kinds)) > 1:
            yield self.path, "kind", "int", self.kinds
        for k, vs in self.vals.items():
            if vs:
                yield self.path, KIND_NAMES[k], {BOOL: "bool", INT: "int", FLOAT: "float", STR: "str"}[k], vs
        if len(self.shape_ids) > 1:
            yield self.path, "shape", "int", self.shapes
        for child in self.fields.values():
            yield from child.columns()
        if self.lens:
            yield self.path, "len", "int", self.lens
        if self.elem is not None:
            yield from self.elem.columns()
        for p in self.pos or ():
            yield from p.columns()
        if self.mlens:
            yield self.path, "len", "int", self.mlens
            yield self.path, "key", "int", self.mkeys
            yield from self.mval.columns()

    def meta_bytes(self):
        """The node table entry (§4.2): kind set, key id, flags, shape table."""
        n = 4
        for shape in self.shape_ids:
            n += 1 + len(shape)  # varint count + key ids (< 128 keys here)
        for c in list(self.fields.values()) + (self.pos or []) + [x for x in (self.elem, self.mval) if x]:
            n += c.meta_bytes()
        return n

    def keys(self):
        out = set(self.fields)
        for c in list(self.fields.values()) + (self.pos or []) + [x for x in (self.elem, self.mval) if x]:
            out |= c.keys()
        return out


def leaves(v):
    k = kind_of(v)
    if k == ARR:
        return sum(leaves(x) for x in v)
    if k in (OBJ, IMAP):
        return sum(leaves(x) for x in v.values())
    return 1


def find_groups(v, path="$"):
    """§3.1: the outermost arrays whose subtree holds at least 64 scalars."""
    k = kind_of(v)
    if k == ARR and leaves(v) >= 64:
        return [(path, v)]
    out = []
    if k == OBJ:
        for key, x in v.items():
            out += find_groups(x, f"{path}.{key}")
    elif k == ARR:
        for i, x in enumerate(v):
            out += find_groups(x, f"{path}[{i}]")
    elif k == IMAP:
        for key, x in v.items():
            out += find_groups(x, f"{path}{{{key}}}")
    return out


def shred(path, arr):
    """Shred one group; returns the root node, the column list and the
    per-element cumulative counts of every column (for the stripes)."""
    lens_at = defaultdict(set)
    for x in arr:
        array_lengths(x, path + "[]", lens_at)
    root = Node(path + "[]", lens_at)
    marks = []
    for x in arr:
        root.add(x)
        marks.append({(p, s): len(vs) for p, s, _, vs in root.columns()})
    return root, list(root.columns()), marks


def stripes(marks, n):
    """§4.3: close a stripe once one of its columns holds PAGE values."""
    bounds, start_counts, cur = [], {}, 0
    prev = {}
    for i, m in enumerate(marks):
        if max((v - prev.get(k, 0) for k, v in m.items()), default=0) >= PAGE or i + 1 - cur >= 65536:
            bounds.append((cur, i + 1))
            cur = i + 1
            prev = m
    if cur < n:
        bounds.append((cur, n))
    return bounds


# ---------------------------------------------------------------- codecs (§5)


def varint_len(x):
    n = 1
    while x >= 0x80:
        x >>= 7
        n += 1
    return n


def zz(x):
    return (x << 1) ^ (x >> 63) if -(1 << 63) <= x < (1 << 63) else None


def bitlen(x):
    return int(x).bit_length()


def pack(u, w):
    """§5.1 bit-packing: value i at bits [i·w, i·w + w), LSB first."""
    if w == 0 or len(u) == 0:
        return b""
    a = np.asarray(u, dtype=np.uint64)
    bits = ((a[:, None] >> np.arange(w, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)
    return np.packbits(bits.reshape(-1), bitorder="little").tobytes()


def vbytes(x):
    out = bytearray()
    while x >= 0x80:
        out.append((x & 0x7F) | 0x80)
        x >>= 7
    out.append(x)
    return bytes(out)


# Each integer codec returns (bytes, name). Values are Python ints in i64.


def int_for(v):
    lo, hi = min(v), max(v)
    w = bitlen(hi - lo)
    return vbytes(zz(lo)) + bytes([w]) + pack([x - lo for x in v], w), f"for{w}"


def int_for_patched(v):
    """Bit-packing with patches (§5.1, codec 0x05): u = zigzag(x − ref), ref
    the median, so outliers on either side become patches; the low w bits of
    every u are packed, and each patch stores its position (delta-packed) and
    its high bits u >> w (packed at their own width)."""
    ref = sorted(v)[len(v) // 2]
    u = [zz(x - ref) for x in v]
    if any(x is None for x in u):
        return None
    hist = Counter(bitlen(x) for x in u)
    n = len(u)
    maxw = max(hist)
    best = None
    above = n
    for w in range(0, maxw + 1):
        above -= hist.get(w, 0)
        cost = n * w / 8 + above * (maxw - w + bitlen(n)) / 8
        if best is None or cost < best[0]:
            best = (cost, w)
    w = best[1]
    pos = [i for i, x in enumerate(u) if bitlen(x) > w]
    low = [x & ((1 << w) - 1) for x in u]
    hi = [u[i] >> w for i in pos]
    body = vbytes(zz(ref)) + bytes([w]) + pack(low, w) + vbytes(len(pos))
    if pos:
        pd = [pos[0]] + [b - a for a, b in zip(pos, pos[1:])]
        pw, hw = bitlen(max(pd)), bitlen(max(hi))
        body += bytes([pw, hw]) + pack(pd, pw) + pack(hi, hw)
    return body, f"patch{w}"


def int_delta(v):
    if len(v) < 2:
        return None
    d = [b - a for a, b in zip(v, v[1:])]
    if any(zz(x) is None for x in d):
        return None
    inner = best_int(d, allow_delta=False, allow_dict=False)
    return vbytes(zz(v[0])) + inner[0], "delta>" + inner[1]


def int_rle(v):
    vals, runs = [], []
    for x in v:
        if vals and vals[-1] == x:
            runs[-1] += 1
        else:
            vals.append(x)
            runs.append(1)
    if len(vals) * 3 > len(v):
        return None
    a = best_int(vals, allow_rle=False)
    b = best_int(runs, allow_rle=False)
    return vbytes(len(vals)) + a[0] + b[0], f"rle[{a[1]}/{b[1]}]"


def int_dict(v):
    d = sorted(set(v))
    if len(d) * 2 > len(v) or len(d) > 65536:
        return None
    ix = {x: i for i, x in enumerate(d)}
    w = bitlen(len(d) - 1)
    inner = best_int(d, allow_dict=False, allow_rle=False)
    return vbytes(len(d)) + inner[0] + bytes([w]) + pack([ix[x] for x in v], w), f"dict{len(d)}"


def int_const(v):
    if all(x == v[0] for x in v):
        return vbytes(zz(v[0])), "const"
    return None


def sample(v):
    """§6: ten runs of 64 consecutive values spread evenly over the page."""
    n = len(v)
    if n <= SAMPLE_RUNS * SAMPLE_RUN:
        return v
    out = []
    step = (n - SAMPLE_RUN) / (SAMPLE_RUNS - 1)
    for r in range(SAMPLE_RUNS):
        s = int(r * step)
        out += v[s : s + SAMPLE_RUN]
    return out


def best_int(v, allow_delta=True, allow_dict=True, allow_rle=True, use_sample=True):
    """The selector (§6): every candidate on the sample, the winner on all."""
    if not v:
        return b"", "empty"
    c = int_const(v)
    if c:
        return (bytes([0x01]) + c[0], c[1])
    cands = [(0x02, int_for), (0x05, int_for_patched)]
    if allow_delta:
        cands.append((0x03, int_delta))
    if allow_rle:
        cands.append((0x04, int_rle))
    if allow_dict:
        cands.append((0x06, int_dict))
    s = sample(v) if use_sample and len(v) > SAMPLE_RUNS * SAMPLE_RUN else v
    scored = []
    for cid, f in cands:
        r = f(s)
        if r is not None:
            scored.append((len(r[0]), cid, f))
    scored.sort(key=lambda t: t[0])
    for _, cid, f in scored:
        if cid in (0x02, 0x05):
            # FOR and patched sizes follow from a bit-width histogram of the
            # whole page (one cheap pass), so the sample does not decide them:
            # a sample can miss the outliers that make FOR expensive.
            a, b = int_for(v), int_for_patched(v)
            if b is not None and len(b[0]) < len(a[0]):
                return bytes([0x05]) + b[0], b[1]
            return bytes([0x02]) + a[0], a[1]
        r = f(v)
        if r is not None:
            return bytes([cid]) + r[0], r[1]
    r = int_for(v)
    return bytes([0x02]) + r[0], r[1]


# Floats (§5.2)

POW10 = [10.0**e for e in range(23)]


def dec_exponent(a):
    """Smallest e in 0..22 for which most of the sample round-trips as
    (float)i / 10^e; None if none reaches 90 %."""
    best = None
    for e in range(0, 23):
        p = POW10[e]
        with np.errstate(all="ignore"):
            i = np.rint(a * p)
            ok = (np.abs(i) <= 2.0**53) & (i / p == a) & ~((a == 0) & np.signbit(a))
        frac = ok.mean() if len(a) else 0
        if best is None or frac > best[1] + 1e-9:
            best = (e, frac)
        if frac >= 0.999:
            break
    return best[0] if best[1] >= 0.9 else None


def float_dec(v, e=None):
    a = np.asarray(v, dtype=np.float64)
    if e is None:
        e = dec_exponent(np.asarray(sample(v)))
        if e is None:
            return None
    p = POW10[e]
    with np.errstate(all="ignore"):
        i = np.rint(a * p)
        ok = (np.abs(i) <= 2.0**53) & (i / p == a) & ~((a == 0) & np.signbit(a))
    ints = [int(x) if o else 0 for x, o in zip(i.tolist(), ok.tolist())]
    # exceptions: fill with the previous good integer so deltas stay small
    exc = [k for k, o in enumerate(ok.tolist()) if not o]
    for k in exc:
        ints[k] = ints[k - 1] if k else 0
    inner = best_int(ints)
    body = bytes([e]) + inner[0] + vbytes(len(exc))
    if exc:
        pd = [exc[0]] + [b - a_ for a_, b in zip(exc, exc[1:])]
        pw = bitlen(max(pd))
        body += bytes([pw]) + pack(pd, pw) + a[exc].tobytes()
    return body, f"dec{e}>{inner[1]}" + (f"+{len(exc)}x" if exc else "")


def float_dec_ulp(v, e=None):
    """Decimal with ulp residuals (§5.2 codec 0x15): i = rint(v·10^e), the
    decimal's nearest double D = i / 10^e, and r = bits(v) − bits(D) mod 2^64
    as a signed integer; decode bits(v) = bits(D) + r. Exact for every input
    with |v·10^e| < 2^53; the residual stream is small when the doubles are
    decimals plus a little arithmetic noise (GeoJSON from GIS pipelines)."""
    a = np.asarray(v, dtype=np.float64)
    if not np.isfinite(a).all():
        return None
    if e is None:
        s = np.asarray(sample(v), dtype=np.float64)
        best = None
        for cand in range(0, 19):
            r = float_dec_ulp(s, cand)
            if r is not None and (best is None or len(r[0]) < best[0]):
                best = (len(r[0]), cand)
        if best is None:
            return None
        e = best[1]
    p = POW10[e]
    with np.errstate(all="ignore"):
        i = np.rint(a * p)
    if not (np.abs(i) <= 2.0**53).all():
        return None
    d = i / p
    r = (a.view(np.uint64) - d.view(np.uint64)).view(np.int64)
    # the decoder's rule, checked: bits(v) = bits(i / 10^e) + r (mod 2^64)
    back = ((i / p).view(np.uint64) + r.view(np.uint64)).view(np.float64)
    assert (back.view(np.uint64) == a.view(np.uint64)).all()
    ia = best_int(i.astype(np.int64).tolist())
    ra = best_int(r.tolist(), allow_delta=False)
    return bytes([e]) + ia[0] + ra[0], f"decU{e}>[{ia[1]}/{ra[1]}]"


def float_split(v):
    """ALP-RD-class (§5.2 codec 0x13): the top L bits dictionary-coded (up to 8
    entries, others patched), the low 64 − L bits packed."""
    b = np.asarray(v, dtype=np.float64).view(np.uint64)
    best = None
    for L in range(8, 17):
        left = (b >> np.uint64(64 - L)).tolist()
        cnt = Counter(left).most_common(8)
        dw = bitlen(len(cnt) - 1)
        inside = sum(c for _, c in cnt)
        exc = len(left) - inside
        size = math.ceil(len(left) * (dw + 64 - L) / 8) + exc * (2 + L / 8)
        if best is None or size < best[0]:
            best = (size, L, cnt, dw)
    _, L, cnt, dw = best
    left = (b >> np.uint64(64 - L)).tolist()
    codes = {x: i for i, (x, _) in enumerate(cnt)}
    cl = [codes.get(x, 0) for x in left]
    exc = [(k, x) for k, x in enumerate(left) if x not in codes]
    right = (b & np.uint64((1 << (64 - L)) - 1)).tolist()
    body = bytes([L, len(cnt)]) + b"".join(x.to_bytes(2, "little") for x, _ in cnt)
    body += bytes([dw]) + pack(cl, dw) + pack(right, 64 - L) + vbytes(len(exc))
    body += b"".join(vbytes(k) + x.to_bytes(2, "little") for k, x in exc)
    return body, f"split{L}"


def float_quant(v, step_log2):
    """Lossy (§5.2 codec 0x14): q = round(v / 2^t); |error| ≤ 2^(t−1)."""
    a = np.asarray(v, dtype=np.float64)
    q = np.rint(a * 2.0 ** (-step_log2)).astype(np.int64).tolist()
    inner = best_int(q)
    return bytes([step_log2 & 0xFF]) + inner[0], f"quant{step_log2}>{inner[1]}"


def best_float(v, lossy):
    if lossy is not None:
        r = float_quant(v, lossy)
        return bytes([0x14]) + r[0], r[1]
    s = sample(v)
    cands = [(0x10, lambda x: (np.asarray(x, dtype=np.float64).tobytes(), "plain")), (0x12, float_dec), (0x13, float_split), (0x15, float_dec_ulp)]
    scored = []
    for cid, f in cands:
        r = f(s)
        if r is not None:
            scored.append((len(r[0]), cid, f))
    scored.sort(key=lambda t: t[0])
    for _, cid, f in scored:
        r = f(v)
        if r is not None:
            return bytes([cid]) + r[0], r[1]


# Strings (§5.3)

NUM_RE = re.compile(r"(0|-?[1-9][0-9]*)\Z")  # never "-0", "+1" or "007"
HEX_RE = re.compile(r"0x(?:[0-9a-f][0-9a-f])*\Z")


def str_plain(v):
    bs = [s.encode() for s in v]
    lens = best_int([len(b) for b in bs])
    return lens[0] + b"".join(bs), f"plain>{lens[1]}"


def str_num(v):
    if not all(NUM_RE.match(s) for s in v):
        return None
    sig, tz = [], []
    for s in v:
        neg = s.startswith("-")
        d = s[1:] if neg else s
        t = len(d) - len(d.rstrip("0")) if d != "0" else 0
        m = int(d[: len(d) - t] if t else d)
        m = -m if neg else m
        if zz(m) is None:
            return None
        assert (str(m) + "0" * t if m else "0") == s  # exact text back
        sig.append(m)
        tz.append(t)
    a, b = best_int(sig), best_int(tz)
    return a[0] + b[0], f"num[{a[1]}/{b[1]}]"


def str_hex(v):
    if not all(HEX_RE.match(s) for s in v):
        return None
    raw = [bytes.fromhex(s[2:]) for s in v]
    lens = best_int([len(r) for r in raw])
    return lens[0] + b"".join(raw), f"hex>{lens[1]}"


def str_dict_local(v):
    d = list(dict.fromkeys(v))
    if len(d) * 2 > len(v):
        return None
    ix = {x: i for i, x in enumerate(d)}
    dv = best_str(d, allow_dict=False)
    codes = best_int([ix[x] for x in v], allow_delta=False)
    return vbytes(len(d)) + dv[0] + codes[0], f"dict{len(d)}[{dv[1]}/{codes[1]}]"


def best_str(v, allow_dict=True):
    cands = [(0x20, str_plain), (0x22, str_num), (0x23, str_hex), (0x24, fsst_encode)]
    if allow_dict:
        cands.append((0x21, str_dict_local))
    s = sample(v)
    scored = []
    for cid, f in cands:
        r = f(s)
        if r is not None:
            scored.append((len(r[0]), cid, f))
    scored.sort(key=lambda t: t[0])
    for _, cid, f in scored:
        r = f(v)
        if r is not None:
            return bytes([cid]) + r[0], r[1]


def fsst_encode(v):
    """FSST-class (§5.3 codec 0x24): up to 255 symbols of 1..8 bytes trained on
    the values (a few greedy rounds, as the paper's), code 255 escapes a byte."""
    bs = [s.encode() for s in v]
    total = sum(map(len, bs))
    if total < 256:
        return None
    table = fsst_train(bs)
    idx = defaultdict(list)
    for i, s in enumerate(table):
        idx[s[0]].append((s, i))
    for k in idx:
        idx[k].sort(key=lambda t: -len(t[0]))
    out = bytearray()
    lens = []
    for b in bs:
        start = len(out)
        i = 0
        while i < len(b):
            for s, code in idx.get(b[i], ()):
                if b.startswith(s, i):
                    out.append(code)
                    i += len(s)
                    break
            else:
                out += bytes([255, b[i]])
                i += 1
        lens.append(len(out) - start)
    head = bytes([len(table)]) + bytes(len(s) for s in table) + b"".join(table)
    ln = best_int(lens)
    return head + ln[0] + bytes(out), f"fsst{len(table)}>{ln[1]}"


def fsst_train(bs, rounds=5):
    table = []
    data = b"\0".join(bs)[:32768]
    for _ in range(rounds):
        idx = defaultdict(list)
        for s in table:
            idx[s[0]].append(s)
        for k in idx:
            idx[k].sort(key=len, reverse=True)
        count1, count2 = Counter(), Counter()
        i, prev = 0, None
        while i < len(data):
            sym = None
            for s in idx.get(data[i], ()):
                if data.startswith(s, i):
                    sym = s
                    break
            if sym is None:
                sym = data[i : i + 1]
            count1[sym] += 1
            if prev is not None and len(prev) + len(sym) <= 8:
                count2[prev + sym] += 1
            prev = sym
            i += len(sym)
        gain = Counter()
        for s, c in count1.items():
            gain[s] = c * len(s) if len(s) > 1 else c
        for s, c in count2.items():
            gain[s] += c * len(s)
        table = [s for s, g in gain.most_common(255) if len(s) > 1 or g > 0][:255]
        table = [s for s in table if b"\0" not in s]
    return table


def encode_page(kind, vals, lossy):
    if kind == "int":
        return best_int(vals)
    if kind == "bool":
        r = best_int([int(x) for x in vals], allow_delta=False, allow_dict=False)
        return r
    if kind == "float":
        return best_float(vals, lossy)
    if kind == "str":
        return best_str(vals)
    raise ValueError(kind)


# ---------------------------------------------------------------- the estimate


ZC = {lvl: zstandard.ZstdCompressor(level=lvl) for lvl in (3, 19)}


def page_sizes(kind, vals, lossy, zlevel):
    """(plain packed size, with zstd stage, codec name) of one page."""
    body, name = encode_page(kind, vals, lossy)
    raw = varint_len(len(vals)) + varint_len(len(body)) + len(body)  # page §4.4
    z = ZC[zlevel].compress(body)
    zbody = 1 + varint_len(len(body)) + varint_len(len(z)) + len(z)  # codec 0x30, §5.5
    zs = varint_len(len(vals)) + varint_len(zbody) + zbody
    return raw, min(raw, zs), name


def shared_dict(vals):
    """§5.3: a group-level dictionary when the column repeats itself."""
    d = list(dict.fromkeys(vals))
    return d if len(d) * 2 <= len(vals) and len(d) <= 1 << 20 else None


def estimate_group(path, arr, lossy, zlevel, acc):
    root, cols, marks = shred(path, arr)
    bounds = stripes(marks, len(arr))
    total_raw = total_z = 0
    meta = root.meta_bytes() + 8
    total_raw += meta
    total_z += meta
    acc["(node table, stripe index)"][0] += meta
    acc["(node table, stripe index)"][1] += meta
    for p, stream, kind, vals in cols:
        key = (p, stream)
        dict_vals = shared_dict(vals) if kind == "str" else None
        ix = None
        if dict_vals is not None:
            body, name = best_str(dict_vals, allow_dict=False)
            head = varint_len(len(dict_vals)) + varint_len(len(body))
            zc = len(ZC[zlevel].compress(body))
            z = varint_len(len(dict_vals)) + 1 + 2 * varint_len(len(body)) + varint_len(zc) + zc
            label = f"{p} ({stream} dictionary)"
            acc[label][0] += head + len(body)
            acc[label][1] += min(head + len(body), z)
            acc[label][2].add(name)
            total_raw += head + len(body)
            total_z += min(head + len(body), z)
            ix = {x: i for i, x in enumerate(dict_vals)}
        prev = 0
        for a, b in bounds:
            end = marks[b - 1].get(key, 0)
            chunk = vals[prev:end]
            prev = end
            # stripe index entry: offset + length varints per column chunk
            idx_bytes = 4
            total_raw += idx_bytes
            total_z += idx_bytes
            acc["(node table, stripe index)"][0] += idx_bytes
            acc["(node table, stripe index)"][1] += idx_bytes
            for s in range(0, len(chunk), PAGE):
                page = chunk[s : s + PAGE]
                if ix is not None:
                    raw, zs, name = page_sizes("int", [ix[x] for x in page], None, zlevel)
                    name = "codes>" + name
                else:
                    raw, zs, name = page_sizes(kind, page, lossy, zlevel)
                label = f"{p} ({stream})"
                acc[label][0] += raw
                acc[label][1] += zs
                acc[label][2].add(re.sub(r"\d+", "", name))
                total_raw += raw
                total_z += zs
    return total_raw, total_z, root.keys(), len(bounds), len(cols)


def plain_rest(doc, groups):
    """What stays ordinary Leafwire: header, key dictionary, the containers
    above the groups (counted as slots of width 8, tags, varint counts)."""
    gids = {id(g) for _, g in groups}
    keys = set()
    size = 112

    def walk(v):
        nonlocal size
        if id(v) in gids:
            return
        k = kind_of(v)
        if k in (OBJ, IMAP, ARR):
            n = len(v)
            size += 1 + varint_len(n) + n * (1 + 8 + (1 if k != ARR else 0))
            items = v.values() if k != ARR else v
            if k == OBJ:
                keys.update(v.keys())
            for x in items:
                walk(x)
        elif k == STR:
            size += varint_len(len(v.encode())) + len(v.encode())

    walk(doc)
    return size, keys


def dict_size(keys):
    if not keys:
        return 0
    K = len(keys)
    T = 1 << max(1, math.ceil(math.log2(2 * K)))
    return 16 + 4 * (K + 1) + sum(len(k.encode()) for k in keys) + 4 * T


def anchors(doc):
    j = json.dumps(to_jsonable(doc), separators=(",", ":"), ensure_ascii=False).encode()
    m = msgpack.packb(doc, use_bin_type=True)
    out = {"compact JSON": len(j), "MessagePack (named)": len(m)}
    for name, b in (("JSON", j), ("MessagePack", m)):
        for lvl in (3, 19):
            out[f"zstd -{lvl} {name}"] = len(zstandard.ZstdCompressor(level=lvl).compress(b))
    return out


def pco_line(doc):
    """Comparison only: pco (default config) on each float column, whole."""
    if pcodec is None:
        return None
    total = 0
    for path, arr in find_groups(doc):
        _, cols, _ = shred(path, arr)
        for _, _, kind, vals in cols:
            if kind == "float" and len(vals) > 256:
                total += len(pco_standalone.simple_compress(np.asarray(vals, dtype=np.float64), pcodec.ChunkConfig()))
    return total


def run(name, doc, lossy, zlevel, acc):
    groups = find_groups(doc)
    raw = z = 0
    keys = set()
    nstripes = ncols = 0
    for path, arr in groups:
        r, zz_, k, ns, nc = estimate_group(path, arr, lossy, zlevel, acc)
        raw += r
        z += zz_
        keys |= k
        nstripes += ns
        ncols += nc
    rest, rkeys = plain_rest(doc, groups)
    d = dict_size(keys | rkeys)
    acc["(header, dictionary, plain containers)"][0] += rest + d
    acc["(header, dictionary, plain containers)"][1] += rest + d
    return raw + rest + d, z + rest + d, len(groups), nstripes, ncols


def what_if_geojson(doc, zlevel):
    """§7.2 levers for countries: back-references for repeated points (shared
    borders, walked backwards) and an entropy-coded stage (pco) on the decimal
    + residual streams. Coordinates only; prints one table."""
    pts = [(pt[0], pt[1]) for f in doc["features"] for poly in f["geometry"]["coordinates"] for ring in poly for pt in ring]
    seen, keep, runs, prevj = {}, [], [], None
    for k, pnt in enumerate(pts):
        j = seen.get(pnt)
        if j is not None:
            if prevj is not None and j == prevj - 1:
                runs[-1][2] += 1
            else:
                runs.append([k, j, 1])
            prevj = j
        else:
            keep.append(pnt)
            prevj = None
        seen.setdefault(pnt, k)
    run_bytes = sum(varint_len(a) + varint_len(b) + varint_len(c) for a, b, c in runs)
    rows = []
    for label, points, extra in (("as proposed", pts, 0), ("with copy runs", keep, run_bytes)):
        raw = z = pco = 0
        for c in (0, 1):
            col = [q[c] for q in points]
            for s in range(0, len(col), PAGE):
                r, zs, _ = page_sizes("float", col[s : s + PAGE], None, zlevel)
                raw += r
                z += zs
            if pcodec is not None:
                a = np.asarray(col, dtype=np.float64)
                i = np.rint(a * 1e9).astype(np.int64)
                res = (a.view(np.uint64) - (i / 1e9).view(np.uint64)).view(np.int64)
                for s in range(0, len(a), PAGE):
                    for arr in (i[s : s + PAGE], res[s : s + PAGE]):
                        pco += len(pco_standalone.simple_compress(arr, pcodec.ChunkConfig()))
        rows.append((label, raw + extra, z + extra, pco + extra if pcodec is not None else None))
    print(f"\n#### geojson what-if: coordinates only ({len(pts):,} points; {len(pts) - len(keep):,} repeat an earlier point, in {len(runs):,} backward runs)\n")
    print("| coordinates | packed | + zstd stage | pco on the decimal + residual streams, per page |")
    print("|---|---:|---:|---:|")
    for label, raw, z, pco in rows:
        print(f"| {label} | {fmt(raw)} | {fmt(z)} | {fmt(pco) if pco is not None else 'n/a'} |")


def fmt(n):
    return f"{n:,}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--breakdown", type=int, default=12, help="rows of the per-column breakdown per dataset")
    ap.add_argument("--what-if", action="store_true", help="also measure the §7.2 levers on countries")
    ap.add_argument("--only", help="run one dataset (substring of its name)")
    ap.add_argument("--zstd-level", type=int, default=19, choices=(3, 19))
    args = ap.parse_args()
    summary = []
    breakdowns = []
    what_if_doc = None
    for name, doc, _ in datasets():
        if args.only and args.only not in name:
            continue
        acc = defaultdict(lambda: [0, 0, set()])
        lossless, withz, ngroups, nstripes, ncols = run(name, doc, None, args.zstd_level, acc)
        row = {"dataset": name, "packed": lossless, "packed+zstd": withz, "groups": ngroups, "stripes": nstripes, "columns": ncols}
        if name == "geojson":
            lacc = defaultdict(lambda: [0, 0, set()])
            lossy, lossyz, *_ = run(name, doc, LOSSY_STEP_LOG2, args.zstd_level, lacc)
            row["lossy"] = lossy
            row["lossy+zstd"] = lossyz
        row.update(anchors(doc))
        row.update(RESULTS[name])
        p = pco_line(doc)
        if name == "geojson" and args.what_if:
            what_if_doc = doc
        summary.append(row)
        rows = sorted(acc.items(), key=lambda kv: -kv[1][0])[: args.breakdown]
        breakdowns.append((name, lossless, rows, p))
        print(f"[{name}] done", file=sys.stderr)

    print(f"Packed-mode size estimate (pages of {PAGE} values, sample {SAMPLE_RUNS}×{SAMPLE_RUN}, zstd stage level {args.zstd_level} per page where it pays)\n")
    print("| dataset | packed (lossless) | packed + zstd stage | lossy 2^-12 (+ zstd) | zstd -3 JSON | zstd -19 JSON | zstd -3 MsgPack | zstd -19 MsgPack | Tree-Buf | Avro | Leafwire today |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in summary:
        lossy = f"{fmt(r['lossy'])} ({fmt(r['lossy+zstd'])})" if "lossy" in r else ""
        print(
            f"| {r['dataset']} | {fmt(r['packed'])} | {fmt(r['packed+zstd'])} | {lossy} | {fmt(r['zstd -3 JSON'])} | {fmt(r['zstd -19 JSON'])} | "
            f"{fmt(r['zstd -3 MessagePack'])} | {fmt(r['zstd -19 MessagePack'])} | {fmt(r['tree-buf']) if 'tree-buf' in r else ''} | "
            f"{fmt(r['apache-avro']) if 'apache-avro' in r else ''} | {fmt(r['leafwire'])} |"
        )
    print()
    print("| dataset | compact JSON | MessagePack (named) | groups | stripes | columns |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in summary:
        print(f"| {r['dataset']} | {fmt(r['compact JSON'])} | {fmt(r['MessagePack (named)'])} | {r['groups']} | {r['stripes']} | {r['columns']} |")
    for name, total, rows, p in breakdowns:
        print(f"\n**{name}**: where the bytes go (lossless; largest first)\n")
        print("| path (stream) | bytes | with zstd stage | share | codecs chosen |")
        print("|---|---:|---:|---:|---|")
        for label, (raw, z, names) in rows:
            codecs = ", ".join(sorted(names))[:90]
            print(f"| `{label}` | {fmt(raw)} | {fmt(z)} | {raw / total:.1%} | {codecs} |")
        if p:
            print(f"\n(pco 1.x, default level, on the same float columns whole, for comparison: {fmt(p)} B)")
    if what_if_doc is not None:
        what_if_geojson(what_if_doc, args.zstd_level)


if __name__ == "__main__":
    main()
