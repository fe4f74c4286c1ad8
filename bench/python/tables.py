#!/usr/bin/env python3
"""The tables workload (issue 14, Wisent's experiment): CSV and Data Packages converted to
Leafwire and to the formats people use for tables, then queried from the files.

    python3 bench/python/tables.py --quick        # 1 MB and 10 MB tables + REFIT, a few minutes
    python3 bench/python/tables.py                # adds 100 MB and 1 GB tables
    python3 bench/python/tables.py --report FILE  # re-print a saved run

Conversion: `leafwire from-csv` (generated CSV) and `leafwire pack` (the REFIT Data
Package), against pyarrow CSV → Parquet (pyarrow's defaults: snappy), pyarrow CSV → Arrow
IPC (uncompressed, the form that is memory-mapped), and pandas `read_csv` (parse only).
Wall time of each conversion in a fresh process, and output sizes.

Query, each in a fresh process (so peak RSS is the query's own): the sum of one integer
column, and the sum of a float column over the rows where the integer column is below a
threshold (selectivity 1/256, 1/16, 1/2, 1). Engines: Leafwire (`leafwire.open(path)` maps
the file; the table's columns are numpy views of the mapping), pandas on the CSV
(`usecols`), pyarrow on Parquet (the two columns), memory-mapped Arrow IPC, Polars
(`scan_parquet`, lazy), and DuckDB on Parquet (SQL). Every engine's answer is checked
against numpy's on the generated data before its time is kept. Time is measured inside
the child from before opening the file to the answer (interpreter start and imports
excluded); peak RSS is the child's `ru_maxrss`, reported whole and above the child's RSS
after its imports (what the query itself added).

Results: bench/results/tables.json (full) or bench/results/quick/tables.json (--quick);
bench/scripts/report.py renders them into RESULTS.md.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DATA = Path(os.environ.get("LEAFWIRE_SHARED_DATA") or REPO.parent / "shared" / "data")
REFIT = DATA / "datapackage" / "refit-electrical-load" / "datapackage.json"
CLI = Path(os.environ.get("LEAFWIRE_CLI") or REPO / "target" / "release" / "leafwire")
SELECTIVITIES = [("1/256", 1 / 256), ("1/16", 1 / 16), ("1/2", 1 / 2), ("1", 1.0)]
A_RANGE = 1 << 20

# -- generated tables -------------------------------------------------------------------

INT_COLUMNS = ["a"] + [f"i{k}" for k in range(8)]
FLOAT_COLUMNS = ["x"] + [f"f{k}" for k in range(4)]
CATEGORIES = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi"]


def generate_csv(path, target_bytes, seed=14):
    """A wide table like the sensor and sales tables people ship as CSV: a timestamp, an
    id, nine integer columns (`a` uniform in [0, 2^20)), five float columns (4 decimals),
    a category and a short text. Written in chunks of 200,000 rows by pyarrow's CSV writer
    (numpy's string functions took ~200 s a GB); returns (rows, a, x), the two queried
    columns as the values the CSV text spells (shortest round-trip float text)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv
    rng = np.random.default_rng(seed)
    header = ["ts", "id"] + INT_COLUMNS + FLOAT_COLUMNS + ["cat", "note"]
    cats = pa.array(CATEGORIES)
    rows, a_parts, x_parts = 0, [], []
    options = pacsv.WriteOptions(include_header=False, quoting_style="none")
    with open(path, "wb") as f:
        f.write((",".join(header) + "\n").encode())
        while f.tell() < target_bytes:
            # 1 MB holds ~5,000 rows: small chunks at small sizes keep the 1 MB table 1 MB.
            n = int(min(200_000, max(1_000, (target_bytes - f.tell()) // 180 + 1)))
            ids = np.arange(rows, rows + n)
            cols = {"ts": pa.array(np.datetime64("2024-01-01T00:00:00", "s") + ids.astype("timedelta64[s]") * 7), "id": ids}
            a = rng.integers(0, A_RANGE, n)
            cols["a"] = a
            for k in range(8):
                cols[f"i{k}"] = rng.integers(-50_000, 50_000, n)
            floats = {name: np.round(rng.normal(100, 30, n), 4) for name in FLOAT_COLUMNS}
            cols.update(floats)
            cols["cat"] = cats.take(pa.array(rng.integers(0, len(CATEGORIES), n)))
            cols["note"] = pc.binary_join_element_wise("note-", pa.array(rng.integers(0, 10**9, n)).cast(pa.string()), "")
            pacsv.write_csv(pa.table(cols), f, options)
            a_parts.append(a)
            x_parts.append(floats["x"])
            rows += n
    return rows, np.concatenate(a_parts), np.concatenate(x_parts)


# -- children ----------------------------------------------------------------------------

CHILD_PRELUDE = r"""
import json, sys, time
def status_kib(field):
    # /proc/self/status, not getrusage: ru_maxrss carries the high-water mark of the
    # process that forked the child (here the harness, holding the generated table) across
    # exec, so every child reported the parent's peak. VmHWM is this address space's own.
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
"""


def child(code, setup):
    """Runs `setup` (imports and a warm-up on a tiny file of the same format) then `code`
    (which sets `answer`) in a fresh interpreter; returns (seconds, answer, peak RSS KiB,
    RSS after setup KiB)."""
    program = CHILD_PRELUDE + setup + "\nbase = status_kib('VmRSS')\nt0 = time.perf_counter()\n" + code + (
        "\nt1 = time.perf_counter()\nprint(json.dumps({'s': t1 - t0, 'answer': answer, 'peak': status_kib('VmHWM'), 'base': base}))\n"
    )
    try:
        out = subprocess.run([sys.executable, "-c", program], check=True, capture_output=True, text=True)
    except subprocess.CalledProcessError as e:
        raise SystemExit(f"child failed:\n{program}\n{e.stderr}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return r["s"], r["answer"], r["peak"], r["base"]


def timed_command(argv):
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - t0


def median_of(reps, f):
    runs = [f() for _ in range(reps)]
    return statistics.median(r if isinstance(r, float) else r[0] for r in runs), runs


# -- conversion --------------------------------------------------------------------------

PA_IMPORTS = "import pyarrow, pyarrow.csv, pyarrow.parquet, pyarrow.ipc"


def convert_generated(csv, work, reps):
    lw, pq, ipc = work / "t.lw", work / "t.parquet", work / "t.arrow"
    rows = []
    t, _ = median_of(reps, lambda: timed_command([str(CLI), "from-csv", str(csv), "-o", str(lw)]))
    rows.append({"peer": "leafwire from-csv", "s": t, "bytes": lw.stat().st_size})
    code_pq = f"import pyarrow.csv as c, pyarrow.parquet as q\nq.write_table(c.read_csv({str(csv)!r}), {str(pq)!r})\nanswer = 0"
    t, _ = median_of(reps, lambda: child(code_pq, PA_IMPORTS)[0])
    rows.append({"peer": "pyarrow CSV → Parquet", "s": t, "bytes": pq.stat().st_size})
    code_ipc = (f"import pyarrow as pa, pyarrow.csv as c\nt = c.read_csv({str(csv)!r})\n"
                f"with pa.OSFile({str(ipc)!r}, 'wb') as f:\n    w = pa.ipc.new_file(f, t.schema); w.write_table(t); w.close()\nanswer = 0")
    t, _ = median_of(reps, lambda: child(code_ipc, PA_IMPORTS)[0])
    rows.append({"peer": "pyarrow CSV → Arrow IPC", "s": t, "bytes": ipc.stat().st_size})
    t, _ = median_of(reps, lambda: child(f"answer = len(pandas.read_csv({str(csv)!r}))", "import pandas")[0])
    rows.append({"peer": "pandas read_csv", "s": t, "bytes": None})
    t, _ = median_of(reps, lambda: child(f"answer = len(pandas.read_csv({str(csv)!r}, engine='pyarrow'))", "import pandas, pyarrow.csv")[0])
    rows.append({"peer": "pandas read_csv (engine=pyarrow)", "s": t, "bytes": None})
    return rows, {"lw": lw, "parquet": pq, "ipc": ipc, "csv": csv}


def convert_refit(work, reps):
    lw = work / "refit.lw"
    rows = []
    t, _ = median_of(reps, lambda: timed_command([str(CLI), "pack", str(REFIT), "-o", str(lw)]))
    rows.append({"peer": "leafwire pack", "s": t, "bytes": lw.stat().st_size})
    csvs = sorted((REFIT.parent / "data").glob("*.csv"))
    pq_dir, ipc_dir = work / "refit_pq", work / "refit_ipc"
    pq_dir.mkdir(exist_ok=True)
    ipc_dir.mkdir(exist_ok=True)
    listing = repr([str(c) for c in csvs])
    code_pq = (f"import pyarrow.csv as c, pyarrow.parquet as q, os\nfor p in {listing}:\n"
               f"    q.write_table(c.read_csv(p), os.path.join({str(pq_dir)!r}, os.path.basename(p) + '.parquet'))\nanswer = 0")
    t, _ = median_of(reps, lambda: child(code_pq, PA_IMPORTS)[0])
    rows.append({"peer": "pyarrow CSV → Parquet", "s": t, "bytes": sum(p.stat().st_size for p in pq_dir.iterdir())})
    code_ipc = (f"import pyarrow as pa, pyarrow.csv as c, os\nfor p in {listing}:\n    t = c.read_csv(p)\n"
                f"    with pa.OSFile(os.path.join({str(ipc_dir)!r}, os.path.basename(p) + '.arrow'), 'wb') as f:\n"
                f"        w = pa.ipc.new_file(f, t.schema); w.write_table(t); w.close()\nanswer = 0")
    t, _ = median_of(reps, lambda: child(code_ipc, PA_IMPORTS)[0])
    rows.append({"peer": "pyarrow CSV → Arrow IPC", "s": t, "bytes": sum(p.stat().st_size for p in ipc_dir.iterdir())})
    code_pd = f"import pandas\nanswer = sum(len(pandas.read_csv(p)) for p in {listing})"
    t, _ = median_of(reps, lambda: child(code_pd, "import pandas")[0])
    rows.append({"peer": "pandas read_csv", "s": t, "bytes": None})
    code_pd = f"answer = sum(len(pandas.read_csv(p, engine='pyarrow')) for p in {listing})"
    t, _ = median_of(reps, lambda: child(code_pd, "import pandas, pyarrow.csv")[0])
    rows.append({"peer": "pandas read_csv (engine=pyarrow)", "s": t, "bytes": None})
    return rows


# -- queries -----------------------------------------------------------------------------

def engines():
    """(name, imports, code(files, threshold or None)) for each engine. `answer` is the sum
    of `a` (threshold None) or of `x` where a < threshold. `files` maps lw, parquet, ipc,
    csv to paths; the child runs the code once on the tiny files (warm-up: lazy imports,
    kernel registries, first-call costs) and then, timed, on the measured ones."""

    def leafwire(f, th):
        head = f"t = next(iter(leafwire.open({f['lw']!r}).tables().values()))\n"
        if th is None:
            return head + "answer = int(t['a'].sum())"
        return head + f"a = t['a']\nanswer = float(t['x'][a < {th}].sum())"

    def pandas_c(f, th):
        if th is None:
            return f"answer = int(pandas.read_csv({f['csv']!r}, usecols=['a'])['a'].sum())"
        return f"d = pandas.read_csv({f['csv']!r}, usecols=['a', 'x'])\nanswer = float(d['x'][d['a'] < {th}].sum())"

    def pandas_arrow(f, th):
        if th is None:
            return f"answer = int(pandas.read_csv({f['csv']!r}, usecols=['a'], engine='pyarrow')['a'].sum())"
        return (f"d = pandas.read_csv({f['csv']!r}, usecols=['a', 'x'], engine='pyarrow')\n"
                f"answer = float(d['x'][d['a'] < {th}].sum())")

    def arrow_query(th):
        if th is None:
            return "answer = pc.sum(t['a']).as_py()"
        return f"answer = float(pc.sum(pc.filter(t['x'], pc.less(t['a'], {th}))).as_py() or 0.0)"

    def parquet(f, th):
        cols = "['a']" if th is None else "['a', 'x']"
        return f"t = pq.read_table({f['parquet']!r}, columns={cols})\n" + arrow_query(th)

    def ipc_mmap(f, th):
        return f"t = pa.ipc.open_file(pa.memory_map({f['ipc']!r})).read_all()\n" + arrow_query(th)

    def polars(scan, key):
        def code(f, th):
            if th is None:
                return f"answer = int(pl.{scan}({f[key]!r}).select(pl.col('a').sum()).collect().item())"
            return f"answer = float(pl.{scan}({f[key]!r}).filter(pl.col('a') < {th}).select(pl.col('x').sum()).collect().item())"
        return code

    def duck_sql(source, th):
        if th is None:
            return f"select sum(a) from {source}"
        return f"select coalesce(sum(x), 0) from {source} where a < {th}"

    def duck_parquet(f, th):
        q = duck_sql(f"read_parquet('{f['parquet']}')", th)
        cast = "int" if th is None else "float"
        return f"answer = {cast}(duckdb.execute({q!r}).fetchone()[0])"

    def duck_ipc(f, th):
        # DuckDB scans a pyarrow Table in place (replacement scan): here the table of the
        # memory-mapped IPC file, so DuckDB reads the mapping (no copy).
        q = duck_sql("t", th)
        cast = "int" if th is None else "float"
        return (f"t = pa.ipc.open_file(pa.memory_map({f['ipc']!r})).read_all()\n"
                f"answer = {cast}(duckdb.execute({q!r}).fetchone()[0])")

    return [
        ("leafwire (mmap)", "import leafwire, numpy", leafwire),
        ("pandas (CSV)", "import pandas", pandas_c),
        ("pandas (CSV, engine=pyarrow)", "import pandas, pyarrow", pandas_arrow),
        ("pyarrow (Parquet)", "import pyarrow as pa, pyarrow.parquet as pq, pyarrow.compute as pc", parquet),
        ("pyarrow (Arrow IPC, mmap)", "import pyarrow as pa, pyarrow.compute as pc", ipc_mmap),
        ("polars (Parquet, lazy)", "import polars as pl", polars("scan_parquet", "parquet")),
        ("polars (Arrow IPC, mmap, lazy)", "import polars as pl", polars("scan_ipc", "ipc")),
        ("duckdb (Parquet)", "import duckdb", duck_parquet),
        ("duckdb (Arrow IPC, mmap)", "import duckdb, pyarrow as pa", duck_ipc),
    ]


QUERIES = [("sum(a)", None)] + [(f"sum(x) where a < t, selectivity {label}", int(A_RANGE * s)) for label, s in SELECTIVITIES]


def query_rows(files, tiny, reps, truth, queries=QUERIES, engine_list=None):
    rows = []
    files, tiny = ({k: str(v) for k, v in f.items()} for f in (files, tiny))
    for query, th in queries:
        expected = truth(th)
        for name, imports, code in engine_list or engines():
            setup = imports + "\n" + code(tiny, th) + "\n"
            results = [child(code(files, th), setup) for _ in range(reps)]
            for r in results:
                answer = r[1]
                ok = answer == expected if isinstance(expected, int) else abs(answer - expected) <= 1e-9 * max(1.0, abs(expected))
                if not ok:
                    raise SystemExit(f"{name} answered {answer} to {query}, numpy says {expected}")
            rows.append({
                "query": query, "engine": name,
                "s": statistics.median(r[0] for r in results),
                "peak_rss_mib": statistics.median(r[2] for r in results) / 1024,
                "query_rss_mib": statistics.median(r[2] - r[3] for r in results) / 1024,
            })
    return rows


def numpy_truth(a, x):
    """The answers from the generated values (`x` as the CSV spells it, so parsed exactly)."""
    return lambda th: int(a.sum()) if th is None else float(x[a < th].sum())


# -- main --------------------------------------------------------------------------------

def run(quick):
    if not CLI.exists():
        raise SystemExit(f"{CLI} is missing: cargo build --release -p leafwire-cli (or set LEAFWIRE_CLI)")
    sizes = [("1 MB", 1 << 20), ("10 MB", 10 << 20)] + ([] if quick else [("100 MB", 100 << 20), ("1 GB", 1 << 30)])
    result = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
              "quick": quick, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "commit": subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
              "generated": [], "refit": None}
    work = Path(tempfile.mkdtemp(prefix="lw-tables-", dir=os.environ.get("BENCH_WORK")))
    try:
        if REFIT.exists():
            print("tables: REFIT", file=sys.stderr)
            result["refit"] = {"csv_bytes": sum(p.stat().st_size for p in (REFIT.parent / "data").glob("*.csv")),
                               "files": len(list((REFIT.parent / "data").glob("*.csv"))),
                               "conversion": convert_refit(work, 3 if quick else 5)}
        tiny_dir = work / "tiny"
        tiny_dir.mkdir()
        generate_csv(tiny_dir / "t.csv", 50_000, seed=1)
        _, tiny = convert_generated(tiny_dir / "t.csv", tiny_dir, 1)
        for label, size in sizes:
            print(f"tables: generated {label}", file=sys.stderr)
            d = work / label.replace(" ", "")
            d.mkdir()
            csv = d / "t.csv"
            t0 = time.perf_counter()
            rows, a, x = generate_csv(csv, size)
            print(f"tables:   generated {rows:,} rows in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            reps = 3  # medians of three, the 1 GB table included (one run there moved by 1.5x)
            t0 = time.perf_counter()
            conversion, files = convert_generated(csv, d, reps)
            print(f"tables:   conversions in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            t0 = time.perf_counter()
            queries = query_rows(files, tiny, 3, numpy_truth(a, x))
            print(f"tables:   queries in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            result["generated"].append({"label": label, "rows": rows, "csv_bytes": csv.stat().st_size, "conversion": conversion,
                                        "queries": queries})
            shutil.rmtree(d)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return result


def report(result):
    out = []
    if result.get("refit"):
        r = result["refit"]
        out.append(f"REFIT Data Package ({r['csv_bytes'] / 1e6:.1f} MB of CSV):\n")
        out.append("| conversion | time (s) | output (MB) |\n|---|---:|---:|")
        out += [f"| {c['peer']} | {c['s']:.3f} | {'' if c['bytes'] is None else format(c['bytes'] / 1e6, '.2f')} |" for c in r["conversion"]]
        out.append("")
    for g in result["generated"]:
        out.append(f"Generated table, {g['label']} of CSV ({g['rows']:,} rows):\n")
        out.append("| conversion | time (s) | output (MB) |\n|---|---:|---:|")
        out += [f"| {c['peer']} | {c['s']:.3f} | {'' if c['bytes'] is None else format(c['bytes'] / 1e6, '.2f')} |" for c in g["conversion"]]
        out.append("\n| query | engine | time (ms) | peak RSS (MiB) | RSS the query added (MiB) |\n|---|---|---:|---:|---:|")
        for q in g["queries"]:
            if "error" in q:
                out.append(f"| {q['query']} | {q['engine']} | failed: {q['error']} | | |")
            else:
                out.append(f"| {q['query']} | {q['engine']} | {q['s'] * 1e3:.2f} | {q['peak_rss_mib']:.1f} | {q['query_rss_mib']:.1f} |")
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--report", metavar="FILE")
    args = ap.parse_args()
    if args.report:
        print(report(json.loads(Path(args.report).read_text())))
        return
    result = run(args.quick)
    dest = REPO / "bench" / "results" / ("quick" if args.quick else "") / "tables.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(result, indent=1) + "\n")
    print(report(result))
    print(f"tables: wrote {dest}", file=sys.stderr)


if __name__ == "__main__":
    main()
