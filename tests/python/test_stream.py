"""Streams (spec §14) from Python: StreamWriter to files and sockets, iter_stream back,
between two processes over a real socket pair, and torn or foreign streams as errors."""

import io
import os
import socket
import subprocess
import sys
import textwrap

import pytest

import leafwire

MESSAGES = [
    None,
    True,
    -7,
    2**64 - 1,
    1.5,
    "naïve ☃",
    b"\x00\xff",
    [],
    {},
    [1, "x", None, [2.5]],
    {"id": 1, "name": "a", "tags": ["x", "y"]},
    {"id": 2, "name": "b", "tags": []},
    {str(i): i for i in range(300)},
]


def stream_bytes(messages, **options):
    out = io.BytesIO()
    with leafwire.StreamWriter(out, **options) as w:
        for m in messages:
            w.write(m)
    return out.getvalue()


@pytest.mark.parametrize("crc", [False, True])
def test_messages_read_back(crc):
    data = stream_bytes(MESSAGES, crc=crc)
    assert data[:8] == b"LWSTREAM"
    assert list(leafwire.iter_stream(io.BytesIO(data))) == MESSAGES
    # Each message decodes as loads() decodes the document dumps() makes of it.
    assert list(leafwire.iter_stream(io.BytesIO(data))) == [leafwire.loads(leafwire.dumps(m)) for m in MESSAGES]


def test_numpy_arrays_are_typed_messages():
    np = pytest.importorskip("numpy")
    arrays = [np.arange(n, dtype=np.float64) * 0.5 for n in range(1, 40)] + [np.arange(12, dtype=np.int32).reshape(3, 4)]
    got = list(leafwire.iter_stream(io.BytesIO(stream_bytes(arrays))))
    for a, b in zip(arrays, got):
        assert isinstance(b, np.ndarray) and b.dtype == a.dtype
        np.testing.assert_array_equal(a, b)
    as_lists = list(leafwire.iter_stream(io.BytesIO(stream_bytes(arrays[:3])), arrays="list"))
    assert as_lists == [a.tolist() for a in arrays[:3]]


def test_keys_are_sent_once():
    one = len(stream_bytes([{"alpha": 1, "beta": 2}]))
    two = len(stream_bytes([{"alpha": 1, "beta": 2}] * 2))
    assert two - one < one - 112, "the second message carries no key bytes"


def test_a_torn_stream_raises_after_every_complete_message():
    data = stream_bytes(MESSAGES)
    complete = []
    reader = leafwire.iter_stream(io.BytesIO(data[:-3]))
    with pytest.raises(leafwire.DecodeError, match="truncated"):
        for m in reader:
            complete.append(m)
    assert complete == MESSAGES[:-1]


def test_foreign_bytes_and_bad_sources_raise():
    with pytest.raises(leafwire.DecodeError, match="stream"):
        leafwire.iter_stream(io.BytesIO(leafwire.dumps([1, 2])))
    with pytest.raises(TypeError):
        leafwire.iter_stream(42)
    with pytest.raises(TypeError):
        leafwire.StreamWriter(42)


def test_a_sink_that_raises_raises_its_error():
    class Full:
        def write(self, data):
            raise OSError("disk full")

    w = leafwire.StreamWriter(Full(), buffer_size=64)
    with pytest.raises(OSError, match="disk full"):
        for i in range(100):
            w.write({"i": i, "pad": "x" * 50})


def test_unencodable_objects_raise_and_leave_the_stream_usable():
    out = io.BytesIO()
    w = leafwire.StreamWriter(out)
    w.write(1)
    with pytest.raises(leafwire.EncodeError):
        w.write(object())
    w.write(2)
    w.close()
    assert list(leafwire.iter_stream(io.BytesIO(out.getvalue()))) == [1, 2]


def test_a_socket_pair_in_one_process():
    a, b = socket.socketpair()
    with a, b:
        w = leafwire.StreamWriter(a)
        for m in MESSAGES:
            w.write(m)
        w.close()
        a.shutdown(socket.SHUT_WR)
        assert list(leafwire.iter_stream(b)) == MESSAGES


CHILD = textwrap.dedent(
    """
    import socket, sys
    import leafwire
    sock = socket.socket(fileno=int(sys.argv[1]))
    w = leafwire.StreamWriter(sock, buffer_size=4096)
    for i in range(int(sys.argv[2])):
        w.write({"i": i, "xs": [i, i + 0.5], "name": "n" * (i % 7)})
        if i % 1000 == 999:
            w.flush()
    w.close()
    sock.shutdown(socket.SHUT_WR)
    """
)


def test_two_processes_over_a_socket_pair():
    parent, child = socket.socketpair()
    count = 5000
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(child.fileno()), str(count)], pass_fds=[child.fileno()])
    child.close()
    with parent:
        got = list(leafwire.iter_stream(parent))
    assert proc.wait(timeout=60) == 0
    assert len(got) == count
    assert all(m == {"i": i, "xs": [i, i + 0.5], "name": "n" * (i % 7)} for i, m in enumerate(got))


def test_a_rust_written_file_reads_in_python(tmp_path):
    """The CLI's from-jsonl writes the stream; Python reads it."""
    cli = os.environ.get("LEAFWIRE_CLI")
    if not cli:
        pytest.skip("LEAFWIRE_CLI names the leafwire command (scripts/test.sh sets it)")
    lines = tmp_path / "in.jsonl"
    lines.write_text('{"a": 1}\n[1, 2.5]\n"x"\n')
    out = tmp_path / "s.lws"
    subprocess.run([cli, "from-jsonl", str(lines), "-o", str(out)], check=True)
    with open(out, "rb") as f:
        assert list(leafwire.iter_stream(f, arrays="list")) == [{"a": 1}, [1, 2.5], "x"]
