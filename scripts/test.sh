#!/usr/bin/env bash
# Runs every test of the project: the Rust workspace (core, CLI) and the Python tests.
# Needs only the Rust toolchain and python3; Python packages go into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== Rust: cargo test (release: the corpus tests convert 24 MB of GeoJSON)"
cargo test --workspace --release

echo "== Python: build and install the package (maturin, from PyPI), then its tests"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q ".[test]"
.venv/bin/python -m pytest -q tests/python
