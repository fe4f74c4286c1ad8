"""bench/scripts/targets.py judges issues 11 and 12's targets from result rows: a row at its
limit is met, one over it is missed, and a failed or absent peer gives no verdict at all."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "scripts"))

import report  # noqa: E402
import targets  # noqa: E402


def timed(dataset, op, peer, ns, status="ok"):
    return {"dataset": dataset, "op": op, "peer": peer, "status": status, "time": {"median_ns": ns}}


def sized(dataset, peer, n):
    return {"dataset": dataset, "op": "size", "peer": peer, "status": "ok", "bytes": n}


def workload(name, rows):
    return report.Workload({"workload": name, "rows": rows, "leafwire": ["leafwire"], "baseline": "x"})


def verdicts(body):
    return {(row[0], row[1]): row[-1] for row in body}


def test_corpus_targets_are_met_at_their_limit_and_missed_over_it():
    rows = [
        timed("a.json", "decode", "leafwire (borrowed)", 90.0), timed("a.json", "decode", "sonic-rs", 100.0),
        timed("a.json", "encode", "leafwire", 101.0), timed("a.json", "encode", "rmp-serde", 100.0),
        timed("a.json", "lookup", "leafwire", 100.0), timed("a.json", "lookup", "flexbuffers", 150.0),
        # A peer that failed gives the target no verdict: nothing to compare with.
        timed("a.json", "to_json", "leafwire", 1.0), timed("a.json", "to_json", "sonic-rs", 1.0, status="error"),
    ]
    got = verdicts(targets.issue_11(targets.Rows({"corpus": workload("corpus", rows)})))
    assert got[("whole decode (borrowed `ValueRef`) < sonic-rs DOM parse", "a.json")].startswith("met")
    assert got[("encode from a dynamic value ≤ 1.0× rmp-serde", "a.json")].startswith("missed")
    assert got[("open + JSON Pointer ≤ 100 ns", "a.json")].startswith("met")
    # 100 ÷ 150 = 0.67: under 0.7.
    assert got[("open + JSON Pointer ≤ 0.7× flexbuffers", "a.json")].startswith("met")
    assert not any(target.startswith("Leafwire → JSON") for target, _ in got)


def test_packed_size_and_round_trip_targets():
    rows = [
        sized("orders.json", "leafwire (packed)", 23_001), sized("orders.json", "leafwire (packed, zstd -19)", 20_000),
        timed("orders.json", "roundtrip", "leafwire (packed)", 50.0), timed("orders.json", "roundtrip", "tree-buf", 100.0),
    ]
    got = verdicts(targets.issue_12(targets.Rows({"graphql": workload("graphql", rows)})))
    assert got[("size of `leafwire (packed)` ≤ 23,000 B", "graphql")].startswith("missed")
    assert got[("size of `leafwire (packed, zstd -19)` ≤ 20,000 B", "graphql")].startswith("met")
    assert got[("packed round trip ≥ 2× faster than Tree-Buf (≤ 0.5×)", "graphql")].startswith("met")
