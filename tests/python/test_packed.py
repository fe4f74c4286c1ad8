"""Packed mode (spec §13) through the package: `dumps(packed=True)` and its options, and
`loads`, `open`, `to_json` and `validate` reading packed documents as they read any."""

import math

import pytest

leafwire = pytest.importorskip("leafwire")
np = pytest.importorskip("numpy")


def records(n=300):
    return {
        "meta": {"n": n, "source": "test"},
        "rows": [
            {
                "id": i,
                "name": f"item {i % 17}",
                "price": None if i % 5 == 0 else f"{i * 1000}",
                "score": i * 0.25,
                "tags": ["a", "b"][: i % 3],
                **({"extra": {"deep": [i, {"x": True}]}} if i % 4 == 0 else {}),
            }
            for i in range(n)
        ],
    }


def test_packed_documents_read_back_as_the_value():
    obj = records()
    plain = leafwire.dumps(obj)
    packed = leafwire.dumps(obj, packed=True)
    assert len(packed) * 2 < len(plain)
    assert packed[10] & 1 == 1, "feature bit 0"
    assert leafwire.loads(packed, arrays="list") == leafwire.loads(plain, arrays="list") == obj
    assert leafwire.to_json(packed) == leafwire.to_json(plain)
    leafwire.validate(packed)


def test_every_input_route_packs_to_the_same_bytes():
    # Exact built-in types take the fast planner, read back as a value without a document;
    # a subclass anywhere sends the whole object through the ordinary bytes instead.
    class Dict(dict):
        pass

    obj = records()
    obj["meta"]["big"] = 2**64 - 1
    obj["meta"]["blob"] = b"\x00\xff"
    obj["meta"]["by_id"] = {7: "seven", -3: [1.5, None]}
    routed = dict(obj, meta=Dict(obj["meta"]))
    for options in ({}, {"zstd": 3}):
        assert leafwire.dumps(obj, packed=True, **options) == leafwire.dumps(routed, packed=True, **options)
    back = leafwire.loads(leafwire.dumps(obj, packed=True), arrays="list")
    assert back == obj


def test_dicts_of_records_by_key_pack_as_objects():
    # Records by id (spec §13.7): the dict becomes the packed group of its entries.
    obj = {"version": 3, "users": {f"user-{i}": {"id": i, "name": f"name {i}", "tags": ["a", "b"][: i % 3]}
                                   for i in range(200)}}
    plain = leafwire.dumps(obj)
    packed = leafwire.dumps(obj, packed=True)
    assert len(packed) * 2 < len(plain)
    assert leafwire.loads(packed, arrays="list") == obj
    assert list(leafwire.loads(packed)["users"]) == [f"user-{i}" for i in range(200)]
    assert leafwire.to_json(packed) == leafwire.to_json(plain)
    doc = leafwire.open(packed)
    assert doc["users"]["user-42"]["name"] == "name 42"
    leafwire.validate(packed)
    from leafwire import reference
    assert reference.loads(packed) == obj


def test_open_reads_a_packed_document():
    obj = records()
    doc = leafwire.open(leafwire.dumps(obj, packed=True))
    assert doc["meta"]["n"] == 300
    assert doc["rows"][3]["name"] == "item 3"
    assert doc["rows"][8]["extra"]["deep"][1]["x"] is True
    assert doc.to_python(arrays="list") == obj


def test_zstd_and_lossy_options():
    obj = {"xs": [math.sin(i / 10) for i in range(2000)], "words": [f"w{i % 7} of the text" for i in range(500)]}
    packed = leafwire.dumps(obj, packed=True)
    zstd = leafwire.dumps(obj, packed=True, zstd=19)
    assert len(zstd) <= len(packed)
    assert leafwire.loads(zstd, arrays="list") == obj
    lossy = leafwire.dumps(obj, packed=True, lossy_float_step=-12)
    assert len(lossy) < len(packed)
    back = leafwire.loads(lossy, arrays="list")
    assert back["words"] == obj["words"]
    assert max(abs(a - b) for a, b in zip(back["xs"], obj["xs"])) <= 2.0**-13


def test_options_need_packed_and_valid_ranges():
    with pytest.raises(Exception):
        leafwire.dumps([1], zstd=3)
    with pytest.raises(Exception):
        leafwire.dumps([1], columns_only=True)
    with pytest.raises(Exception):
        leafwire.dumps([1], packed=True, zstd=0)
    with pytest.raises(Exception):
        leafwire.dumps([1], packed=True, lossy_float_step=99)


def test_numpy_arrays_keep_their_dtype():
    obj = {
        "i64": np.arange(200, dtype=np.int64),
        "f32": np.linspace(0, 1, 200, dtype=np.float32),
        "f64": np.linspace(0, 1, 200),
        "u8": np.arange(200, dtype=np.uint8),
    }
    back = leafwire.loads(leafwire.dumps(obj, packed=True))
    for key, array in obj.items():
        assert back[key].dtype == array.dtype, key
        assert np.array_equal(back[key], array), key


def test_damaged_packed_documents_raise_decode_errors():
    packed = bytearray(leafwire.dumps(records(80), packed=True))
    for i in range(112, len(packed), 13):
        bad = bytearray(packed)
        bad[i] ^= 0x5A
        try:
            leafwire.loads(bytes(bad))
        except leafwire.DecodeError:
            pass


def service_definition():
    """Configuration-like: dicts of unique keys and repeated documentation text, which
    shred into columns of a value or two each (spec §13.3's residual forms)."""
    return {
        "version": "2.0",
        "shapes": {
            f"Shape{i}": {
                "type": "structure",
                "members": {f"Field{i}": {"shape": f"Shape{(i + 1) % 80}", "documentation": f"<p>The bucket of shape {i}.</p>"}},
            }
            for i in range(80)
        },
    }


def test_what_does_not_shred_is_kept_whole_and_reads_the_same():
    obj = service_definition()
    packed = leafwire.dumps(obj, packed=True)
    columns = leafwire.dumps(obj, packed=True, columns_only=True)
    assert len(packed) < len(columns)
    for data in (packed, columns):
        leafwire.validate(data)
        assert leafwire.loads(data, arrays="list") == obj
        assert leafwire.to_json(data) == leafwire.to_json(leafwire.dumps(obj))
        assert leafwire.open(data)["shapes"]["Shape7"]["members"]["Field7"]["shape"] == "Shape8"
    from leafwire import reference
    assert reference.loads(packed) == obj
