#!/usr/bin/env bash
# Writes seed inputs for every fuzz target into DIR/<target>/: fuzz/seeds.sh DIR
#
# Uses only files in the repository (spec/vectors, invalid vectors when present, inline
# JSON), so it works on a fresh clone. fuzz/run.sh adds seeds cut from ../shared/data when
# that exists; the committed corpus in fuzz/corpus/ holds what earlier campaigns found.
set -euo pipefail

out="${1:?usage: fuzz/seeds.sh DIR}"
fuzz_dir="$(cd "$(dirname "$0")" && pwd)"
vectors="$(dirname "$fuzz_dir")/spec/vectors"
readers=(open_walk raw_walk from_slice mutate_fields)

for t in "${readers[@]}" json_roundtrip editor_ops packed_page stream_read; do
    mkdir -p "$out/$t"
done

# Streams (spec §14): the positive and negative stream vectors.
shopt -s nullglob
for f in "$vectors"/stream/*.lws "$vectors"/invalid/stream_*.lws; do
    cp "$f" "$out/stream_read/$(basename "$(dirname "$f")")-$(basename "$f")"
done
shopt -u nullglob

# Documents: the positive vectors for every reader, packed ones (spec §13) included; the
# negative ones (spec §9 rules) where present, except for mutate_fields, which wants valid
# documents to mutate.
shopt -s nullglob
for f in "$vectors"/*.lw "$vectors"/packed/*.lw; do
    for t in "${readers[@]}"; do
        cp "$f" "$out/$t/vector-$(basename "$(dirname "$f")")-$(basename "$f")"
    done
done
for f in "$vectors"/invalid/*.lw "$vectors"/invalid/*/*.lw; do
    name="invalid-$(basename "$(dirname "$f")")-$(basename "$f")"
    for t in open_walk raw_walk from_slice; do
        cp "$f" "$out/$t/$name"
    done
done

# JSON text: the vectors' JSON forms and a few values that stress number handling.
for f in "$vectors"/*.json; do
    cp "$f" "$out/json_roundtrip/vector-$(basename "$f")"
done
inline=(
    'null' 'true' '-0' '-0.0' '1e400' '18446744073709551616' '"\ud83d\ude00 caf\u00e9"'
    '[1, 2.5, -60.64, 47]' '[[1.5, 2.5], [3.5, 4.5]]' '[[1, 2], [3, 4]]' '[[1, 2.5], [3, 4]]'
    '[127, -128, 255, 65535, -32769, 4294967296, 9223372036854775807, 9223372036854775808]'
    '{"a": {"b": [null, true, "x", {}]}, "": [], "~/": 1}' '{"a": 1, "a": 2}'
    '{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9}'
)
for i in "${!inline[@]}"; do
    printf '%s' "${inline[$i]}" > "$out/json_roundtrip/inline-$i.json"
done

# editor_ops reads its input as a program: any bytes are one. A few fixed patterns.
for i in 0 1 2 3 4 5 6 7; do
    for j in $(seq 0 255); do
        printf "\\$(printf %03o $(( (j * (2 * i + 1) + i * 37) % 256 )))"
    done > "$out/editor_ops/pattern-$i"
done

# packed_page: byte 0 kind (0 ints, 1 floats, 2 strings; +0x80 to encode instead of
# decode), bytes 1-2 the value count − 1, then a page from the hand-written vectors of
# crates/leafwire/src/packed/ (FOR, RLE, patched, decimal, split-free floats, dictionary,
# numeric text, hex, symbol table), or values for the selector.
packed_seeds=(
    '\x00\x03\x00\x02\x14\x02\x9c'
    '\x00\x04\x00\x04\x02\x02\x0e\x02\x08\x02\x04\x01\x01'
    '\x00\x04\x00\x05\x00\x00\x01\x02\x0b\x02\xd0\x07'
    '\x00\x03\x00\x06\x02\x00\x01\x04\x64\x01\x09'
    '\x01\x01\x00\x15\x01\x00\x01\x03\x05\x00\x01\x01\x00'
    '\x02\x02\x00\x21\x02\x20\x00\x01\x02\x01yzx\x00\x01\x00\x01\x00'
    '\x02\x02\x00\x22\x00\x01\x03\xf4\x00\x00\x01\x13\x01\x00'
    '\x02\x01\x00\x23\x01\x00\x01\x02\x00\xde\xad'
    '\x02\x01\x00\x24\x02\x02\x01abc\x00\x01\x02\x03\x00\x01\xffx\x00'
    '\x80\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00'
    '\x81\x01\x30\x9a\x99\x99\x99\x99\x99\xb9\x3f\x9a\x99\x99\x99\x99\x99\xc9\x3f'
    '\x82\x00\x00300,500,0,-12,0xdead'
)
for i in "${!packed_seeds[@]}"; do
    printf "${packed_seeds[$i]}" > "$out/packed_page/seed-$i"
done
