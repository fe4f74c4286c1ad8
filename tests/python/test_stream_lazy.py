"""Lazy frames: iter_stream(source, lazy=True) yields leafwire.Frame objects, read as
open() reads a document, that own their bytes and outlive the iterator's next step."""

import gc
import io
import json

import pytest

import leafwire
from lwvectors import INVALID_DIR, VECTOR_DIR

STREAM_DIR = VECTOR_DIR / "stream"
POSITIVE = sorted(STREAM_DIR.glob("*.lws"))
NEGATIVE = sorted(INVALID_DIR.glob("stream_*.lws"))


def stream_bytes(messages, **options):
    out = io.BytesIO()
    with leafwire.StreamWriter(out, **options) as w:
        for m in messages:
            w.write(m)
    return out.getvalue()


def lazy(data, **options):
    return leafwire.iter_stream(io.BytesIO(data), lazy=True, **options)


def test_there_are_positive_and_negative_vectors():
    assert len(POSITIVE) >= 5 and len(NEGATIVE) >= 10


@pytest.mark.parametrize("path", POSITIVE, ids=lambda p: p.stem)
def test_vectors_read_lazily_equal_the_eager_values(path):
    data = path.read_bytes()
    eager = list(leafwire.iter_stream(io.BytesIO(data), arrays="list"))
    # Kept in a list: every frame is read after the iterator has passed it.
    frames = list(lazy(data, buffer_size=64))
    assert all(isinstance(f, leafwire.Frame) and isinstance(f, leafwire.Document) for f in frames)
    assert [f.to_python(arrays="list") for f in frames] == eager
    expected = path.with_suffix(".json")
    if expected.exists():
        assert eager == json.loads(expected.read_text(encoding="utf-8"))


def test_frames_outlive_the_reader_and_its_buffer():
    messages = [{"id": i, "name": f"n{i}", "tags": ["a", str(i)]} for i in range(200)]
    frames = list(lazy(stream_bytes(messages), buffer_size=64))
    gc.collect()
    assert [f.to_python() for f in frames] == messages
    # A node taken out of a frame keeps the frame's bytes alive on its own.
    tags = [f["tags"] for f in frames]
    del frames
    gc.collect()
    assert [t[1] for t in tags] == [str(i) for i in range(200)]


def test_indexing_get_and_pointers():
    message = {"a": [1, {"b": "x"}], "n": None, "t": [1.5, 2.5]}
    (frame,) = lazy(stream_bytes([message]))
    assert frame["a"][0] == 1
    assert frame.pointer("/a/1/b") == "x"
    assert frame.pointer("") == frame.root
    assert frame.get("missing", 7) == 7 and frame.get("n", 7) is None
    assert "a" in frame and len(frame) == 3 and list(frame) == ["a", "n", "t"]
    assert isinstance(frame.root, leafwire.ObjectNode)
    assert frame["a"].pointer("/1/b") == "x"
    with pytest.raises(leafwire.NotFoundError):
        frame.pointer("/a/5")
    with pytest.raises(KeyError):
        frame["missing"]
    assert frame.offset > 112 and frame.origin % 8 == 0
    assert "Frame" in repr(frame)
    frame.validate()


def test_scalar_frames_are_values():
    messages = [None, True, -7, 2**64 - 1, 1.5, "naïve ☃", b"\x00\xff"]
    frames = list(lazy(stream_bytes(messages)))
    assert [f.root for f in frames] == messages
    assert [f.to_python() for f in frames] == messages


def test_key_tables_change_between_frames():
    # More keys than fit in one table copy's first size, and a reset in the middle: each
    # frame keeps the keys its objects were written with.
    messages = [{f"k{i}_{j}": j for j in range(40)} for i in range(30)]
    data = stream_bytes(messages)
    frames = list(lazy(data))
    assert [dict(f.root.items()) for f in frames] == messages


def test_typed_arrays_are_numpy_arrays():
    np = pytest.importorskip("numpy")
    arrays = [np.arange(n, dtype=np.float64) * 0.5 for n in (1, 3, 8)]  # vector frames
    arrays += [np.arange(100, dtype=np.int32), np.arange(12, dtype=np.float32).reshape(3, 4)]  # typed frames
    frames = list(lazy(stream_bytes(arrays), buffer_size=64))
    for a, f in zip(arrays, frames):
        for got in (f.root, f.to_python(), f.pointer("")):
            assert isinstance(got, np.ndarray) and got.dtype == a.dtype and not got.flags.writeable
            np.testing.assert_array_equal(got, a)
    # A view keeps its frame's bytes alive.
    views = [f.root for f in frames]
    del frames
    gc.collect()
    for a, v in zip(arrays, views):
        np.testing.assert_array_equal(v, a)


def test_long_typed_frame_vector():
    np = pytest.importorskip("numpy")
    data = (STREAM_DIR / "long_frame.lws").read_bytes()
    expected = json.loads((STREAM_DIR / "long_frame.json").read_text(encoding="utf-8"))
    frames = list(lazy(data))
    for f, want in zip(frames, expected):
        got = f.root
        if isinstance(got, np.ndarray):
            assert got.tolist() == want
        else:
            assert f.to_python(arrays="list") == want


def test_a_torn_stream_raises_after_every_complete_frame():
    messages = [{"i": i} for i in range(5)]
    data = stream_bytes(messages)
    got = []
    with pytest.raises(leafwire.DecodeError, match="truncated"):
        for f in lazy(data[:-2]):
            got.append(f)
    assert [f.to_python() for f in got] == messages[:-1]


@pytest.mark.parametrize("path", NEGATIVE, ids=lambda p: p.stem)
def test_negative_vectors_raise_lazily_as_eagerly(path):
    meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    data = path.read_bytes()
    read = []
    with pytest.raises(leafwire.DecodeError):
        # A frame whose key ids the table lacks is yielded; reading it raises.
        for f in lazy(data):
            read.append(f.to_python())
    assert len(read) == meta["messages_before"]
