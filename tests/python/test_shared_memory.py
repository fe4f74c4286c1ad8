"""Sharing a Leafwire document between processes through
`multiprocessing.shared_memory`: the example pair examples/python/shm_producer.py and
shm_consumer.py run as two separate Python processes, and, in this process, a table
column read from a shared-memory block is a numpy view of the block (zero-copy), which
holds the block open until it and the Document are released."""

import gc
import os
import subprocess
import sys
from multiprocessing import shared_memory
from pathlib import Path

import numpy as np
import pytest

import leafwire

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "python"


def run_pair(*producer_args, consumer_args=()):
    """Runs the producer, then the consumer against its block; the consumer's stdout."""
    producer = subprocess.Popen(
        [sys.executable, str(EXAMPLES / "shm_producer.py"), *producer_args],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = producer.stdout.readline()
        assert line.startswith("shm "), (line, producer.stderr.read() if producer.poll() is not None else "")
        _, name, size = line.split()
        consumer = subprocess.run(
            [sys.executable, str(EXAMPLES / "shm_consumer.py"), name, size, *consumer_args],
            capture_output=True, text=True, timeout=120,
        )
        assert consumer.returncode == 0, consumer.stderr
        assert "leaked" not in consumer.stderr, "the consumer must not own (or unlink) the block"
        # The block is still there after the consumer exits: the producer owns it.
        probe = shared_memory.SharedMemory(name=name)
        probe.close()
        from multiprocessing import resource_tracker
        resource_tracker.unregister(probe._name, "shared_memory")
    finally:
        out, err = producer.communicate("\n", timeout=60)
    assert producer.returncode == 0, err
    # The producer unlinked it on the way out.
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=name)
    return consumer.stdout


def test_producer_and_consumer_processes():
    out = run_pair()
    assert out == "column id rows=1000 sum=499500 zero-copy=True\n"


def test_the_consumer_reads_another_column():
    out = run_pair(consumer_args=["load"])
    _, column, rows, total, zero_copy = out.split()
    assert (column, rows, zero_copy) == ("load", "rows=1000", "zero-copy=True")
    assert float(total.removeprefix("sum=")) == pytest.approx(500.0)


def test_a_csv_converted_by_the_cli(tmp_path):
    cli = os.environ.get("LEAFWIRE_CLI")
    if not cli:
        pytest.skip("LEAFWIRE_CLI names the leafwire command (scripts/test.sh sets it)")
    csv = tmp_path / "meters.csv"
    csv.write_text("meter,kwh,site\n1,2.5,a\n2,,b\n3,4.25,c\n")
    out = run_pair(str(csv))
    # The first numeric column (meter); "kwh" has a missing cell: a masked sum.
    assert out == "column meter rows=3 sum=6 zero-copy=True\n"
    out = run_pair(str(csv), consumer_args=["kwh"])
    assert out == "column kwh rows=3 sum=6.75 zero-copy=True\n"


@pytest.fixture
def block():
    data = leafwire.Table.from_columns({
        "x": np.arange(100, dtype=np.float64),
        "m": np.ma.masked_array(np.arange(100, dtype=np.int32), mask=np.arange(100) % 10 == 0),
        "s": [str(i) for i in range(100)],
    }, name="t")
    shm = shared_memory.SharedMemory(create=True, size=len(data))
    shm.buf[: len(data)] = data
    yield shm, len(data)
    gc.collect()
    try:
        shm.close()
    finally:
        shm.unlink()


def inside(array, shm):
    start = np.frombuffer(shm.buf, dtype=np.uint8).__array_interface__["data"][0]
    at = array.__array_interface__["data"][0]
    return start <= at and at + array.nbytes <= start + shm.size


def test_a_column_is_a_view_of_the_block(block):
    shm, size = block
    view = shm.buf[:size]
    doc = leafwire.open(view)
    t = doc.tables()["t"]
    x = t["x"]
    assert inside(x, shm), "the numpy view's data lies in the shared block"
    assert x.sum() == 4950.0 and not x.flags.writeable
    m = t["m"]
    assert inside(np.ma.getdata(m), shm) and m.sum() == sum(i for i in range(100) if i % 10)
    arrow = t.to_arrow()
    start = np.frombuffer(shm.buf, dtype=np.uint8).__array_interface__["data"][0]
    assert start <= arrow.column("x").chunk(0).buffers()[1].address < start + shm.size
    # Another process writing the block is seen through the view (the same pages).
    shm.buf[x.__array_interface__["data"][0] - start: x.__array_interface__["data"][0] - start + 8] = np.float64(-1).tobytes()
    assert x[0] == -1.0
    del x, m, arrow, t, doc
    view.release()
    shm.close()


def test_the_release_order_the_consumer_documents(block):
    shm, size = block
    view = shm.buf[:size]
    doc = leafwire.open(view)
    x = doc.tables()["t"]["x"]
    # The Document holds a buffer export of the slice, and the numpy view holds the
    # Document: neither the slice nor the block can be released before both are gone.
    with pytest.raises(BufferError):
        view.release()
    del doc
    with pytest.raises(BufferError):
        view.release()
    assert x[1] == 1.0, "the view still reads the block"
    del x
    view.release()
    shm.close()
