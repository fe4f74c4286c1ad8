"""Leafwire tables as a Ray Dataset (python/leafwire/ray.py): read tasks in Ray's worker
processes, row ranges, and the column projection pushed into the reader."""

import contextlib
import io
import os

import numpy as np
import pytest

import leafwire

ray = pytest.importorskip("ray")
pytest.importorskip("ray.data")
pytest.importorskip("pyarrow")

from leafwire.ray import LeafwireDatasource, read_leafwire  # noqa: E402

PARTS = 3
ROWS = 1000


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("lw-ray")
    rng = np.random.default_rng(5)
    frames = []
    for i in range(PARTS):
        a = rng.integers(0, 1 << 20, ROWS)
        x = rng.normal(size=ROWS)
        s = [None if j % 5 == 0 else f"r{i}-{j}" for j in range(ROWS)]
        (d / f"part{i}.lw").write_bytes(leafwire.Table.from_columns({"a": a, "x": x, "s": s}, name=f"part{i}"))
        frames.append((a, x, s))
    return d, frames


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


def test_reads_every_row_in_worker_processes(files, cluster):
    d, frames = files
    ds = read_leafwire(d)
    assert ds.count() == PARTS * ROWS
    assert ds.sum("a") == int(sum(int(f[0].sum()) for f in frames))
    rows = sorted(ds.take_all(), key=lambda r: (r["a"], r["x"]))
    want = sorted(zip(np.concatenate([f[0] for f in frames]).tolist(), np.concatenate([f[1] for f in frames]).tolist(), sum((f[2] for f in frames), [])), key=lambda t: t[:2])
    assert [(r["a"], r["x"], r["s"]) for r in rows] == want
    pids = set(ds.map_batches(lambda b: {"pid": np.full(len(b["a"]), os.getpid())}).unique("pid"))
    assert pids and os.getpid() not in pids


def test_rows_per_block_and_metadata(files, cluster):
    d, _ = files
    source = LeafwireDatasource(d, rows_per_block=300)
    tasks = source.get_read_tasks(2)
    assert [t.metadata.num_rows for t in tasks] == [300, 300, 300, 100] * PARTS
    assert source.estimate_inmemory_data_size() > 0
    ds = read_leafwire(d, rows_per_block=300).materialize()
    assert ds.num_blocks() == 4 * PARTS and ds.count() == PARTS * ROWS


def test_projection_is_pushed_into_the_reader(files, cluster):
    d, frames = files
    ds = read_leafwire(d).select_columns(["x"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ds.explain()
    optimized = out.getvalue().split("Logical Plan (Optimized)")[1].split("Physical Plan")[0]
    assert "Project" not in optimized and "ReadLeafwire" in optimized, out.getvalue()
    assert ds.columns() == ["x"]
    assert ds.sum("x") == pytest.approx(float(sum(f[1].sum() for f in frames)))
    assert read_leafwire(d, columns=["s"]).columns() == ["s"]
    with pytest.raises(KeyError):
        read_leafwire(d, table="nope")
