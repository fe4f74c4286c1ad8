#!/usr/bin/env python3
"""A loop for instruction counts (callgrind), not for timing: N calls of one library's
`dumps` or `loads` on one JSON file, so that the difference of two runs with two N is the
cost of N2 - N1 calls with the setup (imports, the JSON parse, the encode) taken out.

    PYTHONHASHSEED=0 setarch -R valgrind --tool=callgrind \
        python bench/python/profile_loop.py FILE N {dumps,loads} LIBRARY [--no-gc]

LIBRARY is a peer of the benchmark's registry (peers.py: leafwire, orjson, msgspec.msgpack,
...), in the mode the benchmark times it.

`--no-gc` turns the cyclic collector off for the loop, as bench/python/run.py does while it
times (`interleaved`).
"""

import argparse
import gc
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import load_peers  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("n", type=int)
    ap.add_argument("workload", choices=["dumps", "loads"])
    ap.add_argument("library")
    ap.add_argument("--no-gc", action="store_true")
    args = ap.parse_args()
    with open(args.file, "rb") as fp:
        obj = json.loads(fp.read())
    peers, missing = load_peers([args.library])
    peer = peers.get(args.library)
    if peer is None or peer.dumps is None or peer.loads is None:
        sys.exit(f"{args.library}: {missing.get(args.library, 'not a peer with dumps and loads (see peers.py)')}")
    dumps, loads = peer.dumps, peer.loads
    if args.workload == "dumps":
        call, arg = dumps, obj
    else:
        call, arg = loads, dumps(obj)
    if args.no_gc:
        gc.disable()
    for _ in range(args.n):
        call(arg)


if __name__ == "__main__":
    main()
