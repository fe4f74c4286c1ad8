#!/usr/bin/env python3
"""Turn a results directory (one JSON file per workload, plus machine.json and
run.json) into a Markdown report with tables, and PNG graphs beside the data.

    report.py RESULTS_DIR OUTPUT_MD

Ratios are computed here, from rows of the same run: "× leafwire" is the
peer's median divided by Leafwire's (above 1: Leafwire is faster or smaller),
"× baseline" divides by the workload's baseline peer.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tomllib
from pathlib import Path

import charts
import targets

WORKLOADS = ["corpus", "kv", "graphql", "geojson", "workbook", "columns", "files", "stream"]
CRATES = [
    "serde_json", "sonic-rs", "simd-json", "rmp-serde", "ciborium", "bson", "flexbuffers",
    "tree-buf", "prost", "apache-avro", "bincode", "postcard", "rkyv", "arrow-ipc",
    "serde-transcode", "leafwire",
]
STATUS_TEXT = {"wrong": "WRONG", "error": "error", "did_not_build": "did not build", "skipped": "skipped"}


def fmt_ns(ns: float) -> str:
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def fmt_bytes(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"


def fmt_ratio(r: float | None) -> str:
    if r is None:
        return ""
    return f"{r:.2f}×" if r < 10 else f"{r:.3g}×"


def metric(row: dict) -> float | None:
    """The number a row is compared by: median time, else bytes."""
    if row.get("status") != "ok":
        return None
    if row.get("time"):
        return row["time"]["median_ns"]
    return row.get("bytes")


class Workload:
    def __init__(self, data: dict):
        self.data = data
        self.name = data["workload"]
        self.rows = data["rows"]
        self.peers = []
        for r in self.rows:
            if r["peer"] not in self.peers:
                self.peers.append(r["peer"])
        self.by_key = {(r["dataset"], r["op"], r["peer"]): r for r in self.rows}
        self.footnotes: list[str] = []

    def datasets(self) -> list[str]:
        return list(dict.fromkeys(r["dataset"] for r in self.rows))

    def ops(self, dataset: str | None = None) -> list[str]:
        return list(dict.fromkeys(r["op"] for r in self.rows if dataset is None or r["dataset"] == dataset))

    def leafwire_row(self, dataset: str, op: str) -> dict | None:
        for name in self.data.get("leafwire", []):
            r = self.by_key.get((dataset, op, name))
            if r and metric(r) is not None:
                return r
        return None

    def ratio(self, row: dict, reference: dict | None) -> float | None:
        a, b = metric(row), metric(reference) if reference else None
        if a is None or not b:
            return None
        return a / b

    def vs_leafwire(self, row: dict) -> float | None:
        return self.ratio(row, self.leafwire_row(row["dataset"], row["op"]))

    def vs_baseline(self, row: dict) -> float | None:
        return self.ratio(row, self.by_key.get((row["dataset"], row["op"], self.data["baseline"])))

    def note(self, row: dict) -> str:
        """Footnote marker for a failed row; one footnote per (peer, status, reason)."""
        text = f"{row['peer']}: {STATUS_TEXT.get(row['status'], row['status'])}: {row.get('reason', '')}"
        if text not in self.footnotes:
            self.footnotes.append(text)
        return f"[{self.footnotes.index(text) + 1}]"

    def cell(self, row: dict | None, rss: bool = False) -> str:
        if row is None:
            return "–"
        if row["status"] != "ok":
            return f"{STATUS_TEXT.get(row['status'], row['status'])} {self.note(row)}"
        if row.get("time"):
            text = fmt_ns(row["time"]["median_ns"])
        else:
            text = f"{row['bytes']:,} B"
        r = self.vs_leafwire(row)
        is_leafwire = row["peer"] in self.data.get("leafwire", [])
        if r is not None and not is_leafwire:
            text += f" ({fmt_ratio(r)})"
        if rss and row.get("peak_rss_bytes"):
            text += f"<br>RSS {fmt_bytes(row['peak_rss_bytes'])}"
        return text


def table(header: list[str], body: list[list[str]], numeric: bool = True) -> str:
    """Markdown table; with `numeric`, every column but the first is right-aligned."""
    align = ["---" if i == 0 or not numeric else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines)


def pivot(w: Workload, rows: list[str], cols: list[str], key, rss: bool = False, row_title: str = "") -> str:
    body = [[r] + [w.cell(w.by_key.get(key(r, c)), rss) for c in cols] for r in rows]
    return table([row_title] + cols, body)


def detail(w: Workload) -> str:
    header = ["dataset", "op", "peer", "median", "min", "max", "reps × calls", "× leafwire", "× baseline", "bytes", "peak RSS", "status"]
    body = []
    for r in w.rows:
        t = r.get("time")
        body.append([
            r["dataset"], r["op"], r["peer"],
            fmt_ns(t["median_ns"]) if t else "", fmt_ns(t["min_ns"]) if t else "", fmt_ns(t["max_ns"]) if t else "",
            f"{t['reps']} × {t['iters']}" if t else "",
            fmt_ratio(w.vs_leafwire(r)), fmt_ratio(w.vs_baseline(r)),
            str(r["bytes"]) if r.get("bytes") is not None else "",
            fmt_bytes(r["peak_rss_bytes"]) if r.get("peak_rss_bytes") else "",
            r["status"] + (f": {r['reason']}" if r.get("reason") else "") + (f" ({r['note']})" if r.get("note") else ""),
        ])
    return "<details><summary>All rows: median, min, max, ratios</summary>\n\n" + table(header, body) + "\n\n</details>"


def peers_section(w: Workload) -> str:
    body = [[p["name"], p["api"], p.get("note", "")] for p in w.data.get("peers", [])]
    return table(["peer", "API used", "note"], body, numeric=False)


def section(w: Workload, out_dir: Path, rel: str) -> list[str]:
    d = w.data
    out = [f"## {w.name}: {d['title']}", ""]
    if w.name != "stream":  # its tables say what their cells and ratios are
        out += [f"Baseline: **{d['baseline']}**. Cells show the median; in parentheses the peer's median ÷ Leafwire's "
                "(above 1×: Leafwire is faster or smaller).", ""]
    out += [peers_section(w), ""]
    out += [f"- {n}" for n in d.get("notes", [])] + [""]
    graphs = charts.draw(w, out_dir)
    if w.name == "corpus":
        files = w.datasets()
        extra = {f["file"]: f for f in d["extra"]["files"]}
        out += ["### Sizes (parentheses: ÷ Leafwire; compact JSON is serde_json's column)", ""]
        sized = [p for p in w.peers if any(w.by_key.get((f, "size", p)) for f in files)]
        out += [pivot(w, files, sized, lambda r, c: (r, "size", c), row_title="file"), ""]
        for op in ["encode", "decode", "from_json", "to_json", "lookup"]:
            if op not in w.ops():
                continue
            # Only the peers that have rows for this operation get a column.
            peers = [p for p in w.peers if any(w.by_key.get((f, op, p)) for f in files)]
            out += [f"### {op}", "", pivot(w, files, peers, lambda r, c, op=op: (r, op, c), row_title="file"), ""]
        lazy = d["extra"]["lookup"]
        out += ["### Lookup pointers", "", "Peers that read lazily: " + ", ".join(p for p, v in lazy.items() if v == "lazy")
                + ". Peers that pay a full decode: " + ", ".join(p for p, v in lazy.items() if v != "lazy") + ".", ""]
        out += [table(["file", "JSON bytes", "JSON Pointer", "value"], numeric=False, body=
                      [[f, str(extra[f]["json_bytes"]), f"`{extra[f]['pointer']}`", f"`{json.dumps(extra[f]['value'], ensure_ascii=False)}`"] for f in files]), ""]
    elif w.name == "kv":
        for ds in w.datasets():
            out += [f"### {ds}", "", pivot(w, w.ops(ds), w.peers, lambda r, c, ds=ds: (ds, r, c), row_title="op"), ""]
    elif w.name in ("graphql", "geojson"):
        ds = w.datasets()[0]
        out += [pivot(w, w.peers, w.ops(ds), lambda r, c: (ds, c, r), row_title="peer"), ""]
        pub = d["extra"]["published"]
        out += ["**Published, not measured** (Tree-Buf README, other machine and versions; for orientation only):", ""]
        out += [table(["peer", "bytes", "round trip", "selective load"],
                      [[p["peer"], f"{p['bytes']:,}" if "bytes" in p else "", fmt_ns(p["roundtrip_ns"]) if "roundtrip_ns" in p else "",
                        fmt_ns(p["select_ns"]) if "select_ns" in p else ""] for p in pub]), ""]
        out += [f"Input JSON: {d['extra']['json_bytes']:,} bytes as published; {d['extra']['compact_json_bytes']:,} bytes compact.", ""]
        out += encode_throughput(w, ds)
    elif w.name == "workbook":
        for ds in w.datasets():
            out += [f"### {ds}", "", pivot(w, w.peers, w.ops(ds), lambda r, c, ds=ds: (ds, c, r), row_title="peer"), ""]
    elif w.name == "columns":
        for ds in w.datasets():
            out += [f"### {ds}", "", pivot(w, w.peers, w.ops(ds), lambda r, c, ds=ds: (ds, c, r), rss=True, row_title="peer"), ""]
        out += ["Peak RSS of a child that does nothing: " + ", ".join(
            f"{s['dataset']}: {fmt_bytes(s['empty_child_peak_rss'])}" for s in d["extra"]["scales"] if s.get("empty_child_peak_rss")) + ".", ""]
    elif w.name == "files":
        out += files_tables(w)
    elif w.name == "stream":
        out += stream_tables(w)
    if w.footnotes:
        out += [f"{i + 1}. {t}" for i, t in enumerate(w.footnotes)] + [""]
    out += [f"![{g}]({rel}/{g})" for g in graphs] + [""]
    out += [detail(w), ""]
    return out


def encode_throughput(w: Workload, ds: str) -> list[str]:
    """Issue #12's encode throughput: MB/s of the compact input JSON, from each peer's
    median encode time (the same rows as the table above, another unit)."""
    compact = w.data["extra"]["compact_json_bytes"]
    body = []
    for p in w.peers:
        r = w.by_key.get((ds, "encode", p))
        if r and r["status"] == "ok" and r.get("time"):
            body.append([p, f"{compact / r['time']['median_ns'] * 1e3:,.1f} MB/s"])
    if not body:
        return []
    return ["Encode throughput, in MB/s of the compact input JSON (its bytes ÷ the median encode time):", "",
            table(["peer", "encode"], body), ""]


# Issue #10's targets, shown beside the measurements (not measurements themselves).
COMMIT_TARGET_BYTES = 64 * 1024
COMMIT_TARGET_NS = 10e6
SIZE_TARGET_RATIO = 1.1
VALIDATE_TARGET_GBPS = 1.0


def mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def files_tables(w: Workload) -> list[str]:
    d = w.data
    extra = {x["dataset"]: x for x in d["extra"]["datasets"]}
    target = d["extra"]["commits_target"]
    out = ["### Commit of one 8-byte change", "",
           f"Targets (issue #10): ≤ {COMMIT_TARGET_BYTES // 1024} KiB written and ≤ {fmt_ns(COMMIT_TARGET_NS)} per commit; "
           f"file ≤ {SIZE_TARGET_RATIO}× canonical after {target:,} commits. Written = `wchar`; pages = `write_bytes`.", ""]
    body = []
    for ds in w.datasets():
        row = w.by_key.get((ds, "commit", "leafwire"))
        size_row = w.by_key.get((ds, "size after commits", "leafwire"))
        c = (extra.get(ds) or {}).get("commits") or {}
        if row is None or row["status"] != "ok" or not c:
            body.append([ds, w.cell(row), "", "", "", "", ""])
            continue
        t = row["time"]
        written = row["bytes"]
        latency = f"{fmt_ns(t['median_ns'])} ({fmt_ns(t['min_ns'])} – {fmt_ns(t['max_ns'])}) {mark(t['median_ns'] <= COMMIT_TARGET_NS)}"
        ratio = c["size_ratio"]
        if c.get("stopped"):
            projected = c.get("projected_ratio_at_target")
            after = (f"{fmt_bytes(c['size_after'])} = {ratio:.3g}× after {c['commits']:,}; "
                     f"projected {projected:.3g}× at {target:,} {mark(projected <= SIZE_TARGET_RATIO)}")
        else:
            after = f"{fmt_bytes(c['size_after'])} = {ratio:.3g}× {mark(ratio <= SIZE_TARGET_RATIO)}"
        if size_row is not None and size_row["status"] != "ok":
            after = w.cell(size_row)
        body.append([ds, fmt_bytes(c["canonical_bytes"]), f"{c['commits']:,} ({c['timed_commits']:,} timed)", latency,
                     f"{fmt_bytes(written)} {mark(written <= COMMIT_TARGET_BYTES)}", fmt_bytes(c["write_bytes"]["median"]), after])
    out += [table(["dataset", "canonical file", "commits", "latency: median (min – max)", "written per commit",
                   "pages per commit", "file after the commits ÷ canonical"], body), ""]

    open_ops = [op for op in w.ops() if op.startswith(("open", "map", "validate"))]
    out += ["### Open for editing", "",
            f"Throughput = file bytes ÷ median time; targets: validation of an untrusted file ≥ {VALIDATE_TARGET_GBPS:g} GB/s, "
            "a trusted open ≤ 1 ms.", ""]
    body = []
    for ds in w.datasets():
        cells = [ds]
        for op in open_ops:
            row = w.by_key.get((ds, op, "leafwire"))
            if row is None or row["status"] != "ok":
                cells.append(w.cell(row))
                continue
            gbps = row["bytes"] / row["time"]["median_ns"]
            met = row["time"]["median_ns"] <= 1e6 if "trusted:" in op and "untrusted" not in op else gbps >= VALIDATE_TARGET_GBPS
            cells.append(f"{fmt_ns(row['time']['median_ns'])}, {gbps:.3g} GB/s {mark(met)}")
        body.append(cells)
    out += [table(["dataset"] + [f"`{op}`" for op in open_ops], body), ""]

    commands = list(dict.fromkeys((r["peer"], r["op"]) for r in w.rows if r["peer"] != "leafwire"))
    out += ["### Whole-file commands (fresh process each)", "",
            "Median time; peak RSS (median), and in parentheses peak RSS ÷ the output file's size "
            "(issue #10's target for the Leafwire CLI: ≤ 1.5× plus a constant).", ""]
    body = []
    for peer, op in commands:
        cells = [f"{peer} `{op}`"]
        for ds in w.datasets():
            row = w.by_key.get((ds, op, peer))
            if row is None or row["status"] != "ok":
                cells.append(w.cell(row))
                continue
            rss = row.get("peak_rss_bytes") or 0
            ratio = f" ({rss / row['bytes']:.3g}×)" if row.get("bytes") else ""
            cells.append(f"{fmt_ns(row['time']['median_ns'])}<br>RSS {fmt_bytes(rss)}{ratio}")
        body.append(cells)
    out += [table(["command"] + w.datasets(), body), ""]
    floor = d["extra"].get("empty_run_peak_rss")
    if floor:
        out += [f"Peak RSS of an empty run (`/bin/true` through the same child): {fmt_bytes(floor)}.", ""]
    return out


# Issue 13's target for Leafwire's stream: this fraction of the hand-coded writer's throughput.
STREAM_TARGET_RATIO = 0.8


def fmt_rate(x: float) -> str:
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.3g}"


def stream_runs(w: Workload) -> dict:
    return {(r["dataset"], r["op"], r["peer"]): r for r in w.data["extra"].get("runs", [])}


def stream_mbps(w: Workload, row: dict | None) -> float | None:
    """Payload MB/s of a timed row (its time is per message)."""
    run = stream_runs(w).get((row["dataset"], row["op"], row["peer"])) if row else None
    if run is None or metric(row) is None:
        return None
    return run["payload_bytes"] / run["messages"] / row["time"]["median_ns"] * 1e3


def stream_speedup(w: Workload, row: dict | None, reference: dict | None) -> float | None:
    """Throughput ÷ the reference's (above 1: faster than the reference)."""
    a, b = (metric(row) if row else None), (metric(reference) if reference else None)
    return b / a if a and b else None


def stream_tables(w: Workload) -> list[str]:
    d, extra = w.data, w.data["extra"]
    base = d["baseline"]
    runs = stream_runs(w)
    doubles = [ds for ds in w.datasets() if ds.startswith("n=")]
    records = [ds for ds in w.datasets() if not ds.startswith("n=")]
    peers = [p for p in w.peers if any(w.by_key.get((ds, op, p)) for ds in doubles for op in w.ops())]
    ops = [o["op"] for o in extra["ops"]]
    out = [f"Cells: messages per second and MB/s of payload (8 bytes per double); in parentheses the throughput "
           f"÷ {base}'s at the same n (issue 13's target for Leafwire: ≥ {STREAM_TARGET_RATIO}× at every n, and "
           "ahead of every other serializing peer).", ""]

    def cell(row: dict | None) -> str:
        if row is None or row["status"] != "ok":
            return w.cell(row)
        text = f"{fmt_rate(1e9 / row['time']['median_ns'])}/s<br>{stream_mbps(w, row):.3g} MB/s"
        r = stream_speedup(w, row, w.by_key.get((row["dataset"], row["op"], base)))
        return text + (f" ({r:.2f}×)" if r is not None and row["peer"] != base else "")

    for op in ops:
        out += [f"### {op}", "", table(["n"] + peers, [[ds[2:]] + [cell(w.by_key.get((ds, op, p))) for p in peers] for ds in doubles]), ""]

    lw = [p for p in d.get("leafwire", []) if any(metric(w.by_key.get((ds, op, p)) or {}) is not None for ds in doubles for op in ops)]
    if lw:
        others = [p for p in peers if p != base and p not in d.get("leafwire", [])]
        body = []
        for name in lw:
            for op in ops:
                ratios, behind = [], []
                for ds in doubles:
                    row = w.by_key.get((ds, op, name))
                    ratios.append(stream_speedup(w, row, w.by_key.get((ds, op, base))))
                    for p in others:
                        o = w.by_key.get((ds, op, p))
                        if metric(o) is not None and (metric(row) is None or metric(o) < metric(row)):
                            behind.append(f"{p} at {ds}")
                got = [r for r in ratios if r is not None]
                if not got:
                    body.append([name, op, "no timed rows", "", ""])
                    continue
                worst = min(got)
                body.append([name, op, f"{worst:.2f}× – {max(got):.2f}× {mark(worst >= STREAM_TARGET_RATIO and len(got) == len(ratios))}",
                             mark(not behind), ", ".join(behind[:4]) + (" …" if len(behind) > 4 else "")])
        out += ["### Issue 13's targets", "",
                table(["row", "op", f"÷ {base} (min – max over n)", "ahead of every other serializer", "behind"], body, numeric=False), ""]

    wire_op = "unix" if "unix" in ops else ops[0]
    body = [[ds[2:]] + [f"{runs[(ds, wire_op, p)]['wire_bytes_per_message']:.1f}" if (ds, wire_op, p) in runs else "–" for p in peers]
            for ds in doubles]
    out += ["### Bytes on the wire per message", "",
            f"From the check run ({wire_op}): stream header and end marker included, spread over its messages.", "",
            table(["n"] + peers, body), ""]

    sc = extra.get("syscalls") or {}
    if sc.get("rows"):
        ns = sorted({r["n"] for r in sc["rows"]})
        by = {(r["peer"], r["n"]): r for r in sc["rows"]}
        sc_peers = list(dict.fromkeys(r["peer"] for r in sc["rows"]))

        def sc_cell(r: dict | None) -> str:
            if r is None:
                return "–"
            if "error" in r:
                return f"error: {r['error'][:60]}"
            per_write = r["bytes"] / r["write_syscalls"] if r["write_syscalls"] else 0
            return f"{r['writes_per_message']:.3g} ({fmt_bytes(per_write)}/write)"

        source = ", ".join(sorted({r.get("source", "?") for r in sc["rows"] if "error" not in r}))
        out += ["### Write calls per message (the writer)", "",
                f"One run of {fmt_bytes(sc['payload_bytes'])} of doubles per cell over the Unix socket, counted by {source}; "
                "in parentheses the bytes per write call.", "",
                table(["peer"] + [f"n={n}" for n in ns], [[p] + [sc_cell(by.get((p, n))) for n in ns] for p in sc_peers]), ""]

    if records:
        rbase = extra.get("records_baseline", "")
        rpeers = [p for p in w.peers if any(w.by_key.get((ds, op, p)) for ds in records for op in w.ops())]
        rops = [op for op in ops if any(w.by_key.get((ds, op, p)) for ds in records for p in rpeers)]
        info = {r["dataset"]: r for r in extra.get("records", []) if "dataset" in r}
        out += ["### Records: a stream of JSON documents", "",
                f"MB/s of the records' JSON lines (and records per second); in parentheses ÷ {rbase}'s throughput.", ""]

        def rcell(row: dict | None) -> str:
            if row is None or row["status"] != "ok":
                return w.cell(row)
            text = f"{stream_mbps(w, row):.3g} MB/s<br>{fmt_rate(1e9 / row['time']['median_ns'])}/s"
            r = stream_speedup(w, row, w.by_key.get((row["dataset"], row["op"], rbase)))
            return text + (f" ({r:.2f}×)" if r is not None and row["peer"] != rbase else "")

        for op in rops:
            body = [[f"{ds[len('records: '):]} ({info[ds]['records']} × {info[ds]['mean_json_line_bytes']:.0f} B)" if ds in info else ds]
                    + [rcell(w.by_key.get((ds, op, p))) for p in rpeers] for ds in records]
            out += [f"#### {op}", "", table(["records"] + rpeers, body), ""]
    return out


# Issue 14's targets for the tables workload (bench/python/tables.py, results/tables.json).
TABLES_PACK_RATIO = 1.0       # leafwire pack / from-csv time ÷ pyarrow CSV → Parquet
TABLES_SUM_RATIO = 1.0        # one-column sum from the mapped file ÷ pyarrow on the memory-mapped Arrow IPC file
TABLES_RSS_FRACTION = 0.05    # RSS the one-column sum adds ÷ the Leafwire file's size, at 1 GB
TABLES_LEAFWIRE_CONVERSION = ("leafwire pack", "leafwire from-csv")
TABLES_WRITERS = ("pyarrow CSV → Parquet", "pyarrow CSV → Arrow IPC")  # peers that write a file
TABLES_LEAFWIRE_ENGINE = "leafwire (mmap)"


def tables_sets(d: dict) -> list[tuple[str, dict]]:
    """(label, entry) for REFIT and every generated size."""
    out = [("REFIT", d["refit"])] if d.get("refit") else []
    return out + [(g["label"], g) for g in d.get("generated", [])]


def tables_cases(d: dict, kind: str) -> list[tuple[float, str]]:
    """Leafwire ÷ the best other peer: `conversion` (the Leafwire CLI against the peers that
    write a file), `query` (every query at every size, against every other engine)."""
    pairs = []
    for _, e in tables_sets(d):
        if kind == "conversion":
            lw = [c["s"] for c in e["conversion"] if c["peer"] in TABLES_LEAFWIRE_CONVERSION]
            others = [(c["s"], c["peer"]) for c in e["conversion"] if c["peer"] in TABLES_WRITERS]
            if lw and others:
                best, who = min(others)
                pairs.append((lw[0] / best, who))
        else:
            for q in dict.fromkeys(r["query"] for r in e.get("queries", [])):
                rows = [r for r in e["queries"] if r["query"] == q]
                lw = [r["s"] for r in rows if r["engine"] == TABLES_LEAFWIRE_ENGINE]
                others = [(r["s"], r["engine"]) for r in rows if r["engine"] != TABLES_LEAFWIRE_ENGINE]
                if lw and others:
                    best, who = min(others)
                    pairs.append((lw[0] / best, who))
    return pairs


def tables_targets(d: dict) -> list[list[str]]:
    """One row per target and size: what was measured, the ratio, met or missed."""
    body = []
    for label, e in tables_sets(d):
        by = {c["peer"]: c for c in e["conversion"]}
        lw = next((by[p] for p in TABLES_LEAFWIRE_CONVERSION if p in by), None)
        pq = by.get("pyarrow CSV → Parquet")
        if lw and pq:
            r = lw["s"] / pq["s"]
            body.append([f"`{lw['peer'][len('leafwire '):]}` ≤ {TABLES_PACK_RATIO:g}× pyarrow CSV → Parquet", label,
                         f"{lw['s']:.3g} s ÷ {pq['s']:.3g} s", f"{r:.2f}×", "met ✓" if r <= TABLES_PACK_RATIO else "missed ✗"])
    for label, e in tables_sets(d):
        rows = {r["engine"]: r for r in e.get("queries", []) if r["query"] == "sum(a)"}
        lw, ipc = rows.get(TABLES_LEAFWIRE_ENGINE), rows.get("pyarrow (Arrow IPC, mmap)")
        if lw and ipc:
            r = lw["s"] / ipc["s"]
            body.append([f"one-column sum ≤ {TABLES_SUM_RATIO:g}× memory-mapped Arrow IPC", label,
                         f"{lw['s'] * 1e3:.3g} ms ÷ {ipc['s'] * 1e3:.3g} ms", f"{r:.2f}×", "met ✓" if r <= TABLES_SUM_RATIO else "missed ✗"])
    for label, e in tables_sets(d):
        lw = next((r for r in e.get("queries", []) if r["query"] == "sum(a)" and r["engine"] == TABLES_LEAFWIRE_ENGINE), None)
        size = next((c["bytes"] for c in e["conversion"] if c["peer"] in TABLES_LEAFWIRE_CONVERSION), None)
        if lw and size:
            added, whole = lw["query_rss_mib"] * 2**20 / size, lw["peak_rss_mib"] * 2**20 / size
            judged = label == "1 GB"
            body.append([f"one-column sum: RSS added ≤ {TABLES_RSS_FRACTION:.0%} of the file" + ("" if judged else " (judged at 1 GB)"), label,
                         f"{lw['query_rss_mib']:.1f} MiB ÷ {fmt_bytes(size)} (whole peak {lw['peak_rss_mib']:.1f} MiB: {whole:.1%})",
                         f"{added:.1%}", ("met ✓" if added <= TABLES_RSS_FRACTION else "missed ✗") if judged else "–"])
    return body


def tables_section(d: dict) -> list[str]:
    out = ["## tables: CSV and Data Packages to files, and queries from the files", "",
           f"`bench/python/tables.py` (issue 14), {'quick' if d.get('quick') else 'full'} run started {d.get('started', '?')}, "
           f"Leafwire commit {d.get('commit', '?')}, Python {d['machine']['python']} on {d['machine']['cpus']} CPUs. "
           "Conversion: wall time of the Leafwire CLI process, or of the peer's read-and-write inside a Python child "
           "(interpreter start and imports excluded); medians. Queries: each in a fresh Python process after its imports and a "
           "warm-up on a tiny file of the same format; time from opening the file to the answer; files in the page cache. "
           "Every answer is checked against numpy's on the generated values.", "",
           "Peak RSS is the child's VmHWM; \"added\" is VmHWM minus the RSS after imports and warm-up, i.e. what the "
           "query itself brought in. Pages of a memory-mapped file count in RSS once touched (file-backed, reclaimable), "
           "so a mapped reader's RSS grows with the columns it reads. The 5% target is judged on the RSS the query "
           "added: the interpreter, numpy and the engine's own library (the same for every file size) are not the "
           "query's memory.", ""]
    out += ["### Issue 14's targets", "", table(["target", "data", "measured", "ratio", ""], tables_targets(d), numeric=False), ""]
    for label, e in tables_sets(d):
        if label == "REFIT":
            out += [f"### REFIT Data Package ({fmt_bytes(e['csv_bytes'])} of CSV in {e.get('files', '?')} files)", ""]
        else:
            out += [f"### Generated table, {label} of CSV ({e['rows']:,} rows, {fmt_bytes(e['csv_bytes'])})", ""]
        lw = next((c for c in e["conversion"] if c["peer"] in TABLES_LEAFWIRE_CONVERSION), None)
        body = [[c["peer"], f"{c['s']:.3g} s", fmt_ratio(c["s"] / lw["s"]) if lw and c is not lw else "",
                 f"{c['bytes'] / 1e6:.3g} MB" if c.get("bytes") else "–"] for c in e["conversion"]]
        out += [table(["conversion", "time", "÷ Leafwire", "output"], body), ""]
        if e.get("queries"):
            queries = list(dict.fromkeys(r["query"] for r in e["queries"]))
            engines = list(dict.fromkeys(r["engine"] for r in e["queries"]))
            by = {(r["query"], r["engine"]): r for r in e["queries"]}

            def cell(r: dict | None, lw: dict | None) -> str:
                if r is None:
                    return "–"
                text = fmt_ns(r["s"] * 1e9)
                if lw and r is not lw:
                    text += f" ({fmt_ratio(r['s'] / lw['s'])})"
                return text + f"<br>{r['peak_rss_mib']:.0f} MiB (+{r['query_rss_mib']:.0f})"

            body = [[e2] + [cell(by.get((q, e2)), by.get((q, TABLES_LEAFWIRE_ENGINE))) for q in queries] for e2 in engines]
            heads = ["sum(a)" if q == "sum(a)" else "where a < t: " + q.rsplit(" ", 1)[-1] for q in queries]
            out += ["Median time (in parentheses ÷ Leafwire's: above 1×, Leafwire is faster); peak RSS (+ what the query added).", "",
                    table(["engine"] + heads, body), ""]
    return out


def family(workload: str, op: str) -> str:
    """kv's read/1, read/10, ... summarize as one family "read"."""
    return op.split("/")[0] if workload == "kv" else op


def cases(w: Workload, against: set[str] | None = None) -> list[tuple[str, str, float, str]]:
    """(op, Leafwire row, its median ÷ the best other peer's, that peer) for every dataset
    and op where a Leafwire row and another peer (one of `against`, if given) both have a
    number."""
    names = set(w.data.get("leafwire", []))
    if against is not None:
        names |= set(w.peers) - set(against)
    out = []
    for (ds, op, peer), row in w.by_key.items():
        if peer not in names or metric(row) is None:
            continue
        others = [(metric(r), r["peer"]) for (d2, o2, p2), r in w.by_key.items()
                  if d2 == ds and o2 == op and p2 not in names and metric(r) is not None]
        if others:
            best, who = min(others)
            out.append((op, peer, metric(row) / best, who))
    return out


def pooled(pairs: list[tuple[float, str]]) -> tuple[float, float, float, list[str]]:
    """Geometric mean, min and max of the ratios, and the best peers, most frequent first."""
    ratios = [r for r, _ in pairs]
    gmean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    # Ties in name order: set order changes from process to process (string hashing).
    winners = sorted({who for _, who in pairs}, key=lambda p: (-sum(1 for _, w2 in pairs if w2 == p), p))
    return gmean, min(ratios), max(ratios), winners


def summary(workloads: list[Workload]) -> list[str]:
    """Leafwire ÷ the best other peer, per workload and operation, over datasets."""
    body = []
    for w in workloads:
        groups: dict[tuple[str, str], list[tuple[float, str]]] = {}
        for op, peer, ratio, who in cases(w):
            groups.setdefault((family(w.name, op), peer), []).append((ratio, who))
        for (op, peer), pairs in groups.items():
            gmean, lo, hi, winners = pooled(pairs)
            body.append([w.name, op, peer, fmt_ratio(gmean), f"{fmt_ratio(lo)} – {fmt_ratio(hi)}",
                         str(len(pairs)), ", ".join(winners[:3])])
    return ["## Summary", "",
            "Leafwire's median (time, or bytes for size) ÷ the best other peer's, per operation: geometric mean over "
            "the workload's datasets (and, for kv, over p and q). Below 1×: Leafwire is ahead.", "",
            table(["workload", "op", "leafwire row", "÷ best peer", "range", "cases", "best peer(s)"], body, numeric=False), ""]


def crate_versions(lock: Path) -> dict[str, str]:
    if not lock.exists():
        return {}
    packages = tomllib.loads(lock.read_text()).get("package", [])
    return {p["name"]: p["version"] for p in packages if p["name"] in CRATES}


def machine_section(results: Path, bench: Path, workloads: list[Workload]) -> list[str]:
    m = json.loads((results / "machine.json").read_text()) if (results / "machine.json").exists() else {}
    run = json.loads((results / "run.json").read_text()) if (results / "run.json").exists() else {}
    versions = crate_versions(bench / "Cargo.lock")
    out = ["## Reproducing", "", "```", run.get("command", "bench/run"), "```", ""]
    out += [f"- CPU: {m.get('cpu_model', '?')}, {m.get('logical_cpus', '?')} logical CPUs; "
            f"memory {fmt_bytes(m.get('memory_total_bytes', 0))}; Linux {m.get('kernel', '?')}",
            f"- {m.get('rustc', 'rustc ?')}; profile `{m.get('profile', '?')}` (fat LTO, 1 codegen unit), `-C target-cpu=native`",
            f"- Leafwire commit {run.get('git_commit', '?')}{' (with uncommitted changes)' if run.get('git_dirty') else ''}; "
            f"run started {run.get('started', '?')}, mode **{run.get('mode', '?')}**",
            "- Timing: " + ", ".join(f"{w.name} {w.data['elapsed_s']:.0f}s" for w in workloads),
            ""]
    for w in workloads:
        own, wm = w.data.get("run") or {}, w.data.get("machine") or {}
        if own and own.get("started") != run.get("started"):
            where = "" if wm.get("cpu_model") == m.get("cpu_model") else f" on {wm.get('cpu_model', '?')}, Linux {wm.get('kernel', '?')}"
            out += [f"- **{w.name}** is from a later run: `{own.get('command', '?')}`, Leafwire commit {own.get('git_commit', '?')}"
                    f"{' (with uncommitted changes)' if own.get('git_dirty') else ''}, started {own.get('started', '?')}{where}."]
    out += [""]
    probed = [w for w in workloads if w.data.get("probe_start")]
    if probed:
        def span(w: Workload, key: str) -> str:
            a, b = w.data["probe_start"][key], (w.data.get("probe_end") or {}).get(key)
            return f"{a:.2f} → {b:.2f}" if b is not None else f"{a:.2f}"
        out += ["Machine state (`bench/src/harness/probe.rs`): fixed loops timed at each workload's start and end, ns per "
                "step. The same loops on a quiet machine give the same figures; a run whose probes are well above another's "
                "was taken under contention, which slows code that misses the caches more than code that computes.", "",
                table(["workload", "compute", "1 MiB chase", "64 MiB chase"],
                      [[w.name, span(w, "compute_ns"), span(w, "cache_ns"), span(w, "memory_ns")] for w in probed]), ""]
    if workloads:
        p = workloads[0].data["plan"]
        out += [f"- Plan `{p['name']}`: per case {p['warmup_ms']} ms warm-up, samples of ≈{p['target_sample_us']} µs, "
                f"{p['min_reps']}–{p['max_reps']} samples (≈{p['budget_ms']} ms budget), all cases of a dataset interleaved round-robin. "
                "Times include dropping the result; inputs prepared outside the clock.", ""]
    out += [table(["crate", "version"], [[c, versions.get(c, "not in Cargo.lock")] for c in CRATES]), ""]
    return out


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: report.py RESULTS_DIR OUTPUT_MD")
    results, output = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    bench = Path(__file__).resolve().parent.parent
    workloads = [Workload(json.loads((results / f"{n}.json").read_text())) for n in WORKLOADS if (results / f"{n}.json").exists()]
    rel = os.path.relpath(results, output.parent)
    mode = workloads[0].data["mode"] if workloads else "?"
    lines = ["# Leafwire benchmark results", "",
             f"Generated by `bench/scripts/report.py` from `{os.path.relpath(results, bench.parent)}/*.json` ({mode} run). "
             "Do not edit by hand; rerun the command under Reproducing.", "",
             "Every peer's output is checked against a reference before it is timed; a peer that gets it wrong is "
             "listed as WRONG with the reason and is not timed.", ""]
    lines += ["Workloads: " + ", ".join(w.name for w in workloads) + ".", ""]
    body = []
    for w in workloads:
        body += section(w, results, rel)
    # tables.json comes from bench/python/tables.py (its own format, not the Rust harness's).
    tables = json.loads((results / "tables.json").read_text()) if (results / "tables.json").exists() else None
    if tables:
        lines[-2] = lines[-2][:-1] + ", tables."
        body += tables_section(tables)
    lines += summary(workloads) + targets.section({w.name: w for w in workloads}) + body + machine_section(results, bench, workloads)
    output.write_text("\n".join(lines))
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
