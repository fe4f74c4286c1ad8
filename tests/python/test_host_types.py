"""Everyday Python types (spec §12): how dumps stores each (checked on the plain value any
reader sees), the round trip through loads(type=...), and the errors on both sides."""

import dataclasses
import datetime as dt
import enum
import typing
import uuid
from typing import Any, Dict, List, Literal, Optional, Tuple, Union

import numpy as np
import pytest

import leafwire
from leafwire import reference

UTC = dt.timezone.utc
PLUS_0530 = dt.timezone(dt.timedelta(hours=5, minutes=30))
MINUS_08 = dt.timezone(dt.timedelta(hours=-8))


def plain(value):
    """What a reader with no knowledge of §12 sees: the compiled reader and the independent
    pure-Python one must agree."""
    data = leafwire.dumps(value)
    got = leafwire.loads(data, arrays="list")
    assert reference.loads(data) == got if not _has_array(value) else True
    return got


def _has_array(value):
    return isinstance(value, np.ndarray) or isinstance(value, dict) and any(_has_array(v) for v in value.values())


class Color(enum.Enum):
    RED = "red"
    GREEN = 2
    PAIR = (1, 2)


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 3


@dataclasses.dataclass
class Point:
    x: float
    y: float


@dataclasses.dataclass
class Event:
    id: uuid.UUID
    at: dt.datetime
    color: Color
    points: List[Point]
    day: Optional[dt.date] = None
    tags: Dict[str, int] = dataclasses.field(default_factory=dict)
    kind: str = "event"
    count: typing.ClassVar[int] = 0  # not a field: never written


# ---- how each type is stored ----

@pytest.mark.parametrize("value, text", [
    (dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC), "2024-05-06T07:08:09+00:00"),
    (dt.datetime(2024, 5, 6, 7, 8, 9, 120000, tzinfo=PLUS_0530), "2024-05-06T07:08:09.120000+05:30"),
    (dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=MINUS_08), "1999-12-31T23:59:59.999999-08:00"),
    (dt.datetime(2024, 5, 6, 7, 8, 9), "2024-05-06T07:08:09"),
    (dt.date(2024, 2, 29), "2024-02-29"),
    (dt.time(7, 8, 9), "07:08:09"),
    (dt.time(7, 8, 9, 5, tzinfo=PLUS_0530), "07:08:09.000005+05:30"),
    (uuid.UUID("12345678-1234-5678-1234-567812345678"), "12345678-1234-5678-1234-567812345678"),
    (Color.RED, "red"),
])
def test_stored_as_text(value, text):
    assert plain(value) == text
    assert plain({"v": [value]}) == {"v": [text]}


def test_enum_is_stored_as_its_value():
    assert plain(Color.GREEN) == 2
    assert plain(Color.PAIR) == [1, 2]
    assert plain(Size.LARGE) == 3


def test_dataclass_is_an_object_of_its_fields():
    assert plain(Point(1.5, -2.0)) == {"x": 1.5, "y": -2.0}
    event = Event(uuid.UUID(int=1), dt.datetime(2024, 1, 1, tzinfo=UTC), Color.GREEN, [Point(0.0, 1.0)])
    assert plain(event) == {
        "id": "00000000-0000-0000-0000-000000000001", "at": "2024-01-01T00:00:00+00:00", "color": 2,
        "points": [{"x": 0.0, "y": 1.0}], "day": None, "tags": {}, "kind": "event",
    }
    # The class itself is not an instance.
    with pytest.raises(leafwire.EncodeError, match="type"):
        leafwire.dumps(Point)


def test_numpy_scalars_are_numbers():
    value = [np.int8(-3), np.uint64(2**64 - 1), np.float32(0.5), np.float64(2.25), np.bool_(True), np.float16(1.5)]
    assert plain(value) == [-3, 2**64 - 1, 0.5, 2.25, True, 1.5]


def test_numpy_string_arrays_are_nested_lists():
    assert plain(np.array([["ab", "c"], ["", "déf"]])) == [["ab", "c"], ["", "déf"]]
    assert plain(np.array([b"x\x00y", b"z"], dtype="S3")) == [b"x\x00y", b"z"]
    assert plain(np.array([1, "a", None], dtype=object)) == [1, "a", None]
    assert plain(np.arange(3, dtype=np.float16)) == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("dtype, unit", [
    ("datetime64[ns]", "datetime64[ns]"), ("datetime64[D]", "datetime64[D]"), ("datetime64[10ms]", "datetime64[10ms]"),
    (">M8[us]", "datetime64[us]"), ("timedelta64[s]", "timedelta64[s]"),
])
def test_numpy_time_arrays_are_int64_with_their_unit(dtype, unit):
    counts = np.array([[0, 1], [-5, np.iinfo(np.int64).min]], dtype="i8")
    array = counts.astype(counts.dtype.newbyteorder(">") if dtype.startswith(">") else "i8").view(dtype)
    data = leafwire.dumps({"t": array})
    back = leafwire.loads(data)["t"]
    assert back["$dtype"] == unit
    assert back["$data"].dtype == np.int64 and back["$data"].shape == (2, 2)
    assert back["$data"].tolist() == counts.tolist()
    assert leafwire.open(data).pointer("/t/$data").dtype == np.int64  # a typed array in the file
    typed = leafwire.loads(data, type=Dict[str, np.ndarray])["t"]
    assert typed.dtype == np.dtype(unit) and (typed.view("i8") == counts).all()


def test_numpy_time_scalars():
    value = {"at": np.datetime64("2024-01-02T03:04:05", "s"), "span": np.timedelta64(90, "m")}
    assert plain(value) == {"at": {"$dtype": "datetime64[s]", "$data": 1704164645},
                            "span": {"$dtype": "timedelta64[m]", "$data": 90}}
    back = leafwire.loads(leafwire.dumps(value), type=Dict[str, Union[np.datetime64, np.timedelta64]])
    assert back == value and back["at"].dtype == np.dtype("datetime64[s]")


# ---- the round trip with loads(type=...) ----

@pytest.mark.parametrize("value, tp", [
    (dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC), dt.datetime),
    (dt.datetime(2024, 5, 6, 7, 8, 9, 1, tzinfo=PLUS_0530), dt.datetime),
    (dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=MINUS_08), dt.datetime),
    (dt.datetime(2024, 5, 6, 7, 8, 9), dt.datetime),
    (dt.date(1, 1, 1), dt.date),
    (dt.time(23, 59, 59, 999999, tzinfo=UTC), dt.time),
    (dt.time(0, 0), dt.time),
    (uuid.uuid4(), uuid.UUID),
    (Color.PAIR, Color),
    (Color.RED, Color),
    (Size.SMALL, Size),
    (Point(1.0, 2.0), Point),
    ([Point(1.0, 2.0), Point(3.0, 4.0)], List[Point]),
    ({"a": dt.date(2024, 1, 1)}, Dict[str, dt.date]),
    ({1: uuid.UUID(int=7)}, Dict[int, uuid.UUID]),
    ((1, "a", Color.GREEN), Tuple[int, str, Color]),
    ((dt.date(2024, 1, 1),), Tuple[dt.date, ...]),
    ([None, dt.date(2024, 1, 1)], List[Optional[dt.date]]),
    ({"x": [1, 2]}, Dict[str, Any]),
    ("b", Literal["a", "b"]),
])
def test_round_trip(value, tp):
    back = leafwire.loads(leafwire.dumps(value), type=tp)
    assert back == value and type(back) is type(value)
    if isinstance(value, (dt.datetime, dt.time)):
        assert back.utcoffset() == value.utcoffset()  # the time zone (offset) is kept


def test_round_trip_of_nested_dataclasses_and_files(tmp_path):
    events = [
        Event(uuid.uuid4(), dt.datetime(2024, 1, 1, 12, tzinfo=PLUS_0530), Color.PAIR, [Point(0.0, 1.0), Point(2.5, 3.0)],
              dt.date(2024, 1, 1), {"n": 3}),
        Event(uuid.uuid4(), dt.datetime(2024, 1, 2), Color.RED, []),
    ]
    assert leafwire.loads(leafwire.dumps(events), type=List[Event]) == events
    path = tmp_path / "events.lw"
    with open(path, "wb") as fp:
        leafwire.dump(events, fp)
    with open(path, "rb") as fp:
        assert leafwire.load(fp, type=List[Event]) == events


def test_typed_arrays_asked_for_as_lists():
    data = leafwire.dumps({"x": np.arange(3.0), "y": np.arange(2)})
    assert leafwire.loads(data, type=Dict[str, List[float]]) == {"x": [0.0, 1.0, 2.0], "y": [0.0, 1.0]}


def test_rfc3339_from_other_writers():
    data = leafwire.dumps(["2024-05-06T07:08:09Z", "2024-05-06T07:08:09.5+01:00"])
    got = leafwire.loads(data, type=List[dt.datetime])
    assert got == [dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC), dt.datetime(2024, 5, 6, 6, 8, 9, 500000, tzinfo=UTC)]


def test_missing_fields_take_defaults_and_unknown_keys_are_ignored():
    data = leafwire.dumps({"id": str(uuid.UUID(int=3)), "at": "2024-01-01T00:00:00", "color": "red", "points": [], "extra": 1})
    event = leafwire.loads(data, type=Event)
    assert event == Event(uuid.UUID(int=3), dt.datetime(2024, 1, 1), Color.RED, [])


# ---- errors ----

@pytest.mark.parametrize("value, tp, path", [
    ({"a": [1, "x"]}, Dict[str, List[int]], "/a/1"),
    ([{"x": 1.0}], List[Point], "/0"),
    ({"id": "nope"}, Dict[str, uuid.UUID], "/id"),
    (["2024-13-01"], List[dt.date], "/0"),
    ([5], List[Color], "/0"),
    ([True], List[int], "/0"),
    ([1.5], List[int], "/0"),
    ({"a/b": "x"}, Dict[str, Optional[int]], "/a~1b"),
    ([1, 2], Tuple[int], ""),
    ("c", Literal["a", "b"], ""),
    ({"x": "1", "y": 2.0}, Point, "/x"),
])
def test_typed_decode_errors_name_the_path(value, tp, path):
    with pytest.raises(leafwire.DecodeError) as info:
        leafwire.loads(leafwire.dumps(value), type=tp)
    assert info.value.path == path and info.value.category == "wrong_type"
    assert isinstance(info.value, ValueError)


def test_unsupported_annotation_is_a_type_error():
    with pytest.raises(TypeError, match="unsupported type annotation"):
        leafwire.loads(leafwire.dumps(1), type=typing.Callable[[], int])


class Opaque:
    pass


@pytest.mark.parametrize("value, path", [
    (Opaque(), ""),
    ({"a": [1, {"b": Opaque()}]}, "/a/1/b"),
    ((0, {"k~/": Opaque()}), "/1/k~0~1"),
    ({7: [Opaque()]}, "/7/0"),
    (Point(1.0, Opaque()), "/y"),
    ([Color.RED, dt.timedelta(1)], "/1"),
    ({"z": np.zeros(2, dtype=np.complex64)}, "/z"),
])
def test_unsupported_types_name_the_type_and_path(value, path):
    with pytest.raises(leafwire.EncodeError) as info:
        leafwire.dumps(value)
    assert info.value.path == path and info.value.category == "wrong_type"
    leaf = value
    name = {"": "Opaque", "/1": "timedelta", "/z": "ndarray"}.get(path, "Opaque")
    assert name in str(info.value)
    if path:
        assert str(info.value).endswith(f"(at {path})")
    with pytest.raises(leafwire.EncodeError):
        leafwire.dump(leaf, __import__("io").BytesIO())


def test_default_hook_still_sees_other_types_and_host_types_win():
    # Native conventions come first (as in orjson); default only for the rest.
    assert leafwire.loads(leafwire.dumps([dt.date(2024, 1, 1), Opaque()], default=lambda o: "opaque")) == ["2024-01-01", "opaque"]


def test_enum_cycle_through_value_is_reported():
    class Box(enum.Enum):
        A = 1

    Box.A._value_ = [Box.A]
    with pytest.raises(leafwire.EncodeError):
        leafwire.dumps(Box.A)
