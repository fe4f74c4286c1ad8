"""The pure-Python reference reader of streams (reference.iter_stream, spec §14) against
the stream vectors (spec/vectors/stream/, spec/vectors/invalid/stream_*) and the
package's native reader. The vector tests need only python3 and pytest."""

import io
import json

import pytest

try:
    import leafwire
except ImportError as error:  # the reference reader's tests run without the package
    leafwire, PACKAGE_MISSING = None, error
from lwvectors import INVALID_DIR, VECTOR_DIR, reference, same

FormatError = reference.FormatError
STREAM_DIR = VECTOR_DIR / "stream"
POSITIVE = sorted(STREAM_DIR.glob("*.lws")) or [STREAM_DIR / "NO-VECTORS.lws"]
NEGATIVE = sorted(INVALID_DIR.glob("stream_*.lws")) or [INVALID_DIR / "stream_NO-VECTORS.lws"]

MESSAGES = [
    None, True, False, -7, 300, -(1 << 63), 2**64 - 1, 1 << 70, 1.5, -0.0, "naïve ☃", b"\x00\xff", [], {},
    [1, "x", None, [2.5]], {"id": 1, "name": "a", "tags": ["x", "y"]}, {"id": 2, "name": "b", "tags": []},
    {str(i): i for i in range(300)}, {-5: "a", 1 << 40: None},
]


def need_package():
    if leafwire is None:
        pytest.fail(f"the leafwire package is not installed ({PACKAGE_MISSING}): pip install .", pytrace=False)


def native(data):
    return list(leafwire.iter_stream(io.BytesIO(data), arrays="list"))


def written(messages, **options):
    out = io.BytesIO()
    with leafwire.StreamWriter(out, **options) as w:
        for m in messages:
            w.write(m)
    return out.getvalue()


def read_until_error(data):
    """(messages read, the FormatError that ended the stream)."""
    got = []
    with pytest.raises(FormatError) as info:
        for m in reference.iter_stream(data):
            got.append(m)
    return got, info.value


@pytest.mark.parametrize("path", POSITIVE, ids=lambda p: p.stem)
def test_positive_vectors_read_as_their_json(path):
    assert path.is_file(), f"{STREAM_DIR} holds no .lws vector"
    got = list(reference.iter_stream(path.read_bytes()))
    expected = path.with_suffix(".json")
    if expected.exists():
        assert got == json.loads(expected.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", POSITIVE, ids=lambda p: p.stem)
def test_positive_vectors_read_as_the_native_reader_reads_them(path):
    need_package()
    data = path.read_bytes()
    assert all(same(a, b) for a, b in zip(reference.iter_stream(data), native(data)))
    assert len(list(reference.iter_stream(data))) == len(native(data))


@pytest.mark.parametrize("path", NEGATIVE, ids=lambda p: p.stem)
def test_negative_vectors_raise_at_their_offset(path):
    assert path.is_file(), f"{INVALID_DIR} holds no stream_*.lws vector"
    meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    got, error = read_until_error(path.read_bytes())
    assert (len(got), error.offset) == (meta["messages_before"], meta["offset"]), str(error)


@pytest.mark.parametrize("crc", [False, True])
def test_written_streams_read_as_the_native_reader_reads_them(crc):
    need_package()
    data = written(MESSAGES, crc=crc)
    got = list(reference.iter_stream(data))
    assert all(same(a, b) for a, b in zip(got, native(data))) and len(got) == len(MESSAGES)
    assert got == MESSAGES


def test_typed_and_vector_frames():
    np = pytest.importorskip("numpy")
    need_package()
    arrays = [np.arange(n, dtype=np.float64) * 0.5 for n in (1, 8, 9, 40)]
    arrays += [np.array([True, False]), np.arange(6, dtype=np.int16).reshape(2, 3), np.arange(3, dtype=np.float32)]
    data = written(arrays)
    assert list(reference.iter_stream(data)) == [a.tolist() for a in arrays] == native(data)


def outcome(read, data, error_type):
    """(messages read, whether the stream ended in an error) of one reader."""
    got = []
    try:
        for m in read(data):
            got.append(m)
    except error_type:
        return got, True
    return got, False


def test_every_truncation_ends_as_the_native_reader_ends_it():
    need_package()
    messages = MESSAGES[:8] + [{"k": [1, 2]}, [0.5, 1.5]]
    data = written(messages)
    for cut in range(len(data)):
        got, failed = outcome(reference.iter_stream, data[:cut], FormatError)
        assert got == messages[:len(got)]
        # A cut at a frame's end is a clean (shorter) stream; anywhere else a torn frame.
        natively = outcome(lambda d: leafwire.iter_stream(io.BytesIO(d), arrays="list"), data[:cut], leafwire.DecodeError)
        assert (got, failed) == natively, cut


def test_every_byte_flip_of_a_crc_stream_raises():
    need_package()
    data = written([{"k": 1}, [1.5, 2.5], "text"], crc=True)
    for i in range(len(data)):
        if i == 9:
            continue  # the minor version: a 1.x reader accepts any (spec §14.1)
        flipped = bytearray(data)
        flipped[i] ^= 0x10
        with pytest.raises(FormatError):
            list(reference.iter_stream(bytes(flipped)))


def test_a_reset_frame_empties_the_key_table():
    header = b"LWSTREAM\x01\x00" + bytes(102)
    keys = bytes([4, 0x40, 1, 1]) + b"a"  # a keys frame: one key, "a"
    reset = bytes([1, 0x41])
    assert list(reference.iter_stream(header + keys + reset + keys)) == []
    with pytest.raises(FormatError, match="already holds"):
        list(reference.iter_stream(header + keys + keys))


def test_a_vector_frame_of_bools_holds_0_or_1():
    header = b"LWSTREAM\x01\x00" + bytes(102)
    # Kind 0x50: bool elements (§14.5); the second element, at offset 112 + 3, is 2.
    assert list(reference.iter_stream(header + bytes([3, 0x50, 1, 0]))) == [[True, False]]
    with pytest.raises(FormatError) as info:
        list(reference.iter_stream(header + bytes([3, 0x50, 1, 2])))
    assert info.value.offset == 115
