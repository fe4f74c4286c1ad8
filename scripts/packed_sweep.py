#!/usr/bin/env python3
"""Issue #12's generality check on JSON files that are not in the repository: for each
file, `leafwire from-json --packed`, then `to-json` (the same value back), `validate`, and
`get` of two deep values (down the last child of every container, and down the middle
one, where a packed array's element sits inside its columns); reports the files whose
packed size exceeds zstd -3 of their compact JSON.

    find / -xdev -name '*.json' -size +20k -size -20M 2>/dev/null | grep -v '^/proc' \\
        | scripts/packed_sweep.py [--cli target/release/leafwire] [--out rows.json]

Reads the file names from stdin (one a line). Needs the `zstandard` package. Files that
are not JSON are skipped; a file the CLI refuses (a duplicate key, say) is listed with the
CLI's message. `--out` keeps one row per file (path, packed bytes, zstd -3 bytes, compact
JSON bytes), for comparing two builds.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import zstandard


def deep_pointer(value, middle):
    """A JSON Pointer from the root down to a leaf (or an empty container), taking each
    container's middle child if `middle`, else its last; with the value found there."""
    tokens = []
    while isinstance(value, (dict, list)) and value:
        keys = list(value) if isinstance(value, dict) else range(len(value))
        key = keys[len(keys) // 2] if middle else keys[-1]
        tokens.append(str(key).replace("~", "~0").replace("/", "~1"))
        value = value[key]
    return "".join("/" + t for t in tokens), value


def answers_get(cli, packed_path, value):
    """Whether `get` gives back the value at both deep pointers."""
    for middle in (False, True):
        pointer, expected = deep_pointer(value, middle)
        got = subprocess.run([cli, "get", packed_path, pointer], capture_output=True)
        if got.returncode or json.loads(got.stdout) != expected:
            return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cli", default="target/release/leafwire")
    parser.add_argument("--out")
    args = parser.parse_args()
    work = tempfile.mkdtemp()
    packed_path = os.path.join(work, "packed.lw")
    rows, refused, wrong, skipped = [], [], [], 0
    for path in (line.strip() for line in sys.stdin):
        if not path:
            continue
        try:
            with open(path, "rb") as f:
                value = json.load(f)
        except (OSError, ValueError):
            skipped += 1
            continue
        compact = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
        zstd3 = len(zstandard.ZstdCompressor(level=3).compress(compact))
        run = subprocess.run([args.cli, "from-json", "--packed", path, "-o", packed_path], capture_output=True)
        if run.returncode:
            refused.append((path, run.stderr.decode().strip()))
            continue
        back = subprocess.run([args.cli, "to-json", packed_path], capture_output=True)
        valid = subprocess.run([args.cli, "validate", packed_path], capture_output=True)
        if back.returncode or json.loads(back.stdout) != value or valid.returncode or not answers_get(args.cli, packed_path, value):
            wrong.append(path)
            continue
        rows.append((path, os.path.getsize(packed_path), zstd3, len(compact)))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f)
    over = sorted((r for r in rows if r[1] > r[2]), key=lambda r: r[2] - r[1])
    print(f"{len(rows)} files packed, read back and answering get; {skipped} not JSON; {len(refused)} refused; {len(wrong)} WRONG")
    for path, message in refused:
        print(f"  refused: {path}: {message}")
    for path in wrong:
        print(f"  WRONG (round trip, validate or get): {path}")
    print(f"{len(over)} larger than zstd -3 of the compact JSON:")
    for path, packed, zstd3, compact in over:
        print(f"  {packed:>9,} B packed  {zstd3:>9,} B zstd -3 ({packed / zstd3:.2f}x)  {compact:>10,} B JSON  {path}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
