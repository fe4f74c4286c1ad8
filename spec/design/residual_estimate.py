"""What zstd makes of Leafwire's canonical layout when nothing shreds (packed.md, open
question 6): the dictionary, the structure section with every pointer slot dropped (in the
canonical layout they follow from the sizes, so this is a lower bound), and the data
section, compressed as one zstd -3 frame and as three, against zstd -3 of the compact JSON.

    python spec/design/residual_estimate.py FILE.json...    (needs the zstandard package)
"""

import collections
import json
import struct
import sys

import zstandard

ZSTD = zstandard.ZstdCompressor(level=3)


def varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        if not n:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def signed_width(v):
    return next(w for w in (1, 2, 4, 8) if -(1 << (8 * w - 1)) <= v < (1 << (8 * w - 1)))


def keys_of(value, into):
    if isinstance(value, dict):
        for k, child in value.items():
            into.add(k)
            keys_of(child, into)
    elif isinstance(value, list):
        for child in value:
            keys_of(child, into)
    return into


def sections(doc):
    """(dictionary, structure without pointers, data) of `doc` laid out breadth-first."""
    ranked = sorted(keys_of(doc, set()))
    key_id = {k: i for i, k in enumerate(ranked)}
    key_width = signed_width(len(ranked))
    dictionary = b"".join(varint(len(k.encode())) + k.encode() for k in ranked)
    structure, data, queue = bytearray(), bytearray(), collections.deque([doc])
    while queue:
        value = queue.popleft()
        is_object = isinstance(value, dict)
        children = list(value.items()) if is_object else list(enumerate(value))
        structure.append(1 if is_object else 0)
        structure += varint(len(children))
        tags, keys, scalars = bytearray(), bytearray(), []
        for k, child in children:
            if is_object:
                keys += key_id[k].to_bytes(key_width, "little")
            if child is None or isinstance(child, bool):
                tags.append(0 if child is None else 2 if child else 1)
            elif isinstance(child, int) and -(1 << 63) <= child < (1 << 63):
                tags.append(3)
                scalars.append(("int", child))
            elif isinstance(child, float):
                tags.append(5)
                scalars.append(("f64", child))
            elif isinstance(child, (dict, list)):
                tags.append(0x0B if isinstance(child, dict) else 0x0A)
                queue.append(child)
            else:  # strings, and integers beyond i64 as their digits
                text = (child if isinstance(child, str) else str(child)).encode()
                tags.append(7 if isinstance(child, str) else 9)
                data += varint(len(text)) + text
        width = max([8 if kind == "f64" else signed_width(v) for kind, v in scalars] or [1])
        structure += tags + keys
        for kind, v in scalars:
            structure += struct.pack("<d", v) if kind == "f64" else v.to_bytes(width, "little", signed=True)
    return dictionary, bytes(structure), bytes(data)


def main():
    print("| file | zstd -3 of JSON | layout without pointers | zstd -3, one frame | zstd -3, per section |")
    print("|---|---:|---:|---:|---:|")
    for path in sys.argv[1:]:
        doc = json.load(open(path, encoding="utf-8"))
        text = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()
        json_z = len(ZSTD.compress(text))
        parts = sections(doc)
        one = len(ZSTD.compress(b"".join(parts)))
        each = sum(len(ZSTD.compress(p)) for p in parts)
        name = path.rsplit("/", 1)[-1]
        print(f"| {name} | {json_z:,} | {sum(map(len, parts)):,} | {one:,} ({one / json_z:.2f}×) | {each:,} ({each / json_z:.2f}×) |")


if __name__ == "__main__":
    main()
