#!/usr/bin/env python3
"""A loop for instruction counts (callgrind), not for timing: N calls of one library's
`dumps` or `loads` on one JSON file, so that the difference of two runs with two N is the
cost of N2 - N1 calls with the setup (imports, the JSON parse, the encode) taken out.

    PYTHONHASHSEED=0 setarch -R valgrind --tool=callgrind \
        python bench/python/profile_loop.py FILE N {dumps,loads} {leafwire,orjson,msgspec} [--no-gc]

`--no-gc` turns the cyclic collector off for the loop, as bench/python/run.py does while it
times (`interleaved`).
"""

import argparse
import gc
import json

import leafwire
import msgspec
import orjson

LIBRARIES = {
    "leafwire": (leafwire.dumps, leafwire.loads),
    "orjson": (orjson.dumps, orjson.loads),
    "msgspec": (msgspec.msgpack.Encoder().encode, msgspec.msgpack.Decoder().decode),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file")
    ap.add_argument("n", type=int)
    ap.add_argument("workload", choices=["dumps", "loads"])
    ap.add_argument("library", choices=sorted(LIBRARIES))
    ap.add_argument("--no-gc", action="store_true")
    args = ap.parse_args()
    with open(args.file, "rb") as fp:
        obj = json.loads(fp.read())
    dumps, loads = LIBRARIES[args.library]
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
