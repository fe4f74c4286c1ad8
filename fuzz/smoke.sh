#!/usr/bin/env bash
# The CI fuzz smoke test: fuzz/smoke.sh [SECONDS] (default 30 per target).
#
# Installs the nightly toolchain and cargo-fuzz when missing, builds every target once,
# then runs each for SECONDS from the committed corpus (fuzz/corpus/<target>) and the
# seeds of fuzz/seeds.sh (repository files only: no ../shared needed). New inputs go to a
# scratch directory, so the committed corpus is left as it is. Prints one line per target
# and exits non-zero if any target crashed, timed out or ran out of memory; the input is
# in fuzz/artifacts/<target>/ and the log in fuzz/logs/smoke-<target>.log.
#
# Wall time on 2 cores: about 2 minutes to build, then SECONDS per target (8 targets).
set -euo pipefail

seconds="${1:-30}"
fuzz_dir="$(cd "$(dirname "$0")" && pwd)"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-2}"
targets=(open_walk mutate_fields raw_walk from_slice editor_ops json_roundtrip packed_page stream_read)
max_len=16384

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

cd "$fuzz_dir"
cargo +nightly fuzz build
bin_dir="$fuzz_dir/target/$(rustc +nightly -vV | sed -n 's/^host: //p')/release"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
"$fuzz_dir/seeds.sh" "$scratch/seeds"
mkdir -p logs

failed=()
for target in "${targets[@]}"; do
    log="logs/smoke-$target.log"
    mkdir -p "artifacts/$target" "corpus/$target" "$scratch/new/$target"
    before="$(find "artifacts/$target" -type f | wc -l)"
    status=OK
    # The outer timeout only guards against a hang libFuzzer itself would not end.
    timeout $((seconds + 120)) "$bin_dir/$target" -artifact_prefix="artifacts/$target/" \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        "$scratch/new/$target" "corpus/$target" "$scratch/seeds/$target" > "$log" 2>&1 || status=FAILED
    if [ "$(find "artifacts/$target" -type f | wc -l)" -gt "$before" ]; then
        status=FAILED
    fi
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)"
    [ -n "$runs" ] || runs="$(grep -o '^#[0-9]*' "$log" | tail -n 1 | tr -d '#')"
    corpus="$(grep -o 'corp: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$')"
    echo "$target: ${runs:-?} executions, corpus ${corpus:-?}, $status"
    if [ "$status" != OK ]; then
        failed+=("$target")
        grep -m 1 -A 2 -E 'panicked at|ERROR: libFuzzer' "$log" | sed 's/^/    /' || true
        ls -t "artifacts/$target" | head -n 1 | sed "s|^|    input: fuzz/artifacts/$target/|"
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz smoke failed in: ${failed[*]} (logs in fuzz/logs/)" >&2
    exit 1
fi
