"""Leafwire tables as a Dask DataFrame: from one file to a cluster of machines.

``read_leafwire(paths)`` makes one partition per file, or, with ``rows_per_partition``,
cuts each file's table into row ranges so that one big file feeds many workers. Paths are
a directory of ``.lw`` files, a glob, or a list, each written by ``leafwire pack`` or
``leafwire from-csv`` or any writer of tables (spec §15). Partitions are read where the
task runs: the worker maps the file and reads only the columns the computation needs,
because Dask pushes the projection down into the reader (``df["col"].sum()`` opens each
file and touches one column). Numeric columns come out of the mapped file without a copy
into Arrow and then pandas (zero-copy where pandas allows); string columns are built once
per partition.

To scale out, point ``distributed.Client`` at a cluster whose workers can read the paths
(a shared filesystem, or the same files copied to each machine): nothing here is local
to one machine. Needs ``dask[dataframe]`` and ``pyarrow``.
"""

from leafwire._tablefiles import expand_paths, pieces, read_arrow, table_names

__all__ = ["read_leafwire", "table_names"]


class _ReadPartition:
    """The partition reader Dask calls. Its ``columns=`` keyword is how Dask pushes a
    column projection down (``df["a"].sum()`` reads only ``a``)."""

    def __init__(self, table):
        self.table = table

    def __call__(self, piece, columns=None):
        return read_arrow(piece, self.table, columns).to_pandas()


def read_leafwire(paths, *, table=None, columns=None, rows_per_partition=None):
    """A Dask DataFrame of the tables in ``paths`` (a directory, a glob or a list), one
    partition per file, or per ``rows_per_partition`` rows of each file. ``table`` names
    the table to read in files that hold several (a Data Package's resource name);
    ``columns`` restricts the columns read."""
    import dask.dataframe as dd

    parts = pieces(expand_paths(paths), table, rows_per_partition)
    columns = list(columns) if columns is not None else None
    meta = read_arrow(parts[0], table, columns).slice(0, 0).to_pandas()
    return dd.from_map(_ReadPartition(table), parts, columns=columns, meta=meta, label="read-leafwire", enforce_metadata=False)
