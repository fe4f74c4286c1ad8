#!/usr/bin/env bash
# Runs every fuzz target for a bounded time: fuzz/run.sh [SECONDS] (default 60 each).
#
# Needs only rustup: installs the nightly toolchain and cargo-fuzz when missing, writes
# the repository's seeds (fuzz/seeds.sh) to fuzz/seeds/, builds the `leafwire` command to
# add small JSON values cut from ../shared/data/json (json_roundtrip) and their Leafwire
# conversions (the reader targets), then fuzzes each target in turn from the committed
# corpus (fuzz/corpus/<target>) and the seeds. New inputs go to fuzz/work/<target>/
# (not committed); crashes land in fuzz/artifacts/<target>/; logs in fuzz/logs/.
# Exits non-zero if any target found a crash. CARGO_BUILD_JOBS defaults to 1 (the
# machine is shared). FUZZ_KEEP_GOING=1 runs libFuzzer in fork mode and keeps fuzzing
# past crashes, timeouts and OOMs (to find more than the first bug).
set -euo pipefail

seconds="${1:-60}"
fuzz_dir="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$fuzz_dir")"
data="${LEAFWIRE_DATA:-$root/../shared/data/json}"
export CARGO_BUILD_JOBS="${CARGO_BUILD_JOBS:-1}"
targets=(open_walk mutate_fields raw_walk from_slice editor_ops json_roundtrip packed_page stream_read)
readers=(open_walk mutate_fields raw_walk from_slice)
max_len=16384

# Toolchain: libFuzzer instrumentation needs nightly `-Z` flags.
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
fi

# Seeds. Small values only: libFuzzer mutates short inputs far faster.
rm -rf "$fuzz_dir/seeds"
"$fuzz_dir/seeds.sh" "$fuzz_dir/seeds"
json_seeds="$fuzz_dir/seeds/json_roundtrip"
lw_seeds="$fuzz_dir/seeds/open_walk"
mkdir -p "$fuzz_dir/logs"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# The `leafwire` command cuts values out of the data and converts seeds; without it
# (the workspace does not build), fuzzing starts from the inline seeds alone.
if cargo build --quiet --manifest-path "$root/Cargo.toml" -p leafwire-cli; then
    leafwire="$root/target/debug/leafwire"
    # file:pointer pairs cut from the shared data; values over max_len are skipped.
    cuts=(
        canada:/features/0/properties canada:/features/0/geometry/coordinates/100
        citm_catalog:/events/138586341 citm_catalog:/performances/0 citm_catalog:/seatCategoryNames
        citm_catalog:/areaNames github_events:/0 github_events:/5 mesh:/batches
        random:/result/0 twitter:/statuses/0 twitter:/search_metadata update-center:/core
        update-center:/signature update-center:/plugins/git
    )
    for cut in "${cuts[@]}"; do
        name="${cut%%:*}" pointer="${cut#*:}"
        [ -f "$data/$name.json" ] || continue
        [ -f "$scratch/$name.lw" ] || "$leafwire" from-json "$data/$name.json" -o "$scratch/$name.lw" --duplicate-keys last || continue
        seed="$json_seeds/$name$(printf '%s' "$pointer" | tr '/' '_').json"
        "$leafwire" get "$scratch/$name.lw" "$pointer" > "$seed" || { rm -f "$seed"; continue; }
        [ "$(wc -c < "$seed")" -le "$max_len" ] || rm -f "$seed"
    done

    for seed in "$json_seeds"/*.json; do
        lw="$(basename "$seed" .json).lw"
        [ -f "$lw_seeds/$lw" ] && continue
        "$leafwire" from-json "$seed" -o "$scratch/$lw" 2>/dev/null || continue
        for t in "${readers[@]}"; do
            cp "$scratch/$lw" "$fuzz_dir/seeds/$t/$lw"
        done
    done
else
    echo "warning: could not build the leafwire command; seeding from the repository only" >&2
fi

# Fuzz each target in turn.
cd "$fuzz_dir"
cargo +nightly fuzz build
keep_going=()
if [ "${FUZZ_KEEP_GOING:-0}" = 1 ]; then
    keep_going=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
fi
failed=()
for target in "${targets[@]}"; do
    log="$fuzz_dir/logs/$target.log"
    mkdir -p "artifacts/$target" "work/$target" "corpus/$target"
    before="$(ls "artifacts/$target" | wc -l)"
    echo "== $target: ${seconds}s"
    status=ok
    cargo +nightly fuzz run "$target" "work/$target" "corpus/$target" "seeds/$target" -- \
        -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 ${keep_going[@]+"${keep_going[@]}"} > "$log" 2>&1 || status=failed
    found=$(( $(ls "artifacts/$target" | wc -l) - before ))
    if [ "$status" != ok ] || [ "$found" -gt 0 ]; then
        status="$found new crash/timeout/oom inputs in artifacts/$target/ (log: logs/$target.log)"
        failed+=("$target")
    fi
    # Fork mode prints no final stats; its last status line has the total.
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' \
        || grep -o '^#[0-9]*' "$log" | tail -n 1 | tr -d '#')" || runs='?'
    echo "   $status; $runs executions; $(find "work/$target" -type f | wc -l) new inputs in work/$target"
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "crashes in: ${failed[*]}" >&2
    exit 1
fi
