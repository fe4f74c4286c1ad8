"""What the engine readers (``leafwire.dask``, ``leafwire.ray``) share: which files a
path names, which table of a file to read, and how a table is cut into row ranges.

A piece is ``(path, start, stop)``: rows ``start..stop`` of one file's table. Cutting a
table is free (spec §15 columns are flat arrays, so a row range is a slice of each), which
is why a big file can feed many partitions without being read by the planner: the planner
opens each file lazily and reads only the table's row count.
"""

import glob
import os

import leafwire


def expand_paths(paths):
    """The ``.lw`` files a directory, a glob, a path or a list of paths names, sorted."""
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


def open_table(path, table):
    """The table ``table`` of ``path`` (or its only table when ``table`` is None)."""
    tables = leafwire.open(path).tables()
    if table is not None:
        if table not in tables:
            raise KeyError(f"{path}: no table {table!r} (it has {sorted(tables)})")
        return tables[table]
    if len(tables) != 1:
        raise ValueError(f"{path} holds {len(tables)} tables ({sorted(tables)}): pass table=NAME, or table=None with one table per file")
    return next(iter(tables.values()))


def pieces(files, table, rows_per_piece):
    """The pieces to read: one per file, or, with ``rows_per_piece``, each file's table
    cut into ranges of at most that many rows (an empty table still gives one piece, so
    that its schema is read)."""
    if rows_per_piece is None:
        return [(path, 0, None) for path in files]
    if rows_per_piece < 1:
        raise ValueError(f"rows_per_piece must be at least 1, not {rows_per_piece}")
    out = []
    for path in files:
        rows = open_table(path, table).rows
        out.extend((path, start, min(start + rows_per_piece, rows)) for start in range(0, max(rows, 1), rows_per_piece))
    return out


def read_arrow(piece, table, columns):
    """One piece as a ``pyarrow.Table``: the columns named (all when None; the others are
    not touched), without a copy of numeric or string data (the buffers stay in the
    mapped file)."""
    path, start, stop = piece
    arrow = open_table(path, table).to_arrow(columns)
    if start != 0 or (stop is not None and stop != arrow.num_rows):
        arrow = arrow.slice(start, (arrow.num_rows if stop is None else stop) - start)
    return arrow
