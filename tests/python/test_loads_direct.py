"""`loads` walks the bytes itself (crates/leafwire-py/src/loads_fast.rs) and leaves any
document it does not like to the general decoder (loads_general.rs), which owns every error. So:

- on valid documents, `loads` gives what the reference reader gives (spec vectors, corpus,
  random values);
- on any input, `loads` gives exactly what the general decoder gives: the same value, or the
  same exception (class, message, offset, category). The general decoder is reached with
  `open(data).to_python(...)`;
- it never crashes or hangs: truncations, byte flips, shared subtrees, deep nesting.
"""

import json
import math
import random
import struct
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leafwire
from lwcorpus import JSON_FILES, file_id
from lwvectors import ARRAY, INT, header, reference, root_record, same, vector_expectation, vector_paths


def outcome(decode, data):
    """('value', v) or ('error', class, message, offset, category)."""
    try:
        return ("value", decode(data))
    except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
        return ("error", type(e), str(e), getattr(e, "offset", None), getattr(e, "category", None))


def same_outcome(a, b):
    if a[0] != b[0]:
        return False
    return same(a[1], b[1]) if a[0] == "value" else a == b


def assert_matches_general_decoder(data, **options):
    """`loads` and the general decoder agree on `data`, with typed arrays as lists."""
    fast = outcome(lambda d: leafwire.loads(d, arrays="list", **options), data)
    general = outcome(lambda d: leafwire.open(d).to_python(arrays="list", **options), data)
    assert same_outcome(fast, general), (fast, general)
    if fast[0] == "error":
        assert fast[1] is leafwire.DecodeError, fast
    return fast


def to_plain(value):
    """numpy arrays as (dtype, shape, bytes), so values with arrays compare exactly."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, list):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    return value


# -- valid documents ----------------------------------------------------------------------

# test_package.py checks every vector against the reference reader; here, that the fast
# path and the general decoder agree on each, numpy arrays included.
@pytest.mark.parametrize("path", vector_paths(), ids=[p.name for p in vector_paths()])
def test_spec_vectors_decode_as_the_general_decoder_does(path):
    data = path.read_bytes()
    assert_matches_general_decoder(data)
    if vector_expectation(path) is not None:
        assert same(to_plain(leafwire.loads(data)), to_plain(leafwire.open(data).to_python()))


@pytest.mark.parametrize("path", JSON_FILES, ids=file_id)
def test_corpus(path):
    text = path.read_bytes()
    value = json.loads(text)
    data = leafwire.dumps(value)
    assert same(leafwire.loads(data), value)
    assert same(leafwire.loads(data), reference.loads(data))
    # The JSON conversion makes typed arrays (numpy by default, lists on request).
    typed = leafwire.from_json(text)
    assert same(leafwire.loads(typed, arrays="list"), reference.loads(typed))
    assert same(to_plain(leafwire.loads(typed)), to_plain(leafwire.open(typed).to_python()))


scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(1 << 70), max_value=1 << 70)
    | st.sampled_from([0, -1, 127, 128, -129, 32767, 32768, 1 << 31, (1 << 63) - 1, -(1 << 63), 1 << 63, (1 << 64) - 1])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.text(alphabet=st.characters(min_codepoint=0x80, max_codepoint=0x10FFFF, exclude_categories=("Cs",)))
    | st.binary()
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=12)
        | st.dictionaries(st.text(max_size=8), children, max_size=12)
        | st.dictionaries(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1), children, min_size=1, max_size=12)
    ),
    max_leaves=80,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values)
def test_random_values(value):
    data = leafwire.dumps(value)
    assert same(leafwire.loads(data), value)
    assert same(leafwire.loads(data), reference.loads(data))


def test_strings_have_canonical_kinds():
    # CPython compares strings by kind first: a decoded str must have the narrowest kind
    # (compared through its size against a fresh decode) and the same hash.
    texts = ["ab", "é!", "ÿé", "\u0100x", "日本語テキスト", "a😀b", "\U0010FFFF\U0010FFFF", "x\u07ff",
             "\u0800x", "\ud7ff\ue000\uffff", "Леонард Никитин", "aé" * 50 + "日", "abcdefgh" * 3 + "😀" + "z" * 9]
    for text in texts:
        for back in (leafwire.loads(leafwire.dumps(text)), next(iter(leafwire.loads(leafwire.dumps({text: 1}))))):
            fresh = text.encode().decode()
            assert back == fresh and hash(back) == hash(fresh)
            assert sys.getsizeof(back) == sys.getsizeof(fresh), text
    # One-character ASCII and empty strings are CPython's shared singletons, as its decoder
    # gives.
    back = leafwire.loads(leafwire.dumps(["a", "é", ""]))
    assert back[0] is b"a".decode() and back[2] is b"".decode() and back[1] == "é"


def test_keys_are_interned_and_shared():
    rows = leafwire.loads(leafwire.dumps([{"name": i, "value": -i} for i in range(3)]))
    assert rows[0].keys() == {"name", "value"}
    assert all(next(iter(r)) is next(iter(rows[0])) for r in rows)
    assert next(iter(rows[0])) is sys.intern("name")


def test_options_and_inputs():
    data = leafwire.from_json(b'{"xs": [1.5, 2.5], "m": [[1, 2], [3, 4]], "flags": [true, false]}')
    numpy_value = leafwire.loads(data)
    assert numpy_value["xs"].dtype == np.float64 and numpy_value["m"].shape == (2, 2)
    assert leafwire.loads(data, arrays="list") == {"xs": [1.5, 2.5], "m": [[1, 2], [3, 4]], "flags": [True, False]}
    for buffer in (bytearray(data), memoryview(data)):
        assert same(to_plain(leafwire.loads(buffer)), to_plain(numpy_value))
    with pytest.raises(ValueError):
        leafwire.loads(data, arrays="tuple")
    big = {"n": 1 << 70, "u": (1 << 64) - 1, "b": b"\x00\xff", "i": {-5: "x", 1 << 40: None}}
    assert leafwire.loads(leafwire.dumps(big)) == big


# -- hostile documents ----------------------------------------------------------------------

def hostile_seeds():
    return [
        leafwire.dumps({"a": [1, "two", 3.5, None, b"b", True], "b": 1 << 70, "c": {i: str(i) for i in range(12)},
                        "d": {f"k{i}": i for i in range(12)}, "é": ["日本", "Леонард", "x" * 40]}),
        leafwire.dumps([[1.5, -2.5], [3, 4], [], {}, "", (1 << 64) - 1, -(1 << 63)]),
        leafwire.from_json(b'{"xs": [1.5, 2.5, 3], "m": [[1, 2], [3, 4]], "t": [true, false], "s": "text"}'),
    ]


def test_truncations():
    for data in hostile_seeds():
        for n in range(len(data)):
            result = assert_matches_general_decoder(data[:n])
            assert result[0] == "error"


def test_byte_flips():
    for data in hostile_seeds():
        for i in range(112, len(data)):  # header flips fail the CRC or the magic: tested elsewhere
            for bit in (0x01, 0x04, 0x10, 0x80):
                flipped = bytearray(data)
                flipped[i] ^= bit
                assert_matches_general_decoder(bytes(flipped))


def test_random_corruptions():
    rng = random.Random(5)
    seeds = hostile_seeds()
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(112, len(data))] = rng.randrange(256)
        fast = assert_matches_general_decoder(bytes(data))
        if fast[0] == "value" and outcome(leafwire.validate, bytes(data))[0] == "value":
            # The lazy reader accepts some documents a validating reader rejects (spec §9),
            # and reads them differently from the reference reader (a masked f64 element past
            # 2^63 saturates in Rust); valid documents read the same.
            assert same(fast[1], reference.loads(bytes(data)))


def _dag(levels):
    """Arrays each holding two pointers to the next: 2^levels values in 24 × levels bytes."""
    body = bytearray()
    for i in range(levels):
        last = i + 1 == levels
        nxt = 112 + 24 * (i + 1)
        block = bytes([3, 2]) + bytes([INT, INT] if last else [ARRAY, ARRAY]) + bytes(4)
        body += block + struct.pack("<QQ", *((1, 2) if last else (nxt, nxt)))
    return header(root_record(1, 112, ARRAY, 0, 112 + len(body))) + bytes(body)


def test_shared_subtrees_run_out_of_budget():
    assert leafwire.loads(_dag(4)) == [[[[1, 2]] * 2] * 2] * 2
    bomb = _dag(100)
    result = assert_matches_general_decoder(bomb)
    assert result[0] == "error" and "shared subtree" in result[2]


def _object_with_repeated_key():
    data = bytearray(leafwire.dumps({"a": 1, "b": 2}))
    root = struct.unpack_from("<Q", data, 24)[0]
    data[root + 2 + 2 + 1] = 0  # the second key id (after layout, count and two tags) → "a"
    return bytes(data)


def test_repeated_keys():
    result = assert_matches_general_decoder(_object_with_repeated_key())
    assert result[0] == "error" and "repeated key" in result[2]


def test_invalid_utf8():
    for value in ("é" * 3, {"é": 1}, ["abc", "日本"]):
        data = bytearray(leafwire.dumps(value))
        i = data.index("é".encode()[:1] if "é" in str(value) else "日".encode()[:1], 112)
        for bad in (0xFF, 0xC0, 0xED, 0x80, 0xF5):
            data[i] = bad
            result = assert_matches_general_decoder(bytes(data))
            # ED followed by 97 A5 (from 日) is U+D5E5, valid; every other lead here is not.
            assert result[0] == "error" or bad == 0xED


# -- depth ------------------------------------------------------------------------------------

@pytest.mark.parametrize("wrap", [lambda v: [v], lambda v: {"k": v}, lambda v: {7: v}])
def test_depth_limit(wrap):
    value = None
    for _ in range(50):
        value = wrap(value)
    data = leafwire.dumps(value, max_depth=50)
    assert leafwire.loads(data, max_depth=50) == value
    result = assert_matches_general_decoder(data, max_depth=49)
    assert result[0] == "error" and result[4] == "depth_limit"
    deep = leafwire.from_json("[" * 1024 + "]" * 1024, max_depth=1024)
    back, levels = leafwire.loads(deep, max_depth=leafwire.MAX_DEPTH_CAP), 1
    while back:
        back, levels = back[0], levels + 1
    assert levels == 1024
    assert assert_matches_general_decoder(deep)[4] == "depth_limit"


def test_floats_keep_their_bits():
    values = [-0.0, math.inf, -math.inf, math.nan, 5e-324, 1.7976931348623157e308]
    back = leafwire.loads(leafwire.dumps(values))
    assert [struct.pack("<d", v) for v in back] == [struct.pack("<d", v) for v in values]


def test_the_collector_is_paused_only_during_the_walk():
    """`loads` holds the cyclic collector off while it builds its tree; afterwards the
    collector is as it was, after a success or an error, and the objects made are tracked
    as any others (a cycle made from them later is still collected)."""
    import gc
    import weakref

    data = leafwire.dumps({"rows": [[1.5, 2.5]] * 2000, "names": [{"n": "x"}] * 100})
    assert gc.isenabled()
    value = leafwire.loads(data)
    assert gc.isenabled() and gc.is_tracked(value) and gc.is_tracked(value["rows"][0])
    with pytest.raises(leafwire.DecodeError):
        leafwire.loads(data[:-9])
    assert gc.isenabled()
    gc.disable()
    try:
        leafwire.loads(data)
        assert not gc.isenabled()
    finally:
        gc.enable()

    class Box:
        pass

    rows = leafwire.loads(data)["rows"]
    box = Box()
    box.rows, probe = rows, weakref.ref(box)
    rows.append(box)
    del box, rows
    gc.collect()
    assert probe() is None


# -- keys kept between calls (crates/leafwire-py/src/key_cache.rs) -----------------------------

def _keys_for_the_cache():
    """Keys of every kind the cache meets: more than its slots (so slots are taken over),
    lengths about its limit, texts alike but for their last byte, keys it does not keep."""
    keys = [f"key_{i}" for i in range(3000)]
    keys += ["", "a", "é", "日本", "k" * 63, "k" * 64, "k" * 65, "k" * 64 + "é", "x" * 200]
    keys += [f"same_prefix_{c}" for c in "abcdefgh"]
    return keys


def test_keys_kept_between_calls_are_the_keys_of_each_document():
    keys = _keys_for_the_cache()
    rng = random.Random(7)
    documents = []
    for n in range(6):
        chosen = rng.sample(keys, 800)
        documents.append({k: [n, k] for k in chosen})
    documents.append({k: i for i, k in enumerate(keys)})
    # Each document three times, interleaved: later calls find keys of the earlier ones.
    for _ in range(3):
        for doc in documents:
            data = leafwire.dumps(doc)
            back = leafwire.loads(data)
            assert back == doc and list(back) == list(doc)
            assert_matches_general_decoder(data)


def test_kept_keys_are_interned_strings():
    name = "a_key_of_its_own_" + str(random.Random().random())
    data = leafwire.dumps([{name: 1}, {name: 2}])
    first = leafwire.loads(data)
    del first
    again = leafwire.loads(data)
    assert all(next(iter(row)) is sys.intern(name) for row in again)
    assert again == [{name: 1}, {name: 2}]


def test_loads_from_threads():
    import threading

    documents = [{f"t{t}_{i % 50}_{'x' * (i % 70)}": i for i in range(400)} for t in range(4)]
    encoded = [leafwire.dumps(d) for d in documents]
    failures = []

    def work(t):
        for _ in range(30):
            for j, data in enumerate(encoded):
                if leafwire.loads(data) != documents[j]:
                    failures.append((t, j))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures
