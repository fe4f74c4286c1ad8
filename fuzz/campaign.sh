#!/usr/bin/env bash
# A long fuzzing campaign against the latest `main`, in rounds, until a deadline:
#
#   fuzz/campaign.sh DEADLINE      DEADLINE: epoch seconds, or minutes from now (< 10^6)
#   setsid nohup fuzz/campaign.sh "$(date -d '06:50' +%s)" > /work/fuzz-campaign/campaign.out 2>&1 &
#
# Each round checks out the latest `main` in a detached worktree ($CHECKOUT, made once
# from $REPO), copies this fuzz/ directory into it (main may not have these targets yet),
# builds, and runs each target for a slice of time: $READER_SLICE seconds for the readers
# (open_walk, mutate_fields, raw_walk, from_slice), $OTHER_SLICE for the rest. One
# libFuzzer process at a time, in-process (no -jobs, no fork), under `nice -n 15`.
# A crash ends that libFuzzer run, not the slice: the crashing input is dropped from the
# corpus (if it came from there) and fuzzing restarts for the rest of the slice (up to
# 300 restarts).
#
# Kept in $OUT (default /work/fuzz-campaign): corpus/<target>/ (grows across rounds),
# artifacts/<target>/, logs/, log.tsv (one line per run: round, target, commit of main,
# seconds, executions, new artifacts, restarts, corpus size) and crashes.tsv (one line per
# artifact with the panic line). Known panics listed in fuzz_targets/common/mod.rs are
# skipped (LEAFWIRE_FUZZ_SUPPRESS_KNOWN=1; set it to 0 to see them). At the deadline each corpus is minimized with
# -merge=1 into minimized/<target>/ (copy those to fuzz/corpus/ to commit them).
set -uo pipefail

# Bash reads a script as it runs it: run from a copy, so that editing fuzz/ (which each
# round copies into the checkout) cannot change the running campaign.
if [ -z "${CAMPAIGN_FUZZ_SRC:-}" ]; then
    copy="$(mktemp /tmp/leafwire-campaign.XXXXXX)"
    cp "$0" "$copy"
    CAMPAIGN_FUZZ_SRC="$(cd "$(dirname "$0")" && pwd)" exec bash "$copy" "$@"
fi
deadline="${1:?usage: fuzz/campaign.sh DEADLINE (epoch seconds or minutes from now)}"
[ "$deadline" -lt 1000000 ] && deadline=$(( $(date +%s) + deadline * 60 ))
fuzz_src="$CAMPAIGN_FUZZ_SRC"
REPO="${REPO:-/work/main}"
CHECKOUT="${CHECKOUT:-/work/wt/campaign}"
OUT="${OUT:-/work/fuzz-campaign}"
READER_SLICE="${READER_SLICE:-480}"
OTHER_SLICE="${OTHER_SLICE:-240}"
MERGE_RESERVE="${MERGE_RESERVE:-240}"   # seconds kept before the deadline for the final merge
readers=(open_walk mutate_fields raw_walk from_slice)
others=(editor_ops json_roundtrip)
flags=(-rss_limit_mb=2048 -timeout=10 -max_len=16384 -print_final_stats=1)
export CARGO_BUILD_JOBS=1
# Known, recorded panics that would end every run (see KNOWN_PANICS in fuzz_targets/common).
export LEAFWIRE_FUZZ_SUPPRESS_KNOWN="${LEAFWIRE_FUZZ_SUPPRESS_KNOWN:-1}"

mkdir -p "$OUT/corpus" "$OUT/artifacts" "$OUT/logs"
[ -s "$OUT/log.tsv" ] || printf 'round\ttarget\tcommit\tseconds\texecutions\tnew_artifacts\trestarts\tcorpus\n' > "$OUT/log.tsv"
[ -s "$OUT/crashes.tsv" ] || printf 'round\ttarget\tcommit\tartifact\tpanic\n' > "$OUT/crashes.tsv"
say() { echo "$(date -u +%FT%TZ) $*"; }

if [ ! -d "$CHECKOUT" ]; then
    git -C "$REPO" worktree add --detach "$CHECKOUT" main || exit 1
fi

# Copies the seeds and the committed corpus into the campaign corpus, named by their
# SHA-1 as libFuzzer names its own inputs (so a crashing seed can be dropped by name).
import_seeds() {
    local scratch
    scratch="$(mktemp -d)"
    "$fuzz_src/seeds.sh" "$scratch" >/dev/null
    for t in "${readers[@]}" "${others[@]}"; do
        mkdir -p "$OUT/corpus/$t"
        for f in "$scratch/$t"/* "$fuzz_src/corpus/$t"/*; do
            [ -f "$f" ] || continue
            cp "$f" "$OUT/corpus/$t/$(sha1sum < "$f" | cut -c1-40)"
        done
    done
    rm -rf "$scratch"
}

# Runs one target for $2 seconds; appends to log.tsv.
run_target() {
    local t="$1" slice="$2" round="$3" commit="$4"
    local bin="$CHECKOUT/fuzz/target/$host/release/$t"
    local start end remaining total=0 restarts=0 new=0 log runs a
    mkdir -p "$OUT/artifacts/$t"
    start="$(date +%s)"
    end=$(( start + slice ))
    [ -x "$bin" ] || { say "$t: no binary"; return; }
    while :; do
        remaining=$(( end - $(date +%s) ))
        [ "$remaining" -ge 15 ] || break
        log="$OUT/logs/r$round-$t-$restarts.log"
        ls "$OUT/artifacts/$t" > "$OUT/.before"
        nice -n 15 timeout $(( remaining + 120 )) "$bin" -artifact_prefix="$OUT/artifacts/$t/" \
            -max_total_time="$remaining" "${flags[@]}" "$OUT/corpus/$t" > "$log" 2>&1
        runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)"
        [ -n "$runs" ] || runs="$(grep -o '^#[0-9]*' "$log" | tail -n 1 | tr -d '#')"
        total=$(( total + ${runs:-0} ))
        local fresh
        fresh="$(ls "$OUT/artifacts/$t" | grep -vxF -f "$OUT/.before" || true)"
        [ -n "$fresh" ] || break
        for a in $fresh; do
            new=$(( new + 1 ))
            # The input is gone from the corpus if it was there (seeds and libFuzzer's
            # own inputs are named by SHA-1), so the restart goes past it.
            rm -f "$OUT/corpus/$t/${a#*-}"
            printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$t" "$commit" "$OUT/artifacts/$t/$a" \
                "$(grep -m 1 -A 1 -E 'panicked at' "$log" | tr '\n\t' '  ' || grep -m 1 'ERROR: libFuzzer' "$log")" >> "$OUT/crashes.tsv"
        done
        restarts=$(( restarts + 1 ))
        [ "$restarts" -lt 300 ] || break
    done
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$t" "$commit" $(( $(date +%s) - start )) "$total" "$new" "$restarts" \
        "$(find "$OUT/corpus/$t" -type f | wc -l)" >> "$OUT/log.tsv"
    say "$t: ${total} executions in $(( $(date +%s) - start )) s, $new new artifacts, $restarts restarts"
}

host="$(rustc +nightly -vV | sed -n 's/^host: //p')"
import_seeds
# Round numbers go on from an earlier campaign in the same $OUT.
round="$(tail -n +2 "$OUT/log.tsv" | cut -f1 | sort -n | tail -n 1)"
round="${round:-0}"
stop=$(( deadline - MERGE_RESERVE ))
while [ "$(date +%s)" -lt $(( stop - 60 )) ]; do
    round=$(( round + 1 ))
    # The latest main, with this fuzz/ directory on top (build output kept between rounds).
    git -C "$CHECKOUT" checkout -q -f --detach main
    commit="$(git -C "$CHECKOUT" rev-parse --short HEAD)"
    rm -rf "$CHECKOUT/fuzz/fuzz_targets"
    mkdir -p "$CHECKOUT/fuzz"
    tar -C "$fuzz_src" --exclude=./target --exclude=./artifacts --exclude=./logs --exclude=./corpus \
        --exclude=./seeds --exclude=./work -cf - . | tar -C "$CHECKOUT/fuzz" -xf -
    say "round $round: main at $commit; building"
    if ! (cd "$CHECKOUT/fuzz" && nice -n 15 cargo +nightly fuzz build > "$OUT/logs/r$round-build.log" 2>&1); then
        say "round $round: build failed (see logs/r$round-build.log); using the previous binaries"
        commit="$commit-build-failed"
        [ -x "$CHECKOUT/fuzz/target/$host/release/open_walk" ] || { sleep 120; continue; }
    fi
    for t in "${readers[@]}" "${others[@]}"; do
        slice="$READER_SLICE"
        [[ " ${others[*]} " == *" $t "* ]] && slice="$OTHER_SLICE"
        left=$(( stop - $(date +%s) ))
        [ "$left" -ge 30 ] || break
        [ "$slice" -le "$left" ] || slice="$left"
        run_target "$t" "$slice" "$round" "$commit"
    done
done

# Minimize each corpus for committing (fuzz/corpus/<target>).
for t in "${readers[@]}" "${others[@]}"; do
    rm -rf "$OUT/minimized/$t"
    mkdir -p "$OUT/minimized/$t"
    nice -n 15 timeout 600 "$CHECKOUT/fuzz/target/$host/release/$t" -merge=1 "${flags[@]}" \
        "$OUT/minimized/$t" "$OUT/corpus/$t" > "$OUT/logs/merge-$t.log" 2>&1
    say "$t: corpus $(find "$OUT/corpus/$t" -type f | wc -l) inputs, minimized $(find "$OUT/minimized/$t" -type f | wc -l)"
done
say "campaign over"
