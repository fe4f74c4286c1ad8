"""Editing table cells in place (spec §15.3): `Editor.set_cell(pointer, column, row, value)`
on a file opened with `leafwire.edit(path)` and on a bytearray; None on a column with a
validity bitmap; dates and date-times from numpy and datetime values; errors that change
nothing."""

import datetime as dt

import numpy as np
import pytest

import leafwire


def make():
    """A document {"name": "t", "data": <table>} of 4 rows; "f" and "day" have missing
    cells (so validity bitmaps), the other columns none."""
    return leafwire.Table.from_columns({
        "i": np.array([1, -2, 3, 4], dtype=np.int16),
        "u": np.array([1, 2, 3, 2**63], dtype=np.uint64),
        "f": np.ma.masked_array([0.5, 1.5, 2.5, -1.0], mask=[False, True, False, False]),
        "f32": np.array([1.25, 2, 3, 4], dtype=np.float32),
        "b": np.array([True, False, True, True]),
        "s": ["a", None, "héllo", ""],
        "day": np.array(["2020-01-01", "NaT", "1969-12-31", "2000-02-29"], dtype="datetime64[D]"),
        "ts": np.array(["2020-01-01T00:00:01.5", "1970-01-01", "2000-01-01", "2038-01-19T03:14:08"], dtype="datetime64[ms]"),
    }, name="t", zones={"ts": "UTC"})


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "t.lw"
    p.write_bytes(make())
    return p


def table(path):
    return leafwire.open(str(path)).tables()["t"]


def test_set_cell_edits_a_file_in_place(path):
    with leafwire.edit(str(path)) as ed:
        size = ed.nbytes
        ed.set_cell("/data", "i", 2, 7)
        ed.set_cell("/data", "i", -1, -32768)  # negative rows count from the end
        ed.set_cell("/data", "u", 0, 2**64 - 1)
        ed.set_cell("/data", "f", 0, 9.25)
        ed.set_cell("/data", "f", 3, 2)  # an int into a float column
        ed.set_cell("/data", "f32", 1, np.float32(0.5))
        ed.set_cell("/data", "b", 1, True)
        ed.set_cell("/data", "b", 0, np.False_)
        assert ed.garbage == 0 and ed.nbytes == size, "in place: nothing relocated"
        assert ed.pointer("/data")["i"].tolist() == [1, -2, 7, -32768], "the editor reads its edits"
    t = table(path)
    assert t["i"].dtype == np.int16 and t["i"].tolist() == [1, -2, 7, -32768]
    assert t["u"].tolist() == [2**64 - 1, 2, 3, 2**63]
    assert t["f"].tolist() == [9.25, None, 2.5, 2.0]
    assert t["f32"].tolist() == [1.25, 0.5, 3, 4]
    assert t["b"].tolist() == [False, True, True, True]
    assert t["s"] == ["a", None, "héllo", ""]
    assert leafwire.validate(path.read_bytes()) is None


def test_nothing_is_written_before_commit(path):
    before = path.read_bytes()
    ed = leafwire.edit(str(path))
    ed.set_cell("/data", "i", 0, 100)
    assert path.read_bytes() == before
    ed.close()
    assert table(path)["i"].tolist() == [1, -2, 3, 4]


def test_none_makes_a_cell_missing_and_a_value_makes_it_present(path):
    with leafwire.edit(str(path)) as ed:
        ed.set_cell("/data", "f", 2, None)  # now missing
        ed.set_cell("/data", "f", 1, 4.0)  # was missing, now present
        ed.set_cell("/data", "day", 0, None)
        ed.set_cell("/data", "day", 1, np.datetime64("2024-02-29"))
    t = table(path)
    f = t["f"]
    assert isinstance(f, np.ma.MaskedArray) and f.mask.tolist() == [False, False, True, False]
    assert f.tolist() == [0.5, 4.0, None, -1.0]
    assert t.null_count("f") == 1
    # A missing cell holds zero (spec §15.1): the data under the mask is 0.
    assert f.data[2] == 0.0
    day = t["day"]
    assert day.mask.tolist() == [True, False, False, False]
    assert str(day[1]) == "2024-02-29"
    assert t.to_arrow().column("f").to_pylist() == [0.5, 4.0, None, -1.0]


def test_dates_and_date_times(path):
    with leafwire.edit(str(path)) as ed:
        ed.set_cell("/data", "day", 0, dt.date(1999, 12, 31))
        ed.set_cell("/data", "day", 2, "2001-02-03")
        ed.set_cell("/data", "day", 3, 1)  # the count: days since 1970-01-01
        ed.set_cell("/data", "ts", 0, np.datetime64("2021-06-01T12:00:00.250"))
        ed.set_cell("/data", "ts", 1, np.datetime64("2021-06-01", "D"))  # coarser: exact
        # An aware datetime is its UTC instant (the column's counts are UTC instants).
        ed.set_cell("/data", "ts", 2, dt.datetime(2021, 6, 1, 14, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))))
        ed.set_cell("/data", "ts", 3, 5)  # the count: milliseconds
    t = table(path)
    assert [str(d) for d in t["day"]] == ["1999-12-31", "--", "2001-02-03", "1970-01-02"]
    assert t["ts"].dtype == np.dtype("datetime64[ms]")
    assert [str(v) for v in t["ts"]] == [
        "2021-06-01T12:00:00.250", "2021-06-01T00:00:00.000", "2021-06-01T12:00:00.000", "1970-01-01T00:00:00.005",
    ]


def test_a_bytearray_is_edited_and_written_back():
    data = bytearray(make())
    ed = leafwire.edit(data)
    ed.set_cell("/data", "i", 0, 11)
    ed.commit()
    assert leafwire.open(bytes(data)).tables()["t"]["i"].tolist() == [11, -2, 3, 4]


def test_a_root_table():
    raw = leafwire.Table.from_columns({"x": np.arange(3, dtype=np.int64)})
    ed = leafwire.edit(bytearray(raw))
    ed.set_cell("", "x", 1, 10)
    assert leafwire.open(ed.to_bytes()).root["x"].tolist() == [0, 10, 2]


@pytest.mark.parametrize("args, error, match", [
    (("/data", "s", 0, "b"), TypeError, "holds strings"),
    (("/data", "s", 0, None), TypeError, "holds strings"),
    (("/data", "i", 4, 1), IndexError, "out of range"),
    (("/data", "i", -5, 1), IndexError, "out of range"),
    (("/data", "i", 0, 40000), TypeError, "does not fit"),
    (("/data", "i", 0, 1.5), TypeError, "does not fit"),
    (("/data", "i", 0, 2**64), OverflowError, "64-bit"),
    (("/data", "b", 0, 2), TypeError, "does not fit"),
    (("/data", "u", 0, -1), TypeError, "does not fit"),
    (("/data", "f", 0, 2**53 + 1), TypeError, "does not fit"),
    (("/data", "f", 0, "1.5"), TypeError, "set_cell"),
    (("/data", "day", 0, np.datetime64("2020-01-01T12:00")), TypeError, "does not fit"),
    (("/data", "day", 0, 2**40), TypeError, "does not fit"),
    (("/data", "ts", 0, np.datetime64("2020-01-01T00:00:00.0000001")), TypeError, "does not fit"),
    (("/data", "ts", 0, "not a date"), TypeError, "date-time"),
    (("/data", "i", 0, None), ValueError, "validity bitmap"),
    (("/data", "nope", 0, 1), leafwire.NotFoundError, "nope"),
    (("/missing", "i", 0, 1), leafwire.NotFoundError, None),
    (("/name", "i", 0, 1), TypeError, "table"),
], ids=[
    "string-column", "string-column-none", "row-past-end", "row-before-start", "int16-overflow", "float-into-int",
    "beyond-64-bits", "bool-2", "uint-negative", "inexact-float", "str-into-float", "date-with-time",
    "date-count-overflow", "finer-than-ms", "bad-date-time-text", "none-without-bitmap", "missing-column",
    "missing-pointer", "not-a-table",
])
def test_errors_change_nothing(path, args, error, match):
    before = path.read_bytes()
    with leafwire.edit(str(path)) as ed:
        snapshot = ed.to_bytes()
        with pytest.raises(error, match=match) as info:
            ed.set_cell(*args)
        assert ed.to_bytes() == snapshot
        assert not ed.closed, "a refused edit leaves the editor usable"
    # The commit on leaving the block finds nothing to write but the unchanged values.
    assert table(path).to_python(arrays="list") == leafwire.open(before).tables()["t"].to_python(arrays="list")
    if error is leafwire.NotFoundError:
        assert info.value.path == args[0]
    if error is ValueError:
        assert info.value.category == "unsupported" and not isinstance(info.value, leafwire.DecodeError)


def test_a_closed_editor_refuses():
    ed = leafwire.edit(bytearray(make()))
    ed.close()
    with pytest.raises(ValueError, match="closed"):
        ed.set_cell("/data", "i", 0, 1)
