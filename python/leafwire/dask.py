"""Leafwire tables as a Dask DataFrame: from one file to a cluster of machines.

``read_leafwire(paths)`` makes one partition per file (per table, for files that hold
several): a directory of ``.lw`` files, a glob, or a list of paths, each written by
``leafwire pack`` or ``leafwire from-csv`` or any writer of tables (spec §15). Partitions
are read where the task runs: the worker maps the file and reads only the columns the
computation needs, because Dask pushes the projection down into the reader
(``df["col"].sum()`` opens each file and touches one column). Numeric columns come out of
the mapped file without a copy into Arrow and then pandas (zero-copy where pandas
allows); string columns are built once per partition.

To scale out, point ``distributed.Client`` at a cluster whose workers can read the paths
(a shared filesystem, or the same files copied to each machine): nothing here is local
to one machine. Needs ``dask[dataframe]`` and ``pyarrow``.
"""

import glob
import os

import leafwire

__all__ = ["read_leafwire", "table_names"]


def _paths(paths):
    if isinstance(paths, (str, os.PathLike)):
        p = os.fspath(paths)
        if os.path.isdir(p):
            found = sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".lw"))
        else:
            found = sorted(glob.glob(p)) if glob.has_magic(p) else [p]
    else:
        found = [os.fspath(p) for p in paths]
    if not found:
        raise FileNotFoundError(f"no .lw files in {paths!r}")
    return found


def table_names(path):
    """The names of the tables in one file (as ``leafwire.open(path).tables()`` gives them)."""
    return list(leafwire.open(path).tables())


def _pick(tables, table, path):
    if table is not None:
        if table not in tables:
            raise KeyError(f"{path}: no table {table!r} (it has {sorted(tables)})")
        return tables[table]
    if len(tables) != 1:
        raise ValueError(f"{path} holds {len(tables)} tables ({sorted(tables)}): pass table=NAME, or table=None with one table per file")
    return next(iter(tables.values()))


def _read(path, table, columns):
    """One partition: the table's columns (all, or `columns`) as a pandas DataFrame."""
    arrow = _pick(leafwire.open(path).tables(), table, path).to_arrow()
    if columns is not None:
        arrow = arrow.select(list(columns))
    return arrow.to_pandas()


class _ReadPartition:
    """The partition reader Dask calls. Its ``columns=`` keyword is how Dask pushes a
    column projection down (``df["a"].sum()`` reads only ``a``)."""

    def __init__(self, table):
        self.table = table

    def __call__(self, path, columns=None):
        return _read(path, self.table, columns)


def read_leafwire(paths, *, table=None, columns=None):
    """A Dask DataFrame of the tables in ``paths`` (a directory, a glob or a list), one
    partition per file. ``table`` names the table to read in files that hold several
    (a Data Package's resource name); ``columns`` restricts the columns read."""
    import dask.dataframe as dd

    files = _paths(paths)
    columns = list(columns) if columns is not None else None
    meta = _read(files[0], table, columns).iloc[:0]
    return dd.from_map(_ReadPartition(table), files, columns=columns, meta=meta, label="read-leafwire", enforce_metadata=False)
