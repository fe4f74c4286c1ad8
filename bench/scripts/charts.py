"""PNG graphs for report.py, one small function per workload. Every graph is
drawn from the rows of one run; missing matplotlib means no graphs, not an error."""

from __future__ import annotations

import re
from pathlib import Path

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:  # the report still has every number in its tables
    plt = None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def value(row: dict | None) -> float | None:
    if not row or row.get("status") != "ok":
        return None
    if row.get("time"):
        return row["time"]["median_ns"]
    return row.get("bytes")


def bars(ax, groups: list[str], series: dict[str, list[float | None]], horizontal: bool = False) -> None:
    """Grouped bars; a missing value leaves a gap."""
    n = max(len(series), 1)
    width = 0.8 / n
    for i, (name, values) in enumerate(series.items()):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        pts = [(x, v) for x, v in zip(xs, values) if v]
        if not pts:
            continue
        x, v = zip(*pts)
        (ax.barh if horizontal else ax.bar)(x, v, width, label=name)
    if horizontal:
        ax.set_yticks(range(len(groups)), groups)
        ax.invert_yaxis()
    else:
        ax.set_xticks(range(len(groups)), groups, rotation=30, ha="right")


def save(fig, out_dir: Path, name: str, made: list[str]) -> None:
    fig.tight_layout()
    fig.savefig(out_dir / name, dpi=110)
    plt.close(fig)
    made.append(name)


def relative(w, dataset: str, op: str, peer: str) -> float | None:
    v = value(w.by_key.get((dataset, op, peer)))
    base = value(w.by_key.get((dataset, op, w.data["baseline"])))
    return v / base if v and base else None


def corpus(w, out_dir: Path, made: list[str]) -> None:
    files = w.datasets()
    for op in ["size", "encode", "decode", "from_json", "lookup"]:
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(files) * max(len(w.peers), 4) / 4 + 1.5))
        bars(ax, files, {p: [relative(w, f, op, p) for f in files] for p in w.peers}, horizontal=True)
        ax.set_xscale("log")
        ax.axvline(1, color="grey", lw=0.8)
        ax.set_xlabel(f"{op}: ÷ {w.data['baseline']} (log; lower is better)")
        ax.set_title(f"corpus: {op}")
        ax.legend(fontsize=7, loc="lower right")
        save(fig, out_dir, f"corpus_{op}.png", made)


def kv(w, out_dir: Path, made: list[str]) -> None:
    for ds in w.datasets():
        ops = [o for o in w.ops(ds) if o != "size"]
        fig, ax = plt.subplots(figsize=(12, 5))
        bars(ax, ops, {p: [value(w.by_key.get((ds, o, p))) for o in ops] for p in w.peers})
        ax.set_yscale("log")
        ax.set_ylabel("median time, ns (log)")
        ax.set_title(f"kv {ds}")
        ax.legend(fontsize=6, ncol=2)
        save(fig, out_dir, f"kv_{slug(ds)}.png", made)


def by_peer(w, out_dir: Path, made: list[str], name: str) -> None:
    for ds in w.datasets():
        ops = w.ops(ds)
        fig, axes = plt.subplots(1, len(ops), figsize=(3.2 * len(ops), 4))
        for ax, op in zip(axes, ops):
            vals = [value(w.by_key.get((ds, op, p))) for p in w.peers]
            ax.bar(range(len(w.peers)), [v or 0 for v in vals], color=[f"C{i}" for i in range(len(w.peers))])
            ax.set_xticks(range(len(w.peers)), w.peers, rotation=45, ha="right", fontsize=7)
            ax.set_yscale("log")
            ax.set_title(f"{op} ({'bytes' if op == 'size' else 'ns'})", fontsize=9)
        fig.suptitle(f"{w.name}: {ds}")
        save(fig, out_dir, f"{name}_{slug(ds)}.png" if len(w.datasets()) > 1 else f"{name}.png", made)


def columns(w, out_dir: Path, made: list[str]) -> None:
    scales = w.datasets()
    ops = [o for o in w.ops() if o != "size"]
    for what, key in (("time", "ns"), ("peak RSS", "bytes")):
        fig, axes = plt.subplots(1, len(ops), figsize=(3.3 * len(ops), 3.8), sharey=True)
        for ax, op in zip(axes, ops):
            for i, p in enumerate(w.peers):
                pts = []
                for si, s in enumerate(scales):
                    r = w.by_key.get((s, op, p))
                    if r and r.get("status") == "ok":
                        pts.append((si, r["time"]["median_ns"] if what == "time" else r.get("peak_rss_bytes")))
                if pts:
                    xs, ys = zip(*pts)
                    ax.plot(xs, ys, marker="o", label=p, color=f"C{i}")
            ax.set_xticks(range(len(scales)), scales)
            ax.set_yscale("log")
            ax.set_title(op, fontsize=9)
        axes[0].set_ylabel(f"{what} ({key}, log)")
        axes[-1].legend(fontsize=7)
        fig.suptitle(f"columns: {what} per task and table size (fresh process per run)")
        save(fig, out_dir, f"columns_{slug(what)}.png", made)


def stream(w, out_dir: Path, made: list[str]) -> None:
    runs = {(r["dataset"], r["op"], r["peer"]): r for r in w.data["extra"].get("runs", [])}
    doubles = [ds for ds in w.datasets() if ds.startswith("n=")]
    ops = [o["op"] for o in w.data["extra"]["ops"]]
    peers = [p for p in w.peers if any(runs.get((ds, op, p)) for ds in doubles for op in ops)]

    def mbps(ds: str, op: str, p: str) -> float | None:
        r, t = runs.get((ds, op, p)), value(w.by_key.get((ds, op, p)))
        return r["payload_bytes"] / r["messages"] / t * 1e3 if r and t else None

    for what, name in (("MB/s of doubles", "stream_mbps.png"), ("messages/s", "stream_messages.png")):
        fig, axes = plt.subplots(1, len(ops), figsize=(4 * len(ops), 4.2), sharey=True)
        for ax, op in zip(axes, ops):
            for i, p in enumerate(peers):
                pts = []
                for ds in doubles:
                    v = mbps(ds, op, p) if what.startswith("MB") else (1e9 / value(w.by_key.get((ds, op, p)))
                                                                        if value(w.by_key.get((ds, op, p))) else None)
                    if v:
                        pts.append((int(ds[2:]), v))
                if pts:
                    xs, ys = zip(*pts)
                    style = "-" if p in w.data.get("leafwire", []) or p == w.data["baseline"] else "--"
                    ax.plot(xs, ys, style, marker="o", ms=3, label=p, color=f"C{i}")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("n (doubles per message)")
            ax.set_title(op, fontsize=9)
        axes[0].set_ylabel(f"{what} (log)")
        axes[-1].legend(fontsize=6)
        fig.suptitle(f"stream: {what} against message size")
        save(fig, out_dir, name, made)

    records = [ds for ds in w.datasets() if not ds.startswith("n=")]
    rpeers = [p for p in w.peers if any(runs.get((ds, op, p)) for ds in records for op in ops)]
    rops = [op for op in ops if any(runs.get((ds, op, p)) for ds in records for p in rpeers)]
    if records and rops:
        fig, axes = plt.subplots(1, len(rops), figsize=(4 * len(rops), 4), sharey=True)
        for ax, op in zip(axes, rops):
            bars(ax, [ds.replace("records: ", "") for ds in records], {p: [mbps(ds, op, p) for ds in records] for p in rpeers})
            ax.set_title(op, fontsize=9)
        axes[0].set_ylabel("MB/s of JSON lines")
        axes[-1].legend(fontsize=7)
        fig.suptitle("stream: JSON records")
        save(fig, out_dir, "stream_records.png", made)


def draw(w, out_dir: Path) -> list[str]:
    if plt is None:
        return []
    made: list[str] = []
    if w.name == "corpus":
        corpus(w, out_dir, made)
    elif w.name == "kv":
        kv(w, out_dir, made)
    elif w.name in ("graphql", "geojson", "workbook"):
        by_peer(w, out_dir, made, w.name)
    elif w.name == "columns":
        columns(w, out_dir, made)
    elif w.name == "stream":
        stream(w, out_dir, made)
    return made
