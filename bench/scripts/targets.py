"""Issues 11 and 12's targets, judged from the rows of one run (the Rust harness's results
and the Python benchmark's), one table row per target and dataset. The thresholds are the
issues' words; what a missed row would take is in spec/design/speed.md (#11) and
spec/design/packed.md §7 (#12), not here: this file only measures."""

from __future__ import annotations

import json
import math
from pathlib import Path

# The Python benchmark's result file, beside the Rust harness's results (bench/python/run.py).
PYTHON_RESULTS = Path(__file__).resolve().parent.parent / "python" / "results" / "full.json"


def ratio_row(target: str, data: str, mine: float | None, theirs: float | None, limit: float, unit: str = "ns") -> list[str] | None:
    if not mine or not theirs:
        return None
    r = mine / theirs
    shown = {"ns": lambda x: f"{x / 1e3:,.1f} µs" if x >= 1e4 else f"{x:,.0f} ns", "B": lambda x: f"{x:,.0f} B"}[unit]
    return [target, data, f"{shown(mine)} ÷ {shown(theirs)}", f"{r:.2f}×", verdict(r <= limit)]


def verdict(ok: bool) -> str:
    return "met ✓" if ok else "missed ✗"


def gmean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


class Rows:
    """Median time (or bytes) of a (dataset, op, peer) row of one workload (`report.Workload`),
    None when absent or failed."""

    def __init__(self, workloads: dict):
        self.workloads = workloads

    def get(self, workload: str, dataset: str, op: str, peer: str) -> float | None:
        # report.py imports this module, so its `metric` (the one rule for a row's number)
        # is imported here, once both are loaded.
        from report import metric

        w = self.workloads.get(workload)
        row = w.by_key.get((dataset, op, peer)) if w else None
        return metric(row) if row else None

    def datasets(self, workload: str) -> list[str]:
        w = self.workloads.get(workload)
        return w.datasets() if w else []


def issue_11(rows: Rows) -> list[list[str]]:
    body: list[list[str] | None] = []
    for ds in rows.datasets("corpus"):
        g = lambda op, peer: rows.get("corpus", ds, op, peer)
        body += [
            ratio_row("whole decode (borrowed `ValueRef`) < sonic-rs DOM parse", ds, g("decode", "leafwire (borrowed)"), g("decode", "sonic-rs"), 1.0),
            ratio_row("owned `Value` decode ≤ 1.0× rmp-serde → `serde_json::Value`", ds, g("decode", "leafwire"), g("decode", "rmp-serde"), 1.0),
            ratio_row("encode from a dynamic value ≤ 1.0× rmp-serde", ds, g("encode", "leafwire"), g("encode", "rmp-serde"), 1.0),
            ratio_row("JSON → Leafwire ≤ 1.0× sonic-rs parse + compact re-emit", ds, g("from_json", "leafwire"), g("from_json", "sonic-rs"), 1.0),
            ratio_row("Leafwire → JSON ≤ 1.0× sonic-rs writing its value", ds, g("to_json", "leafwire"), g("to_json", "sonic-rs"), 1.0),
            ratio_row("open + prepared pointer ≤ 0.7× flexbuffers", ds, g("lookup", "leafwire (borrowed)"), g("lookup", "flexbuffers"), 0.7),
            ratio_row("open + JSON Pointer ≤ 0.7× flexbuffers", ds, g("lookup", "leafwire"), g("lookup", "flexbuffers"), 0.7),
        ]
        lookup = g("lookup", "leafwire")
        if lookup:
            body.append(["open + JSON Pointer ≤ 100 ns", ds, f"{lookup:,.0f} ns", "", verdict(lookup <= 100)])
    for workload in ("graphql", "geojson", "workbook"):
        for ds in rows.datasets(workload):
            g = lambda op, peer: rows.get(workload, ds, op, peer)
            data = f"{workload} {ds}" if workload == "workbook" else workload
            # The workbook has no named rmp-serde row: its structs-as-arrays row is the stricter stand-in.
            rmp = "rmp-serde (named)" if g("encode", "rmp-serde (named)") else "rmp-serde"
            body += [
                ratio_row(f"serde structs: encode ≤ 1.0× {rmp}", data, g("encode", "leafwire"), g("encode", rmp), 1.0),
                ratio_row(f"serde structs: decode ≤ 1.0× {rmp}", data, g("decode", "leafwire"), g("decode", rmp), 1.0),
                ratio_row("serde structs: decode ≤ 1.0× bincode", data, g("decode", "leafwire"), g("decode", "bincode"), 1.0),
            ]
    return [b for b in body if b] + python_rows()


def python_rows() -> list[list[str]]:
    """dumps ≤ 1.0× the faster of orjson and msgspec (geometric mean) and ≤ 1.2× on every
    file; loads ≤ 0.8× (geometric mean)."""
    if not PYTHON_RESULTS.exists():
        return []
    out = json.loads(PYTHON_RESULTS.read_text())
    body = []
    for workload, mean_limit, file_limit in (("dumps", 1.0, 1.2), ("loads", 0.8, None)):
        per_file = python_vs_fastest(out, workload)
        if not per_file:
            continue
        mean = gmean([r for _, r, _ in per_file])
        body.append([f"Python `{workload}` ≤ {mean_limit:g}× the faster of orjson and msgspec (geometric mean)",
                     f"{len(per_file)} files", f"{min(r for _, r, _ in per_file):.2f}× – {max(r for _, r, _ in per_file):.2f}× per file",
                     f"{mean:.2f}×", verdict(mean <= mean_limit)])
        if file_limit:
            for f, r, who in per_file:
                body.append([f"Python `{workload}` ≤ {file_limit:g}× the faster peer on every file", f, f"÷ {who}", f"{r:.2f}×", verdict(r <= file_limit)])
    return body


# The fastest Python serializers: orjson, and msgspec's MessagePack and JSON codecs (older
# result files have only orjson).
PYTHON_FASTEST = ["orjson", "msgspec.msgpack", "msgspec.json"]


def python_vs_fastest(out: dict, workload: str) -> list[tuple[str, float, str]]:
    """(file, Leafwire's median ÷ the fastest of PYTHON_FASTEST's, that peer) for each corpus
    file of a Python results file (bench/python/run.py) and workload (dumps or loads)."""
    by = {(r["workload"], r["file"], r["library"]): r["median_s"] for r in out["results"]}
    rows = []
    for f in (f for f in out["sizes"] if f != "columns"):
        peers = [(by[(workload, f, p)], p) for p in PYTHON_FASTEST if (workload, f, p) in by]
        mine = by.get((workload, f, "leafwire"))
        if mine and peers:
            best, who = min(peers)
            rows.append((f, mine / best, who))
    return rows


# Issue 12's size targets in bytes (lossless unless named).
GRAPHQL_PACKED_BYTES = 23_000
GRAPHQL_PACKED_ZSTD_BYTES = 20_000
COUNTRIES_PACKED_BYTES = 5_000_000
COUNTRIES_PACKED_ZSTD_BYTES = 4_000_000
# Element and selective-load targets: one element of a packed column, the countries' properties.
ELEMENT_NS = 10_000
SELECT_NS = 154_000


def issue_12(rows: Rows) -> list[list[str]]:
    body: list[list[str] | None] = []
    for workload, plain, zstd in (("graphql", GRAPHQL_PACKED_BYTES, GRAPHQL_PACKED_ZSTD_BYTES),
                                  ("geojson", COUNTRIES_PACKED_BYTES, COUNTRIES_PACKED_ZSTD_BYTES)):
        for ds in rows.datasets(workload):
            g = lambda op, peer: rows.get(workload, ds, op, peer)
            for peer, limit in (("leafwire (packed)", plain), ("leafwire (packed, zstd -19)", zstd)):
                size = g("size", peer)
                if size:
                    body.append([f"size of `{peer}` ≤ {limit:,} B", workload, f"{size:,} B", "", verdict(size <= limit)])
            body += [
                ratio_row("packed smaller than zstd -3 of the compact JSON", workload, g("size", "leafwire (packed)"), g("size", "JSON + zstd -3"), 1.0, "B"),
                ratio_row("packed size ≤ 0.59× / 0.74× Tree-Buf's", workload, g("size", "leafwire (packed)"), g("size", "tree-buf"),
                          0.59 if workload == "graphql" else 0.74, "B"),
                ratio_row("packed round trip ≥ 2× faster than Tree-Buf (≤ 0.5×)", workload, g("roundtrip", "leafwire (packed)"), g("roundtrip", "tree-buf"), 0.5),
                ratio_row("packed decode faster than zstd -3 decompression + sonic-rs", workload, g("decode", "leafwire (packed)"), g("decode", "JSON + zstd -3"), 1.0),
            ]
            select, element = g("select", "leafwire (packed)"), g("element", "leafwire (packed)")
            if select:
                body.append([f"properties-only selective load ≤ {SELECT_NS / 1e3:g} µs", workload, f"{select / 1e3:,.1f} µs",
                             "", verdict(select <= SELECT_NS)])
            if element:
                body.append([f"one element of a packed column ≤ {ELEMENT_NS / 1e3:g} µs", workload, f"{element / 1e3:,.2f} µs",
                             "", verdict(element <= ELEMENT_NS)])
    for ds in rows.datasets("workbook"):
        body.append(ratio_row("packed smaller than Avro", f"workbook {ds}", rows.get("workbook", ds, "size", "leafwire (packed)"),
                              rows.get("workbook", ds, "size", "apache-avro"), 1.0, "B"))
    return [b for b in body if b]


def section(workloads: dict) -> list[str]:
    rows = Rows(workloads)
    header = ["target", "data", "measured", "ratio", ""]
    out = ["## Issues 11 and 12: targets", "",
           "Each target of issue 11 (the everyday paths) and issue 12 (packed mode) judged from this run's rows "
           "(and, for Python, `bench/python/results/full.json`). What a missed row would take, with its profile: "
           "`spec/design/speed.md` (#11) and `spec/design/packed.md` §7 (#12).", ""]
    for title, body in (("Issue 11's targets", issue_11(rows)), ("Issue 12's targets", issue_12(rows))):
        if body:
            met = sum(1 for b in body if b[-1].startswith("met"))
            out += [f"### {title} ({met} of {len(body)} met)", "", "| " + " | ".join(header) + " |", "|---|---|---|---:|---|"]
            out += ["| " + " | ".join(b) + " |" for b in body] + [""]
    return out
