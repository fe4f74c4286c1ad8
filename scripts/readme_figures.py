#!/usr/bin/env python3
"""Regenerates the figures in README.md from the committed benchmark results, so that no
number in the README is typed by hand (issue #10: the size table had gone stale).

    scripts/readme_figures.py            rewrite README.md between the markers
    scripts/readme_figures.py --check    exit 1 (and show a diff) when README.md is stale

Each generated block sits between `<!-- figures:NAME -->` and `<!-- /figures -->`:
- sizes:   bench/results/corpus.json, rows `size` (compact JSON is serde_json's output,
           MessagePack is rmp-serde's);
- summary: the same ratios as bench/RESULTS.md's Summary (bench/scripts/report.py),
           pooled as the README's rows name them, and two rows from
           bench/results/tables.json (bench/python/tables.py) when it exists;
- python:  bench/python/results/full.json (bench/python/run.py, full run);
- targets: issues 11 and 12's targets met and missed (bench/scripts/targets.py, from the
           same result files).

Standard library only; it needs nothing beyond the repository.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
PYTHON_RESULTS = ROOT / "bench" / "python" / "results" / "full.json"
sys.path.insert(0, str(ROOT / "bench" / "scripts"))
import report  # noqa: E402  (bench/scripts/report.py: one home for the ratios)
import targets  # noqa: E402  (bench/scripts/targets.py: issues 11 and 12's targets)

BLOCK = re.compile(r"(<!-- figures:(?P<name>[a-z]+) -->\n)(?P<body>.*?)(<!-- /figures -->)", re.S)


def load(name: str) -> report.Workload:
    return report.Workload(json.loads((RESULTS / f"{name}.json").read_text()))


def sizes() -> str:
    w = load("corpus")
    body = []
    for ds in w.datasets():
        size = {peer: w.by_key.get((ds, "size", peer), {}).get("bytes") for peer in ("serde_json", "leafwire", "rmp-serde")}
        json_bytes, leaf, msgpack = size["serde_json"], size["leafwire"], size["rmp-serde"]
        ratio = f"{leaf / json_bytes:.2f}" if leaf and json_bytes else ""
        body.append([ds] + [f"{n:,}" if n else "" for n in (json_bytes, leaf)] + [ratio, f"{msgpack:,}" if msgpack else ""])
    return report.table(["file", "compact JSON", "Leafwire", "ratio", "MessagePack"], body)


# The README's rows: label, then (workload, op, Leafwire row, against) selectors whose
# cases are pooled: geometric mean over every dataset (and op) matched, with the range.
# An op ending in `*` matches every op it begins. `against` picks the peers: None for
# all; for kv, "eager" (peers that decode and encode: they have write rows) or "lazy"
# (readers that look keys up in the bytes: read rows only), as the kv workload pairs them.
SUMMARY_ROWS = [
    ("columns (1 MB–1 GB, mmap): sum", [("columns", "sum", "leafwire", None)]),
    ("columns: filtered sums (1/256 … 1)", [("columns", "filter*", "leafwire", None)]),
    ("columns: size", [("columns", "size", "leafwire", None)]),
    ("corpus: size", [("corpus", "size", "leafwire", None)]),
    ("corpus: decode to an owned Value", [("corpus", "decode", "leafwire", None)]),
    ("corpus: decode to a borrowed ValueRef", [("corpus", "decode", "leafwire (borrowed)", None)]),
    ("corpus: lookup (one deep value, lazy; open + text pointer)", [("corpus", "lookup", "leafwire", None)]),
    ("corpus: lookup with a prepared Pointer (open + resolve)", [("corpus", "lookup", "leafwire (borrowed)", None)]),
    ("corpus: encode", [("corpus", "encode", "leafwire", None)]),
    ("corpus: from JSON text", [("corpus", "from_json", "leafwire", None)]),
    ("corpus: to JSON text", [("corpus", "to_json", "leafwire", None)]),
    ("kv edited in place (seed 001) against decode/encode peers: read", [("kv", "read/*", "leafwire (in place)", "eager")]),
    ("kv edited in place: write", [("kv", "write/*", "leafwire (in place)", "eager")]),
    ("kv edited in place: read-write", [("kv", "read-write/*", "leafwire (in place)", "eager")]),
    ("kv lazy read, against lazy readers", [("kv", "read/*", "leafwire (lazy Document)", "lazy")]),
    ("geojson select (properties only)", [("geojson", "select", "leafwire", None)]),
    ("stream: n doubles (1–2048) and JSON records, over TCP, a Unix socket and a file (time per message)",
     [("stream", op, "leafwire", None) for op in ("tcp", "unix", "file")]),
    ("graphql / geojson / workbook through serde structs (encode, decode, round trip)",
     [(wl, op, "leafwire", None) for wl in ("graphql", "geojson", "workbook") for op in ("encode", "decode", "roundtrip")]),
]

# From bench/results/tables.json (bench/python/tables.py, full run): conversion pairs the
# Leafwire CLI with the peers that write a file; queries pool every query at every size.
TABLES_RESULTS = RESULTS / "tables.json"
TABLES_ROWS = [
    ("tables (Python; CSV 1 MB–1 GB, mmap): sum and filtered sums from the file", "query"),
    ("tables: CSV / Data Package to a file (`from-csv`, `pack`)", "conversion"),
]


def matches(pattern: str, op: str) -> bool:
    return op.startswith(pattern[:-1]) if pattern.endswith("*") else op == pattern


def peer_set(w: report.Workload, against: str | None) -> set[str] | None:
    if against is None:
        return None
    others = set(w.peers) - set(w.data.get("leafwire", []))
    eager = {r["peer"] for r in w.rows if r["op"].startswith("write")} & others
    return eager if against == "eager" else others - eager


def summary() -> str:
    body = []
    loaded: dict[str, report.Workload] = {}
    for label, selectors in SUMMARY_ROWS:
        pairs = []
        for wl, pattern, row, against in selectors:
            w = loaded.setdefault(wl, load(wl)) if (RESULTS / f"{wl}.json").exists() else None
            if w is None:
                continue
            pairs += [(ratio, who) for op, peer, ratio, who in report.cases(w, peer_set(w, against))
                      if peer == row and matches(pattern, op)]
        if not pairs:
            body.append([label, "not measured", "", ""])
            continue
        gmean, lo, hi, winners = report.pooled(pairs)
        body.append([label, report.fmt_ratio(gmean), f"{report.fmt_ratio(lo)} – {report.fmt_ratio(hi)} ({len(pairs)})",
                     ", ".join(winners[:3])])
    # The tables workload (bench/python/tables.py) writes its own format; report.py pairs
    # its rows the same way (Leafwire ÷ the best other peer per size and query).
    if TABLES_RESULTS.exists():
        d = json.loads(TABLES_RESULTS.read_text())
        for label, kind in TABLES_ROWS:
            pairs = report.tables_cases(d, kind)
            if not pairs:
                body.append([label, "not measured", "", ""])
                continue
            gmean, lo, hi, winners = report.pooled(pairs)
            body.append([label, report.fmt_ratio(gmean), f"{report.fmt_ratio(lo)} – {report.fmt_ratio(hi)} ({len(pairs)})",
                         ", ".join(winners[:3])])
    return report.table(["workload: operation", "Leafwire ÷ best peer", "range (cases)", "best peer(s)"], body, numeric=False)


def fmt_time(s: float) -> str:
    return report.fmt_ns(s * 1e9)


def times_x(x: float) -> str:
    return f"{x:.3g}×" if x < 1000 else f"{round(x, -2 if x < 1e5 else -3):,.0f}×"


def python() -> str:
    out = json.loads(PYTHON_RESULTS.read_text())
    by = {(r["workload"], r["file"], r["library"]): r["median_s"] for r in out["results"]}

    def ratios(workload: str, lib: str, ref: str, files: list[str]) -> list[float]:
        return [by[(workload, f, lib)] / by[(workload, f, ref)] for f in files if (workload, f, lib) in by and (workload, f, ref) in by]

    corpus = [f for f in out["sizes"] if f != "columns"]

    def vs_fastest(workload: str) -> tuple[list[float], list[str]]:
        rows = targets.python_vs_fastest(out, workload)
        return [r for _, r, _ in rows], sorted({who for _, _, who in rows})

    loads, loads_peers = vs_fastest("loads")
    dumps, dumps_peers = vs_fastest("dumps")
    lines = [
        f"- `loads` takes **{targets.gmean(loads):.2f}×** the time of the fastest of {', '.join(loads_peers)} on each file "
        f"(geometric mean over the corpus; {min(loads):.2f}–{max(loads):.2f}× per file).",
        f"- `dumps` takes {targets.gmean(dumps):.2f}× the time of the fastest of {', '.join(dumps_peers)} "
        f"({min(dumps):.2f}–{max(dumps):.2f}× per file).",
    ]
    mm, mem, oj = "leafwire (mmap file)", "leafwire (bytes)", "orjson (loads + index)"
    column_file = [f for (wl, f, lib) in by if wl == "lazy" and f.startswith("column file") and lib == mm]
    lazy_corpus = [1 / r for r in ratios("lazy", mem, oj, corpus)]
    if column_file:
        f = column_file[0]
        mb = out["sizes"]["columns"]["leafwire"] / 1e6
        lines.append(
            f"- Reading one value from a {mb:.0f} MB file (`leafwire.open(path)`, memory-mapped) takes {fmt_time(by[('lazy', f, mm)])}, "
            f"{times_x(by[('lazy', f, oj)] / by[('lazy', f, mm)])} less than `orjson.loads` of the same data as JSON plus "
            f"indexing ({fmt_time(by[('lazy', f, oj)])}); on the corpus files, from bytes in memory (`leafwire.open(bytes)` "
            f"against `orjson.loads` of the same bytes), {times_x(min(lazy_corpus))}–{times_x(max(lazy_corpus))} less.")
    col = {lib: s for (wl, _, lib), s in by.items() if wl == "columns"}
    view, arrow, orj = col.get("leafwire (open, mmap view)"), col.get("pyarrow (IPC file, memory_map)"), col.get("orjson (loads + sum)")
    if view and arrow and orj:
        lines.append(f"- Summing a column of that file through the numpy view takes {fmt_time(view)}, against "
                     f"{fmt_time(arrow)} for pyarrow's memory-mapped IPC file and {fmt_time(orj)} for orjson.")
    return "\n".join(lines)


def issue_targets() -> str:
    """How many of issues 11 and 12's targets the committed run meets (bench/scripts/targets.py,
    the tables at the top of bench/RESULTS.md)."""
    workloads = {n: load(n) for n in ("corpus", "graphql", "geojson", "workbook") if (RESULTS / f"{n}.json").exists()}
    rows = targets.Rows(workloads)
    lines = []
    for issue, body in (("11 (the everyday paths)", targets.issue_11(rows)), ("12 (packed mode)", targets.issue_12(rows))):
        met = sum(1 for b in body if b[-1].startswith("met"))
        # Per target: on how many of its files (or cases) it is missed.
        cases: dict[str, list[bool]] = {}
        for b in body:
            cases.setdefault(b[0], []).append(b[-1].startswith("met"))
        missed = [f"{t} (missed on {oks.count(False)} of {len(oks)})" for t, oks in cases.items() if not all(oks)]
        lines.append(f"- Issue {issue}: {met} of {len(body)} target rows met" + (f". Missed: {'; '.join(missed)}." if missed else "."))
    return "\n".join(lines)


GENERATORS = {"sizes": sizes, "summary": summary, "python": python, "targets": issue_targets}


def render(text: str) -> str:
    def replace(m: re.Match) -> str:
        name = m.group("name")
        if name not in GENERATORS:
            sys.exit(f"readme_figures: unknown block <!-- figures:{name} --> (known: {', '.join(GENERATORS)})")
        return m.group(1) + GENERATORS[name]() + "\n" + m.group(4)

    return BLOCK.sub(replace, text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when README.md differs from the results")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    args = parser.parse_args()
    text = args.readme.read_text()
    found = {m.group("name") for m in BLOCK.finditer(text)}
    if not found:
        print(f"readme_figures: no <!-- figures:NAME --> blocks in {args.readme}", file=sys.stderr)
        return 1
    new = render(text)
    if args.check:
        if new == text:
            print(f"readme_figures: {args.readme.name} matches the results ({', '.join(sorted(found))})")
            return 0
        sys.stdout.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True), "README.md", "regenerated"))
        print("readme_figures: README.md is stale: run scripts/readme_figures.py", file=sys.stderr)
        return 1
    if new != text:
        args.readme.write_text(new)
        print(f"readme_figures: rewrote {', '.join(sorted(found))} in {args.readme}")
    else:
        print("readme_figures: already up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
