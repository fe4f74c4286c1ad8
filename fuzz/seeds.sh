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

for t in "${readers[@]}" json_roundtrip editor_ops; do
    mkdir -p "$out/$t"
done

# Documents: the positive vectors for every reader; the negative ones (spec §9 rules)
# where present, except for mutate_fields, which wants valid documents to mutate.
shopt -s nullglob
for f in "$vectors"/*.lw; do
    for t in "${readers[@]}"; do
        cp "$f" "$out/$t/vector-$(basename "$f")"
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
