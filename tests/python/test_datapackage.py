"""`Document.tables()` on real Data Packages (spec §15.4): the CLI's `leafwire pack` writes a
Frictionless Data Package as one document, Python reads its tables as numpy views (masked
where missing, dates and date-times as datetime64) and as pyarrow Tables. REFIT (from the
shared data, when present) is checked against pandas.read_csv.

The CLI is the one named by LEAFWIRE_CLI (scripts/test.sh sets it); without it these skip."""

import json
import os
import subprocess

import numpy as np
import pytest

import leafwire
from lwcorpus import SHARED

pa = pytest.importorskip("pyarrow")

CLI = os.environ.get("LEAFWIRE_CLI")
needs_cli = pytest.mark.skipif(not CLI, reason="LEAFWIRE_CLI names the leafwire command (scripts/test.sh sets it)")

DESCRIPTOR = {
    "name": "tiny",
    "resources": [
        {
            "name": "readings",
            "path": "data/readings.csv",
            "format": "csv",
            "schema": {
                "fields": [
                    {"name": "id", "type": "integer"},
                    {"name": "value", "type": "number"},
                    {"name": "site", "type": "string"},
                    {"name": "day", "type": "date"},
                    {"name": "at", "type": "datetime"},
                ],
                "missingValues": ["", "NA"],
            },
        },
        {
            "name": "sites",
            "path": "data/sites.csv",
            "schema": {"fields": [{"name": "site", "type": "string"}, {"name": "height", "type": "integer"}]},
        },
    ],
}

READINGS = (
    "id,value,site,day,at\n"
    "1,0.5,north,2020-01-01,2020-01-01T00:00:00\n"
    "2,NA,south,2020-01-02,2020-01-02T12:30:00\n"
    "3,2.25,,2021-12-31,\n"
    '300,-1e3,"east, far",,2022-06-01T08:00:01\n'
)
SITES = "site,height\nnorth,10\nsouth,\neast,-4\n"


def pack(descriptor, out):
    subprocess.run([CLI, "pack", str(descriptor), "-o", str(out)], check=True, capture_output=True)
    return leafwire.open(str(out))


@pytest.fixture
def tiny(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "readings.csv").write_text(READINGS)
    (tmp_path / "data" / "sites.csv").write_text(SITES)
    (tmp_path / "datapackage.json").write_text(json.dumps(DESCRIPTOR))
    return pack(tmp_path / "datapackage.json", tmp_path / "tiny.lw")


def address(array):
    return array.__array_interface__["data"][0]


@needs_cli
def test_tables_are_the_resources_by_name(tiny):
    tables = tiny.tables()
    assert list(tables) == ["readings", "sites"]
    assert all(isinstance(t, leafwire.Table) for t in tables.values())
    assert tables["readings"].rows == 4 and tables["sites"].rows == 3
    assert tables["readings"].columns == ["id", "value", "site", "day", "at"]
    # The descriptor stays around the tables: the schema, and the path as leafwire:path.
    resource = tiny.root["resources"][0]
    assert resource["leafwire:path"] == "data/readings.csv" and "path" not in resource
    assert resource["schema"]["fields"][0]["type"] == "integer"


@needs_cli
def test_columns_are_numpy_views_masked_where_missing(tiny):
    t = tiny.tables()["readings"]
    ids = t["id"]
    # integer: the narrowest signed type that holds the column, a view of the document.
    assert not isinstance(ids, np.ma.MaskedArray) and ids.dtype.kind == "i" and ids.tolist() == [1, 2, 3, 300]
    assert not ids.flags.writeable and not ids.flags.owndata
    assert t.column_type("id") == ("i16", "")
    value = t["value"]
    assert isinstance(value, np.ma.MaskedArray) and value.dtype == np.float64
    assert value.mask.tolist() == [False, True, False, False]
    assert value.tolist() == [0.5, None, 2.25, -1000.0]
    assert t["site"] == ["north", "south", None, "east, far"]  # "" is a missing value here
    day = t["day"]
    assert day.dtype == np.dtype("datetime64[D]") and day.mask.tolist() == [False, False, False, True]
    assert day.compressed().tolist() == [np.datetime64("2020-01-01").item(), np.datetime64("2020-01-02").item(), np.datetime64("2021-12-31").item()]
    at = t["at"]
    assert at.dtype == np.dtype("datetime64[s]") and at.mask.tolist() == [False, False, True, False]
    assert at[1] == np.datetime64("2020-01-02T12:30:00") and at[3] == np.datetime64("2022-06-01T08:00:01")
    assert t.column_type("at") == ("timestamp[s]", ""), "no Z or offset: naive"
    assert [t.null_count(c) for c in t.columns] == [0, 1, 1, 1, 1]
    sites = tiny.tables()["sites"]
    assert sites["site"] == ["north", "south", "east"]
    height = sites["height"]
    assert height.dtype.kind == "i" and height.mask.tolist() == [False, True, False]
    assert height.compressed().tolist() == [10, -4]


@needs_cli
def test_to_arrow_of_each_resource(tiny):
    readings = tiny.tables()["readings"].to_arrow()
    assert readings.schema.names == ["id", "value", "site", "day", "at"]
    assert readings.schema.field("day").type == pa.date32()
    assert readings.schema.field("at").type == pa.timestamp("s")
    assert readings.schema.field("value").type == pa.float64()
    rows = readings.to_pylist()
    assert rows[0]["id"] == 1 and rows[0]["site"] == "north" and str(rows[0]["day"]) == "2020-01-01"
    assert [r["value"] for r in rows] == [0.5, None, 2.25, -1000.0]
    assert [r["site"] for r in rows] == ["north", "south", None, "east, far"]
    assert [str(r["day"]) if r["day"] else None for r in rows] == ["2020-01-01", "2020-01-02", "2021-12-31", None]
    assert [str(r["at"]) if r["at"] else None for r in rows] == [
        "2020-01-01 00:00:00", "2020-01-02 12:30:00", None, "2022-06-01 08:00:01",
    ]
    assert readings.column("id").null_count == 0 and readings.column("value").null_count == 1
    sites = tiny.tables()["sites"].to_arrow()
    assert sites.to_pydict() == {"site": ["north", "south", "east"], "height": [10, None, -4]}
    # Zero-copy: the id column's Arrow buffer is the numpy view's memory.
    t = tiny.tables()["readings"]
    assert readings.column("id").chunk(0).buffers()[1].address == address(t["id"])


REFIT = SHARED / "datapackage" / "refit-electrical-load" if SHARED is not None else None


@needs_cli
@pytest.mark.skipif(REFIT is None or not (REFIT / "datapackage.json").is_file(),
                    reason="the REFIT data package is in the shared data (../shared/data), which is absent")
def test_refit_sums_agree_with_pandas(tmp_path):
    pd = pytest.importorskip("pandas")
    doc = pack(REFIT / "datapackage.json", tmp_path / "refit.lw")
    descriptor = json.loads((REFIT / "datapackage.json").read_text())
    assert list(doc.tables()) == [r["name"] for r in descriptor["resources"]]
    house = doc.tables()["house_1.csv"]
    frame = pd.read_csv(REFIT / "data" / "House_1.csv")
    assert house.rows == len(frame)
    aggregate = house["Aggregate"]
    assert int(aggregate.sum(dtype=np.int64)) == int(frame["Aggregate"].sum())
    assert np.array_equal(np.asarray(aggregate, dtype=np.int64), frame["Aggregate"].to_numpy())
    assert house["Time"].dtype == np.dtype("datetime64[s]")
    assert np.array_equal(np.asarray(house["Time"]), pd.to_datetime(frame["Time"]).to_numpy().astype("datetime64[s]"))
    assert house.to_arrow().column("Aggregate").to_pandas().sum() == frame["Aggregate"].sum()
