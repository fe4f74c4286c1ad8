"""Read a Leafwire table document that another process put into shared memory, in place
(the consumer half of a pair; see shm_producer.py).

    python examples/python/shm_consumer.py NAME SIZE [COLUMN]

Attaches to the block NAME, opens its first SIZE bytes with `leafwire.open(shm.buf[:SIZE])`
— no copy: the Document reads the shared pages — takes the first table of the document
(`Document.tables()`) and a numeric column of it (COLUMN, else the first numeric one) as a
numpy view, checks that the view's data lies inside the shared block (zero-copy), and
prints one line

    column NAME rows=R sum=S zero-copy=True

Releasing, in this order (each step fails with BufferError while the one before is not
done):

1. Drop every object that points into the document: numpy views and masked arrays of
   columns, `Table`s, nodes, and `to_arrow()` tables (their buffers keep the document
   alive), then the `Document` itself. The binding has no `Document.close()`: a
   `Document` holds its buffer export (of the memoryview passed to `open`) until it is
   freed, and every view of it holds a reference to it. `del` is enough in CPython once
   nothing else refers to them (no reference cycles: they are freed at once).
2. `view.release()` on the memoryview slice given to `leafwire.open`. While a Document
   holds it, this raises "BufferError: memoryview has 1 exported buffer".
3. `shm.close()`. While any slice of `shm.buf` is unreleased, it raises
   "BufferError: cannot close exported pointers exist".

A consumer never unlinks the block: the producer owns it. On Python < 3.13, attaching
registers the block with this process's resource tracker, which would unlink it (and warn
about a leak) when the consumer exits; `attach()` below unregisters it (Python 3.13 has
`track=False` for this).
"""

import argparse
import sys
from multiprocessing import resource_tracker, shared_memory

import numpy as np

import leafwire


def attach(name):
    """The existing block `name`, without taking ownership of it."""
    try:
        return shared_memory.SharedMemory(name=name, track=False)  # Python 3.13+
    except TypeError:
        shm = shared_memory.SharedMemory(name=name)
        resource_tracker.unregister(shm._name, "shared_memory")  # noqa: SLF001 (the documented workaround)
        return shm


def buffer_address(buf):
    """The address of a buffer's first byte (the temporary array's export ends at once)."""
    return np.frombuffer(buf, dtype=np.uint8).__array_interface__["data"][0]


def read(shm, size, column=None):
    """(column name, rows, sum, zero-copy) of a numeric column of the document in `shm`;
    everything that points into the block is released before this returns."""
    view = shm.buf[:size]
    doc = leafwire.open(view)
    table = next(iter(doc.tables().values()))
    if column is None:
        column = next(c for c in table.columns if table.column_type(c)[0] not in ("string", "large_string"))
    values = table[column]
    data = np.ma.getdata(values)
    start = buffer_address(shm.buf)
    at = data.__array_interface__["data"][0]
    zero_copy = start <= at and at + data.nbytes <= start + shm.size
    result = (column, table.rows, values.sum(), zero_copy)
    del values, data, table, doc  # step 1: nothing points into the document any more
    view.release()  # step 2
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the shared-memory block's name (shm_producer.py prints it)")
    parser.add_argument("size", type=int, help="the document's length in bytes (shm_producer.py prints it)")
    parser.add_argument("column", nargs="?", help="a numeric column (default: the first one)")
    args = parser.parse_args()

    shm = attach(args.name)
    # On an error, what still points into the block is held by the traceback: the process
    # exits with it, which unmaps the block (closing it here would raise BufferError).
    column, rows, total, zero_copy = read(shm, args.size, args.column)
    shm.close()  # step 3; never unlink: the producer owns the block
    print(f"column {column} rows={rows} sum={total} zero-copy={zero_copy}")
    return 0 if zero_copy else 1


if __name__ == "__main__":
    sys.exit(main())
