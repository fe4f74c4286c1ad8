"""Put a Leafwire table document into shared memory for other processes to read (the
producer half of a pair; see shm_consumer.py).

    python examples/python/shm_producer.py [CSV] [--name NAME]

Builds a table document — from a few numeric and string columns made here with
`leafwire.Table.from_columns`, or, given a CSV path, converted by the CLI
(`leafwire from-csv CSV -o -`; the command is $LEAFWIRE_CLI, else `leafwire` on PATH) —
copies its bytes into a new `multiprocessing.shared_memory.SharedMemory`, prints one line

    shm NAME SIZE

(the block's name and the document's length: the block may be rounded up to a page, so
the consumer opens `shm.buf[:SIZE]`), and waits until its standard input reaches end of
file or a line is typed (Enter). It then closes and unlinks the block: the producer owns
it, consumers only attach. Run a consumer meanwhile in another shell:

    python examples/python/shm_consumer.py NAME SIZE

The document is written once and never changed while it is shared: readers map the same
pages and read them in place (a Leafwire reader trusts no byte, but a writer changing
the bytes under a reader would make it read a mix of two versions).
"""

import argparse
import os
import shutil
import subprocess
import sys
from multiprocessing import shared_memory

import numpy as np

import leafwire


def build(csv=None):
    """The bytes of a table document: of `csv` through the CLI, else a small demo table."""
    if csv is not None:
        cli = os.environ.get("LEAFWIRE_CLI") or shutil.which("leafwire")
        if not cli:
            sys.exit("shm_producer: the leafwire CLI is needed to convert a CSV: set LEAFWIRE_CLI or put it on PATH")
        return subprocess.run([cli, "from-csv", str(csv), "-o", "-"], check=True, stdout=subprocess.PIPE).stdout
    rows = 1000
    return leafwire.Table.from_columns({
        "id": np.arange(rows, dtype=np.int64),
        "load": np.linspace(0.0, 1.0, rows),  # sum: 500.0
        "watts": (np.arange(rows) % 7).astype(np.int32),
        "site": [f"site-{i % 3}" for i in range(rows)],
    }, name="readings")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="?", help="a CSV file to convert with `leafwire from-csv` (default: a demo table)")
    parser.add_argument("--name", help="the shared-memory block's name (default: chosen by the system)")
    args = parser.parse_args()

    data = build(args.csv)
    leafwire.validate(data)  # only valid bytes are shared
    shm = shared_memory.SharedMemory(create=True, size=len(data), name=args.name)
    try:
        shm.buf[: len(data)] = data
        print(f"shm {shm.name} {len(data)}", flush=True)
        sys.stdin.readline()  # until Enter or end of file
    finally:
        shm.close()
        shm.unlink()


if __name__ == "__main__":
    main()
