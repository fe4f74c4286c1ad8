"""Leafwire tables as a Ray Dataset: ``ray.data`` reading ``.lw`` files in its workers.

``read_leafwire(paths)`` gives a ``ray.data.Dataset`` with one read task per file, or,
with ``rows_per_block``, per range of that many rows of each file's table. Paths are a
directory of ``.lw`` files, a glob or a list, as for ``leafwire.dask``. Each task maps its
file where it runs and hands Ray a ``pyarrow.Table`` whose buffers are the mapped file's
(no parse, no copy before Ray's own serialization). Ray's optimizer pushes column
selections down (``ds.select_columns([...])`` reads only those columns), and the planner
knows every block's row count and size before reading, from the tables' headers.

On a Ray cluster of several machines, the workers must be able to read the paths (a
shared filesystem, or the files copied to each). Needs ``ray[data]`` and ``pyarrow``.
"""

import copy
import os

import pyarrow as pa

from ray.data import read_datasource
from ray.data.block import BlockMetadata
from ray.data.datasource import Datasource, ReadTask

from leafwire._tablefiles import expand_paths, open_table, pieces, read_arrow, table_names

__all__ = ["LeafwireDatasource", "read_leafwire", "table_names"]


class LeafwireDatasource(Datasource):
    """A Ray datasource of the tables in ``paths``; see ``read_leafwire``."""

    def __init__(self, paths, *, table=None, columns=None, rows_per_block=None):
        super().__init__()
        self._files = expand_paths(paths)
        self._table = table
        self._columns = list(columns) if columns is not None else None
        self._pieces = pieces(self._files, table, rows_per_block)
        self._schema = read_arrow(self._pieces[0], table, self._columns).schema
        self._sizes = {}  # path -> (file bytes, rows, columns): see _file

    def get_name(self):
        return "Leafwire"

    # Projection pushdown: Ray calls these when a later operator uses only some columns.
    def supports_projection_pushdown(self):
        return True

    def get_projection_map(self):
        return None if self._columns is None else {c: c for c in self._columns}

    def apply_projection(self, projection_map):
        if projection_map is None:
            return self
        clone = copy.copy(self)
        clone._columns = [c for c in self._schema.names if c in projection_map]
        clone._schema = pa.schema([self._schema.field(c) for c in clone._columns])
        return clone

    def _file(self, path):
        """(file bytes, rows, columns) of a file's table, read once."""
        if path not in self._sizes:
            t = open_table(path, self._table)
            self._sizes[path] = (os.path.getsize(path), t.rows, len(t.columns))
        return self._sizes[path]

    def _piece_rows(self, piece):
        path, start, stop = piece
        return (self._file(path)[1] if stop is None else stop) - start

    def _piece_size(self, piece):
        """Bytes of the piece's selected columns: the file size's share of its rows and
        columns (the columns' data is nearly all of a table file)."""
        size, rows, ncols = self._file(piece[0])
        cols = ncols if self._columns is None else len(self._columns)
        return int(size * self._piece_rows(piece) / max(rows, 1) * cols / max(ncols, 1))

    def estimate_inmemory_data_size(self):
        return sum(self._piece_size(p) for p in self._pieces)

    def get_read_tasks(self, parallelism, per_task_row_limit=None, data_context=None):
        table, columns = self._table, self._columns
        tasks = []
        for piece in self._pieces:
            meta = BlockMetadata(num_rows=self._piece_rows(piece), size_bytes=self._piece_size(piece), input_files=[piece[0]], exec_stats=None)
            tasks.append(ReadTask(lambda piece=piece: [read_arrow(piece, table, columns)], meta, schema=self._schema, per_task_row_limit=per_task_row_limit))
        return tasks


def read_leafwire(paths, *, table=None, columns=None, rows_per_block=None, **read_args):
    """A ``ray.data.Dataset`` of the tables in ``paths`` (a directory, a glob or a list).
    ``table`` names the table in files that hold several; ``columns`` restricts the columns
    read; ``rows_per_block`` cuts each file into read tasks of at most that many rows.
    Other keywords go to ``ray.data.read_datasource`` (``concurrency``, ``ray_remote_args``)."""
    return read_datasource(LeafwireDatasource(paths, table=table, columns=columns, rows_per_block=rows_per_block), **read_args)
