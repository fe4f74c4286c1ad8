"""Tables (spec §15) in Python: `leafwire.Table` (zero-copy numpy columns, a zero-copy
pyarrow.Table and the Arrow PyCapsule stream), `Document.tables()`, `loads` of a table,
`Table.from_columns`, and malformed table blocks as DecodeError."""

import struct

import numpy as np
import pytest

import leafwire
from lwvectors import VECTOR_DIR, reference, same

pa = pytest.importorskip("pyarrow")

VECTOR = VECTOR_DIR / "table_columns.lw"


def make(**kw):
    columns = {
        "i": np.array([1, -2, 3, 40000], dtype=np.int32),
        "u": np.array([1, 2, 3, 2**63], dtype=np.uint64),
        "f": np.ma.masked_array([0.5, 1.5, 2.5, -1.0], mask=[False, True, False, False]),
        "f32": np.array([1.25, 2, 3, 4], dtype=np.float32),
        "b": np.array([True, False, True, True]),
        "s": ["a", None, "héllo", ""],
        "day": np.array(["2020-01-01", "NaT", "1969-12-31", "2000-02-29"], dtype="datetime64[D]"),
        "ts": np.array(["2020-01-01T00:00:01.5", "1970-01-01", "NaT", "2038-01-19T03:14:08"], dtype="datetime64[ms]"),
        "ns": np.array([0, 1, 2, 3], dtype="datetime64[ns]"),
    }
    return leafwire.Table.from_columns(columns, zones={"ts": "UTC"}, **kw)


@pytest.fixture(scope="module")
def doc():
    return leafwire.open(make())


def address(array):
    return array.__array_interface__["data"][0]


# -- reading ---------------------------------------------------------------------------

def test_values_read_back(doc):
    t = doc.root
    assert isinstance(t, leafwire.Table)
    assert t.rows == len(t) == 4
    assert t.columns == ["i", "u", "f", "f32", "b", "s", "day", "ts", "ns"] == list(t)
    assert t["i"].dtype == np.int32 and t["i"].tolist() == [1, -2, 3, 40000]
    assert t["u"].dtype == np.uint64 and t["u"].tolist() == [1, 2, 3, 2**63]
    assert t["f32"].dtype == np.float32 and t["f32"].tolist() == [1.25, 2, 3, 4]
    assert t["b"].dtype == np.bool_ and t["b"].tolist() == [True, False, True, True]
    assert t["s"] == ["a", None, "héllo", ""]
    f = t["f"]
    assert isinstance(f, np.ma.MaskedArray) and f.mask.tolist() == [False, True, False, False]
    assert f.tolist() == [0.5, None, 2.5, -1.0]
    day = t["day"]
    assert day.dtype == np.dtype("datetime64[D]") and day.mask.tolist() == [False, True, False, False]
    assert str(day[0]) == "2020-01-01" and str(day[3]) == "2000-02-29"
    ts = t["ts"]
    assert ts.dtype == np.dtype("datetime64[ms]") and ts.mask.tolist() == [False, False, True, False]
    assert str(ts[0]) == "2020-01-01T00:00:01.500"
    assert t.column_type("ts") == ("timestamp[ms]", "UTC")
    assert t.column_type("day") == ("date", "")
    assert t.column_type("s") == ("string", "")
    assert t.column_type(0) == ("i32", "")
    assert t.null_count("f") == 1 and t.null_count("i") == 0
    assert t["ns"].dtype == np.dtype("datetime64[ns]") and t["ns"].view("i8").tolist() == [0, 1, 2, 3]
    assert t[-1].dtype == np.dtype("datetime64[ns]")
    with pytest.raises(KeyError):
        t["nope"]
    with pytest.raises(IndexError):
        t[9]
    assert "s" in t and "nope" not in t


def test_columns_are_read_only_views_of_the_document(tmp_path):
    path = tmp_path / "t.lw"
    path.write_bytes(make())
    doc = leafwire.open(path)
    t = doc.root
    i, again = t["i"], t["i"]
    assert np.shares_memory(i, again)
    assert not i.flags.writeable
    # The view's base chain ends at the document, which keeps the mapping alive.
    assert i.base is doc
    assert np.shares_memory(t["f"].data, t["f"].data)
    ts = t["ts"]
    assert np.shares_memory(ts.data, t["ts"].data)
    del doc, t
    assert i.tolist() == [1, -2, 3, 40000]


def test_arrow_buffers_are_the_numpy_views(doc):
    t = doc.root
    table = t.to_arrow()
    assert table.num_rows == 4
    assert table.schema.field("i").type == pa.int32()
    assert table.schema.field("u").type == pa.uint64()
    assert table.schema.field("f32").type == pa.float32()
    assert table.schema.field("b").type == pa.bool_()
    assert table.schema.field("s").type == pa.string()
    assert table.schema.field("day").type == pa.date32()
    assert table.schema.field("ts").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("ns").type == pa.timestamp("ns")
    for name in ("i", "u", "f32", "ts", "ns"):
        arrow = table.column(name).chunk(0)
        view = t[name]
        data = view.data if isinstance(view, np.ma.MaskedArray) else view
        assert arrow.buffers()[1].address == address(data), name
    assert table.column("i").to_pylist() == [1, -2, 3, 40000]
    assert table.column("f").to_pylist() == [0.5, None, 2.5, -1.0]
    assert table.column("s").to_pylist() == ["a", None, "héllo", ""]
    assert table.column("b").to_pylist() == [True, False, True, True]
    assert [str(d) if d else None for d in table.column("day").to_pylist()] == ["2020-01-01", None, "1969-12-31", "2000-02-29"]
    assert table.column("ts").null_count == 1
    # The date32 days are the document's int32 counts, not a copy.
    day = table.column("day").chunk(0)
    assert day.buffers()[0] is not None
    table.validate(full=True)


def test_arrow_capsule_stream(doc):
    t = doc.root
    assert pa.table(t).equals(t.to_arrow())
    reader = pa.RecordBatchReader.from_stream(t)
    assert reader.read_all().num_rows == 4


def test_arrow_outlives_the_document():
    t = leafwire.open(make()).root
    table = t.to_arrow()
    del t
    assert table.column("s").to_pylist() == ["a", None, "héllo", ""]


def test_polars():
    pl = pytest.importorskip("polars")
    t = leafwire.open(make()).root
    frame = pl.DataFrame(t)
    assert frame.shape == (4, 9)
    assert frame["s"].to_list() == ["a", None, "héllo", ""]
    assert frame["f"].to_list() == [0.5, None, 2.5, -1.0]
    assert pl.from_arrow(t.to_arrow())["i"].to_list() == [1, -2, 3, 40000]


def test_pandas():
    pytest.importorskip("pandas")
    frame = leafwire.open(make()).root.to_pandas()
    assert list(frame.columns)[:3] == ["i", "u", "f"]
    assert frame["i"].tolist() == [1, -2, 3, 40000]


def test_duckdb():
    duckdb = pytest.importorskip("duckdb")
    t = leafwire.open(make()).root
    arrow = t.to_arrow()  # noqa: F841 - read by name in the query
    rows = duckdb.sql("select sum(i) as n, count(f) as c from arrow").fetchall()
    assert rows == [(40002, 3)]


# -- the vector, tables(), pointers ----------------------------------------------------

def test_spec_vector():
    data = VECTOR.read_bytes()
    doc = leafwire.open(data)
    assert list(doc.tables()) == ["/t"]
    t = doc["t"]
    assert isinstance(t, leafwire.Table) and isinstance(doc.pointer("/t"), leafwire.Table)
    want = reference.loads(data)["t"]
    assert same(t.to_python(arrays="list"), want)
    assert same(leafwire.loads(data, arrays="list")["t"], want)
    numpy_mode = leafwire.loads(data)["t"]
    assert numpy_mode["id"].dtype == np.int16 and numpy_mode["day"].dtype == np.int32
    assert numpy_mode["x"] == [0.5, None, -3.0] and numpy_mode["name"] == ["héllo", None, ""]
    assert t.to_arrow().column("at").type == pa.timestamp("ms", tz="UTC")


def test_loads_of_a_table(tmp_path):
    data = make(name="readings")
    value = leafwire.loads(data)
    assert value["name"] == "readings"
    cells = value["data"]
    assert isinstance(cells["i"], np.ndarray) and cells["i"].tolist() == [1, -2, 3, 40000]
    assert cells["f"] == [0.5, None, 2.5, -1.0]
    assert cells["s"] == ["a", None, "héllo", ""]
    assert same(leafwire.loads(data, arrays="list"), reference.loads(data))
    # A lazily opened document's to_python gives views.
    path = tmp_path / "t.lw"
    path.write_bytes(data)
    doc = leafwire.open(path)
    view = doc.to_python()["data"]["i"]
    assert not view.flags.writeable and view.tolist() == [1, -2, 3, 40000]
    # dumps of that dict is a plain object.
    assert leafwire.loads(leafwire.dumps({"s": cells["s"]})) == {"s": ["a", None, "héllo", ""]}


def test_tables_by_name():
    doc = leafwire.open(make(name="readings"))
    tables = doc.tables()
    assert list(tables) == ["readings"] and tables["readings"].rows == 4
    assert isinstance(doc["data"], leafwire.Table)


def test_tables_walk_and_empty():
    doc = leafwire.open((VECTOR_DIR / "table_empty.lw").read_bytes())
    tables = doc.tables()
    assert list(tables) == [""]
    assert tables[""].rows == 0 and tables[""].columns == []
    assert tables[""].to_arrow().num_columns == 0
    assert leafwire.open(leafwire.dumps({"a": [1, 2]})).tables() == {}


def test_from_columns_round_trips_and_validates():
    data = make()
    leafwire.validate(data)
    ref = reference.loads(data)
    assert ref["s"] == ["a", None, "héllo", ""]
    assert ref["f"] == [0.5, None, 2.5, -1.0]
    assert ref["day"][1] is None and ref["ts"][2] is None
    assert ref["u"] == [1, 2, 3, 2**63]
    data = leafwire.Table.from_columns({"n": [1, None, 3], "x": [1, 2.5, None], "b": [True, None, False]})
    t = leafwire.open(data).root
    assert t.column_type("n") == ("i64", "") and t.column_type("x") == ("f64", "") and t.column_type("b") == ("bool", "")
    assert same(reference.loads(data), {"n": [1, None, 3], "x": [1.0, 2.5, None], "b": [True, None, False]})
    with pytest.raises(leafwire.EncodeError):
        leafwire.Table.from_columns({"a": [1, 2], "b": [1]})
    with pytest.raises(ValueError):
        leafwire.Table.from_columns({"a": np.zeros((2, 2))})
    with pytest.raises(ValueError):
        leafwire.Table.from_columns({"a": ["x", 1]})


# -- malformed tables ------------------------------------------------------------------

def table_offset(data):
    doc = leafwire.open(data)
    return doc.root.offset


def test_truncations_and_flips_are_decode_errors():
    data = make()
    at = table_offset(data)
    for cut in range(at, len(data), 7):
        bad = data[:cut]
        for decode in (lambda d: leafwire.loads(d), lambda d: leafwire.open(d).root.to_arrow()):
            with pytest.raises((leafwire.DecodeError,)):
                decode(bad)
    for i in range(at, len(data)):
        for bit in (0x01, 0x80):
            bad = bytearray(data)
            bad[i] ^= bit
            bad = bytes(bad)
            for decode in (lambda d: leafwire.loads(d, arrays="list"),
                           lambda d: leafwire.open(d).root.to_arrow().validate(full=True),
                           lambda d: [leafwire.open(d).root[c] for c in leafwire.open(d).root.columns]):
                try:
                    decode(bad)
                except leafwire.DecodeError:
                    pass
            try:
                ref = reference.loads(bad)
            except reference.FormatError:
                with pytest.raises(leafwire.DecodeError):
                    leafwire.loads(bad)
            else:
                assert same(leafwire.loads(bad, arrays="list"), ref)


def test_reference_rejects_misplaced_buffers():
    data = bytearray(make())
    at = table_offset(bytes(data))
    length, q = reference._Reader(bytes(data), 0, 128, False).varint(at)
    body = (q + 7) // 8 * 8
    entry = body + 16
    data_at = struct.unpack_from("<Q", data, entry + 16)[0]
    struct.pack_into("<Q", data, entry + 16, data_at + 4)
    with pytest.raises(reference.FormatError, match="placement"):
        reference.loads(bytes(data))
    with pytest.raises(leafwire.DecodeError):
        leafwire.loads(bytes(data))
    with pytest.raises(leafwire.DecodeError):
        leafwire.open(bytes(data)).root


def test_to_arrow_reads_only_the_columns_asked_for():
    data = bytearray(leafwire.Table.from_columns({"a": np.arange(4, dtype=np.int64), "s": ["ok", "zzzz", None, "x"], "f": np.ones(4)}))
    at = data.index(b"zzzz")
    data[at:at + 4] = b"\xff\xfe\xff\xfe"  # not UTF-8: found when the column is handed out
    t = leafwire.open(bytes(data)).root
    got = t.to_arrow(["f", 0])
    assert got.column_names == ["f", "a"]
    assert got.column("a").to_pylist() == [0, 1, 2, 3]
    assert list(t.to_pandas(columns=["a"]).columns) == ["a"]
    with pytest.raises(leafwire.DecodeError):
        t.to_arrow()
    with pytest.raises(leafwire.DecodeError):
        t.to_arrow(["s"])
    with pytest.raises(KeyError):
        t.to_arrow(["nope"])
    with pytest.raises(IndexError):
        t.to_arrow([7])


def test_pointers_continue_into_tables():
    doc = leafwire.open(make(name="readings"))
    t = doc["data"]
    for name in t.columns:
        column = doc.pointer(f"/data/{name}")
        want = t[name]
        if isinstance(want, list):
            assert column == want
        else:
            assert np.array_equal(np.ma.getdata(column), np.ma.getdata(want)) and column.dtype == want.dtype
            assert np.array_equal(np.ma.getmaskarray(column), np.ma.getmaskarray(want))
    assert doc.pointer("/data/s/2") == "héllo"
    assert doc.pointer("/data/s/1") is None
    assert doc.pointer("/data/day/0") == np.datetime64("2020-01-01") and doc.pointer("/data/day/1") is None
    assert doc.pointer("/data/f/1") is None and doc.pointer("/data/f/2") == 2.5
    assert doc["data"].document.pointer("/data/i/3") == 40000
    with pytest.raises(KeyError):
        doc.pointer("/data/nope")
    with pytest.raises(KeyError):
        doc.pointer("/data/s/99")
    with pytest.raises(KeyError):
        doc.pointer("/data/s/0/x")
