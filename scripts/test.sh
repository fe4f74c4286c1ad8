#!/usr/bin/env bash
# Runs every test of the project: the Rust workspace (core, CLI) and the Python tests.
# Needs only the Rust toolchain and python3; Python packages go into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."

# The corpus tests (Rust and Python) run on the sample in tests/data/sample, and on the full
# shared data too when ../shared/data is beside the repository (as in CI).
if [ -n "${LEAFWIRE_SHARED_DATA:-}" ]; then
  echo "== corpus: the in-repository sample and the full shared data in $LEAFWIRE_SHARED_DATA"
elif [ -d ../shared/data ]; then
  echo "== corpus: the in-repository sample and the full shared data in ../shared/data"
else
  echo "== corpus: the in-repository sample only (tests/data/sample); ../shared/data is absent"
fi

echo "== Rust: cargo test (release: with ../shared/data, the corpus tests convert 24 MB of GeoJSON)"
cargo test --workspace --release

echo "== Rust: the arrow feature (tables as Arrow record batches)"
cargo test --release -p leafwire --features arrow --test tables_arrow

echo "== Rust: the tokio feature (async stream adapters)"
cargo test --release -p leafwire --features tokio --test stream_tokio

# Editing past 4 GiB (8-byte offsets) needs ~9 GiB of memory: run it where there is room.
available_kib=$(awk '/^MemAvailable:/ {print $2}' /proc/meminfo 2>/dev/null || echo 0)
if [ "${available_kib:-0}" -ge $((12 * 1024 * 1024)) ]; then
  echo "== Rust: editing a document over 4 GiB"
  cargo test --release -p leafwire --test edit_large -- --ignored
else
  echo "== Rust: skipping the over-4-GiB edit test (needs 12 GiB available, have ${available_kib} KiB)"
fi

echo "== Python: build and install the package (maturin, from PyPI), then its tests"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q ".[test]"
# The CLI the Rust tests built: Python tests read what it writes.
export LEAFWIRE_CLI="$PWD/target/release/leafwire"
.venv/bin/python -m pytest -q tests/python
