#!/usr/bin/env python3
"""Leafwire's Python benchmark: leafwire against json, orjson, msgspec, ujson, msgpack, cbor2,
pysimdjson, pickle (and pyarrow for columns).

Setup (from the repository root):

    pip install maturin && pip install .          # a release build of leafwire
    pip install orjson msgspec ujson msgpack cbor2 pysimdjson pyarrow
    python3 bench/python/run.py --quick           # a few minutes; the full run is longer

Workloads, over the JSON corpus in ../shared/data (json/*.json and graphql/):
- dumps: Python objects (from json.loads) → bytes/str; loads: back to Python objects.
  Every peer's round trip is checked to equal the input (JSON equivalence) before it is
  timed. "leafwire (typed)" decodes the JSON-converted document (leafwire.from_json), where
  numeric arrays are typed arrays and come back as numpy arrays.
- lazy: fetch the last leaf of the document (a deep JSON Pointer) — leafwire.open over the
  bytes or the file + pointer, pysimdjson's lazy parser + at_pointer, orjson.loads + indexing.
- columns: a file holding {"columns": {"c0".."c9": float64[N]}} (~112 MB with N = 1.4M);
  sum column c3 from the file: leafwire.open (mmap) + numpy view .sum(), pyarrow IPC file
  (pa.memory_map + pa.ipc.open_file), orjson.loads(json)["columns"]["c3"] + sum().

Each timing is the median of many interleaved rounds (every peer once per round, order
rotated), each round timing a batch sized to last about 2 ms or more, with the garbage
collector off and after one untimed call (see `interleaved`). Results are
saved as JSON in bench/python/results/ and printed as markdown tables; `--report FILE`
re-prints the tables of a saved run.
"""

import argparse
import datetime
import gc
import json
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
# The shared corpus beside the repository, or where LEAFWIRE_SHARED_DATA says (as for the
# test scripts), e.g. from a git worktree that has no ../shared beside it.
DATA = Path(os.environ.get("LEAFWIRE_SHARED_DATA") or REPO.parent / "shared" / "data")
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))

from peers import load_peers  # noqa: E402


# ---- timing ----

def _batch_size(fn, target=0.002):
    """Calls per sample so that one sample lasts about `target` seconds."""
    t0 = time.perf_counter()
    fn()
    single = time.perf_counter() - t0
    return max(1, min(10_000, int(target / max(single, 1e-9))))


def interleaved(fns, rounds, warm=True):
    """{name: median seconds per call} over `rounds` rounds, each running every fn once (one
    batch) in an order rotated per round.

    Each batch is timed as `timeit` times: after a full collection, with the cyclic
    collector off, so that what is measured is each library's own work. With the collector
    on, a peer that allocates many containers pays for collections whose cost depends on
    everything else alive in the process and on the garbage earlier samples left (orjson's
    and msgspec's `loads` of canada.json, 56,000 small lists: 11 ms a call right after a
    collection, 44 ms after one untimed call, whose collections fell into the timed one;
    2026-12-07), while leafwire's decoder holds the
    collector off while it builds. Off for everyone, every peer runs at its best.

    With `warm`, one untimed call precedes the timed batch: a full collection walks every
    live object and empties the interpreter's free lists, and the call after it pays for
    that (about 1.2 ms on update-center.json, for leafwire and orjson alike, on calls of
    1.6 and 2.3 ms). A batch of hundreds of calls (small files) spreads that over all of
    them; a batch of one (calls over 2 ms) would add the same constant to every peer and
    pull every ratio towards 1."""
    names = list(fns)
    batches = {n: _batch_size(fns[n]) for n in names}
    samples = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            fn, k = fns[n], batches[n]
            gc.collect()
            gc.disable()
            try:
                if warm:
                    fn()
                t0 = time.perf_counter()
                for _ in range(k):
                    fn()
                samples[n].append((time.perf_counter() - t0) / k)
            finally:
                gc.enable()
    return {n: {"median_s": statistics.median(s), "min_s": min(s), "rounds": len(s), "batch": batches[n]}
            for n, s in samples.items()}


# ---- correctness ----

def to_plain(value):
    """numpy arrays and tuples → lists, recursively, for comparisons with json.loads output."""
    if hasattr(value, "tolist") and not isinstance(value, (int, float)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    return value


def check_equal(got, expected, what):
    if to_plain(got) != expected:
        raise AssertionError(f"{what}: the result differs from the input; not timing it")


# ---- workloads ----

def corpus(quick):
    files = sorted((DATA / "json").glob("*.json")) + sorted((DATA / "graphql").glob("*.json"))
    if not files:
        sys.exit(f"no corpus found under {DATA}")
    return files


def run_roundtrips(files, peers, rounds, out):
    import leafwire

    for path in files:
        text = path.read_bytes()
        obj = json.loads(text)
        print(f"  {path.name}", flush=True)
        dumps_fns, loads_fns = {}, {}
        for name, peer in peers.items():
            if peer.dumps is not None:
                encoded = peer.dumps(obj)
                check_equal(peer.loads(encoded), obj, f"{name} on {path.name}")
                out["sizes"].setdefault(path.name, {})[name] = len(encoded)
                dumps_fns[name] = (lambda d=peer.dumps: d(obj))
                loads_fns[name] = (lambda l=peer.loads, e=encoded: l(e))
            elif peer.loads is not None:  # a parser only: it reads the JSON text
                check_equal(peer.loads(text), obj, f"{name} on {path.name}")
                loads_fns[name] = (lambda l=peer.loads: l(text))
        typed = leafwire.from_json(text)
        check_equal(leafwire.loads(typed), obj, f"leafwire (typed) on {path.name}")
        out["sizes"][path.name]["leafwire (typed)"] = len(typed)
        out["sizes"][path.name]["json text"] = len(text)
        loads_fns["leafwire (typed)"] = lambda: leafwire.loads(typed)
        for name, r in interleaved(dumps_fns, rounds).items():
            out["results"].append({"workload": "dumps", "file": path.name, "library": name, **r})
        for name, r in interleaved(loads_fns, rounds).items():
            out["results"].append({"workload": "loads", "file": path.name, "library": name, **r})


def last_leaf(value, tokens=()):
    """JSON Pointer tokens of the last scalar leaf (depth-first from the end)."""
    if isinstance(value, dict):
        for k in reversed(list(value)):
            found = last_leaf(value[k], tokens + (k,))
            if found is not None:
                return found
        return None
    if isinstance(value, list):
        for i in range(len(value) - 1, -1, -1):
            found = last_leaf(value[i], tokens + (i,))
            if found is not None:
                return found
        return None
    return tokens


def pointer_of(tokens):
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def run_lazy(files, peers, rounds, tmp, out):
    import leafwire
    import orjson

    for path in files:
        text = path.read_bytes()
        obj = json.loads(text)
        tokens = last_leaf(obj)
        pointer = pointer_of(tokens)
        expected = obj
        for t in tokens:
            expected = expected[t]
        lw = leafwire.from_json(text)
        lw_path = tmp / (path.stem + ".lw")
        lw_path.write_bytes(lw)

        def orjson_walk():
            v = orjson.loads(text)
            for t in tokens:
                v = v[t]
            return v

        fns = {
            "leafwire (bytes)": lambda: leafwire.open(lw).pointer(pointer),
            "leafwire (mmap file)": lambda: leafwire.open(lw_path).pointer(pointer),
            "orjson (loads + index)": orjson_walk,
        }
        if "pysimdjson" in peers:
            parser = peers["pysimdjson"].extra["parser"]
            fns["pysimdjson (lazy + at_pointer)"] = lambda: parser.parse(text).at_pointer(pointer)
        for name, fn in fns.items():
            got = fn()
            if got != expected or type(got) is not type(expected):
                raise AssertionError(f"{name} on {path.name}{pointer}: {got!r} != {expected!r}")
        for name, r in interleaved(fns, rounds).items():
            out["results"].append({"workload": "lazy", "file": path.name, "pointer": pointer, "library": name, **r})


def run_columns(rows, rounds, tmp, out):
    import numpy as np

    import leafwire
    import orjson

    print(f"  generating 10 float64 columns of {rows:,} rows", flush=True)
    rng = np.random.default_rng(42)
    columns = {f"c{i}": rng.standard_normal(rows) for i in range(10)}
    expected = float(columns["c3"].sum())
    lw_path, json_path, arrow_path = tmp / "columns.lw", tmp / "columns.json", tmp / "columns.arrow"
    with open(lw_path, "wb") as fp:
        leafwire.dump({"columns": columns}, fp)
    json_path.write_bytes(orjson.dumps({"columns": columns}, option=orjson.OPT_SERIALIZE_NUMPY))
    sizes = {"leafwire": lw_path.stat().st_size, "json": json_path.stat().st_size}

    def leafwire_mmap():
        return float(leafwire.open(lw_path)["columns"]["c3"].sum())

    def leafwire_load():
        with open(lw_path, "rb") as fp:
            return float(leafwire.load(fp)["columns"]["c3"].sum())

    def orjson_sum():
        with open(json_path, "rb") as fp:
            return sum(orjson.loads(fp.read())["columns"]["c3"])

    fns = {"leafwire (open, mmap view)": leafwire_mmap, "leafwire (load, full copy)": leafwire_load,
           "orjson (loads + sum)": orjson_sum}
    try:
        import pyarrow as pa
        import pyarrow.compute as pc

        table = pa.table(columns)
        with pa.OSFile(str(arrow_path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        sizes["pyarrow"] = arrow_path.stat().st_size
        del table

        def arrow_sum():
            with pa.memory_map(str(arrow_path), "r") as source:
                return pc.sum(pa.ipc.open_file(source).read_all().column("c3")).as_py()

        fns["pyarrow (IPC file, memory_map)"] = arrow_sum
    except ImportError:
        print("  pyarrow missing: skipped")
    last = rows - 1
    expected_one = float(columns["c3"][last])
    del columns
    for name, fn in fns.items():
        got = fn()
        if not math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-6):
            raise AssertionError(f"{name}: sum {got} != {expected}")
    # Calls of a second and more: a warm-up call would double the run for nothing.
    for name, r in interleaved(fns, rounds, warm=False).items():
        out["results"].append({"workload": "columns", "file": f"10 x float64[{rows}]", "library": name, **r})
    out["sizes"]["columns"] = sizes

    # The lazy workload's question on a file of 100 MB and more: one value, from the file.
    def leafwire_one():
        return float(leafwire.open(lw_path)["columns"]["c3"][last])

    def orjson_one():
        with open(json_path, "rb") as fp:
            return orjson.loads(fp.read())["columns"]["c3"][last]

    one = {"leafwire (mmap file)": leafwire_one, "orjson (loads + index)": orjson_one}
    for name, fn in one.items():
        if fn() != expected_one:
            raise AssertionError(f"{name}: {fn()} != {expected_one}")
    label = f"column file, {sizes['leafwire'] / 1e6:.0f} MB (JSON {sizes['json'] / 1e6:.0f} MB): c3[{last}]"
    for name, r in interleaved(one, rounds, warm=False).items():
        out["results"].append({"workload": "lazy", "file": label, "library": name, **r})


# ---- reporting ----

def fmt_time(s):
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def fmt_ratio(x):
    return f"{x:.3g}×" if x < 1000 else f"{x:,.0f}×"


def table(results, workload, reference, value="median_s"):
    rows = [r for r in results if r["workload"] == workload]
    if not rows:
        return ""
    files = list(dict.fromkeys(r["file"] for r in rows))
    libs = list(dict.fromkeys(r["library"] for r in rows))
    by = {(r["file"], r["library"]): r[value] for r in rows}
    lw = [lib for lib in libs if lib.startswith("leafwire")]
    head = ["file"] + libs + [f"speedup of {lib}" for lib in lw if reference in libs and lib != reference]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f in files:
        cells = [f] + [fmt_time(by[(f, lib)]) if (f, lib) in by else "—" for lib in libs]
        for lib in lw:
            if reference in libs and lib != reference:
                measured = (f, lib) in by and (f, reference) in by
                cells.append(fmt_ratio(by[(f, reference)] / by[(f, lib)]) if measured else "—")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


FAST_PEERS = ("orjson", "msgspec.msgpack", "msgspec.json")


def against_fastest(results, workload, lib="leafwire"):
    """A table of `lib`'s time ÷ the fastest of orjson and msgspec (either encoding) per
    file, and their geometric mean: the figure issue #11's Python targets are set on (below
    1 means leafwire is faster)."""
    rows = [r for r in results if r["workload"] == workload]
    by = {(r["file"], r["library"]): r["median_s"] for r in rows}
    files = list(dict.fromkeys(r["file"] for r in rows))
    lines = ["| file | fastest peer | leafwire ÷ fastest |", "|---|---|---|"]
    ratios = []
    for f in files:
        peers = [(by[(f, p)], p) for p in FAST_PEERS if (f, p) in by]
        if (f, lib) not in by or not peers:
            continue
        best, name = min(peers)
        ratios.append(by[(f, lib)] / best)
        lines.append(f"| {f} | {name} | {ratios[-1]:.2f} |")
    if not ratios:
        return ""
    geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
    lines.append(f"| **geometric mean** | | **{geo:.2f}** |")
    return "\n".join(lines)


def report(out):
    meta = out["meta"]
    parts = [
        f"# Leafwire Python benchmark ({'quick' if meta['quick'] else 'full'} run, {meta['date']})",
        f"CPU: {meta['cpu']} ({meta['cpus']} cores), load average at start {meta['loadavg']}; Python {meta['python']}; "
        + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()),
        "Median time per call (lower is better). Speedup columns: the reference's time / leafwire's time, so above 1 means leafwire is faster (the reference is orjson; for lazy access orjson.loads + indexing).",
        "## dumps (Python objects → bytes)", table(out["results"], "dumps", "orjson"),
        "## loads (bytes → Python objects)", table(out["results"], "loads", "orjson"),
        "## dumps: leafwire ÷ the fastest of orjson and msgspec", against_fastest(out["results"], "dumps"),
        "## loads: leafwire ÷ the fastest of orjson and msgspec", against_fastest(out["results"], "loads"),
        "## lazy: one deep value (the last leaf)", table(out["results"], "lazy", "orjson (loads + index)"),
        "## columns: sum one float64 column of a file", table(out["results"], "columns", "orjson (loads + sum)"),
        "## sizes (bytes)",
    ]
    sizes = out["sizes"]
    files = [f for f in sizes if f != "columns"]
    if not sizes:
        parts.pop()
    libs = list(dict.fromkeys(lib for f in files for lib in sizes[f]))
    lines = ["| file | " + " | ".join(libs) + " |", "|" + "---|" * (len(libs) + 1)] if files else []
    for f in files:
        lines.append(f"| {f} | " + " | ".join(f"{sizes[f].get(lib, '—'):,}" if lib in sizes[f] else "—" for lib in libs) + " |")
    if "columns" in sizes:
        lines.append("")
        lines.append("column file: " + ", ".join(f"{k} {v:,}" for k, v in sizes["columns"].items()))
    if lines:
        parts.append("\n".join(lines))
    if out.get("missing"):
        parts.append("Skipped (not installed): " + ", ".join(f"{k}" for k in out["missing"]))
    return "\n\n".join(p for p in parts if p)


def cpu_name():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds and a 10x smaller column file")
    ap.add_argument("--only", nargs="*", choices=["roundtrip", "lazy", "columns"], help="run only these workloads")
    ap.add_argument("--rows", type=int, help="rows per column (default 1.4M, a 112 MB file; 140k with --quick)")
    ap.add_argument("--report", type=Path, help="print the tables of a saved results file and exit")
    args = ap.parse_args()
    if args.report:
        print(report(json.loads(args.report.read_text())))
        return
    only = set(args.only or ["roundtrip", "lazy", "columns"])
    # Calls over 2 ms are timed one per sample, and these machines' speed moves from one
    # sample to the next (on 2026-12-07 a call's samples spread over 2-3x): more samples
    # for their medians.
    rounds = 7 if args.quick else 41
    rows = args.rows or (140_000 if args.quick else 1_400_000)
    peers, missing = load_peers()
    if "leafwire" not in peers or "orjson" not in peers:
        sys.exit("leafwire and orjson are required (pip install . && pip install orjson)")
    versions = {name: p.version for name, p in peers.items()}
    try:
        import numpy
        import pyarrow

        versions.update(numpy=numpy.__version__, pyarrow=pyarrow.__version__)
    except ImportError:
        missing.setdefault("pyarrow", "not installed")
    out = {
        "meta": {"date": datetime.datetime.now().isoformat(timespec="seconds"), "quick": args.quick,
                 "rounds": rounds, "rows": rows, "cpu": cpu_name(), "cpus": os.cpu_count(),
                 "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()), "python": platform.python_version(),
                 "versions": versions},
        "missing": missing, "results": [], "sizes": {},
    }
    files = corpus(args.quick)
    with tempfile.TemporaryDirectory(prefix="leafwire-bench-") as tmp:
        tmp = Path(tmp)
        if "roundtrip" in only:
            print("dumps/loads:", flush=True)
            run_roundtrips(files, peers, rounds, out)
        if "lazy" in only:
            print("lazy access:", flush=True)
            run_lazy(files, peers, rounds * 2, tmp, out)
        if "columns" in only:
            print("columns:", flush=True)
            run_columns(rows, max(3, rounds // 3), tmp, out)
    RESULTS.mkdir(parents=True, exist_ok=True)
    # A run of some workloads only goes to a file of its own: over full.json it would drop
    # the others' rows, which the README's figures are generated from.
    partial = "" if only == {"roundtrip", "lazy", "columns"} else "-partial"
    target = RESULTS / f"{'quick' if args.quick else 'full'}{partial}.json"
    target.write_text(json.dumps(out, indent=1) + "\n")
    print()
    print(report(out))
    print(f"\nsaved {target.relative_to(REPO)}")


if __name__ == "__main__":
    main()
