"""Leafwire tables as a Dask DataFrame (python/leafwire/dask.py): on a LocalCluster of
several worker processes, with the column projection pushed down into the reader."""

import os

import numpy as np
import pytest

import leafwire

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")

pd = pytest.importorskip("pandas")

from leafwire.dask import read_leafwire, table_names  # noqa: E402

PARTS = 5
ROWS = 1000


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("lw-dask")
    rng = np.random.default_rng(3)
    frames = []
    for i in range(PARTS):
        a = rng.integers(0, 1 << 20, ROWS)
        x = rng.normal(size=ROWS)
        s = [None if j % 7 == 0 else f"row {i}-{j}" for j in range(ROWS)]
        (d / f"part{i:02d}.lw").write_bytes(leafwire.Table.from_columns({"a": a, "x": x, "s": s}, name=f"part{i}"))
        frames.append((a, x, s))
    # Not a table file: the reader must only take .lw files of a directory.
    (d / "README.txt").write_text("not a table")
    return d, frames


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def test_sums_on_a_multi_process_cluster(files, client):
    d, frames = files
    df = read_leafwire(d)
    assert df.npartitions == PARTS
    a = np.concatenate([f[0] for f in frames])
    x = np.concatenate([f[1] for f in frames])
    assert int(df["a"].sum().compute()) == int(a.sum())
    assert df[df.a < (1 << 16)]["x"].sum().compute() == pytest.approx(float(x[a < (1 << 16)].sum()))
    assert int(df["s"].isna().sum().compute()) == PARTS * len(range(0, ROWS, 7))
    # The work ran in the workers, which are other processes.
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids


def test_projection_is_pushed_into_the_reader(files):
    d, _ = files
    opt = read_leafwire(d)["a"].optimize()
    text = opt.expr.tree_repr() if hasattr(opt.expr, "tree_repr") else str(opt.dask)
    assert "columns=['a']" in text, text


def test_globs_lists_columns_and_table_names(files):
    d, frames = files
    df = read_leafwire(str(d / "part0[0-1].lw"), columns=["x"])
    assert list(df.columns) == ["x"]
    assert df.npartitions == 2
    assert df["x"].sum().compute(scheduler="sync") == pytest.approx(float(frames[0][1].sum() + frames[1][1].sum()))
    assert table_names(d / "part00.lw") == ["part0"]
    assert read_leafwire([d / "part03.lw"], table="part3").npartitions == 1
    with pytest.raises(KeyError):
        read_leafwire([d / "part03.lw"], table="nope")
    with pytest.raises(FileNotFoundError):
        read_leafwire(d / "nothing-*.lw")


def test_rows_per_partition_cuts_big_files(files):
    d, frames = files
    df = read_leafwire(d, rows_per_partition=300)
    assert df.npartitions == PARTS * 4  # 1000 rows: 300 + 300 + 300 + 100
    got = df.compute(scheduler="sync")
    assert np.array_equal(got["a"].to_numpy(), np.concatenate([f[0] for f in frames]))
    assert [None if v is None or v is pd.NA else v for v in got["s"].tolist()] == sum((f[2] for f in frames), [])
    assert df["x"].sum().compute(scheduler="sync") == pytest.approx(float(sum(f[1].sum() for f in frames)))
    with pytest.raises(ValueError):
        read_leafwire(d, rows_per_partition=0)
