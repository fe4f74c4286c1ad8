"""Regenerates this sample corpus from the full shared data: python3 cut.py [SHARED_DATA]

SHARED_DATA defaults to ../shared/data beside the repository. Each file keeps the path and
name it has there, so anything that takes a data directory (the corpus tests, the benchmark's
--data) takes this one too. Cut files keep the first items of their large lists and maps
(README.md says which) and are written as compact UTF-8 JSON; the output is deterministic.
"""

import gzip
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]


def first(items, n):
    """The first n items of a list, or the first n entries of a dict."""
    if isinstance(items, dict):
        return dict(list(items.items())[:n])
    return items[:n]


def twitter(v):
    v["statuses"] = first(v["statuses"], 10)
    return v


def canada(v):
    geometry = v["features"][0]["geometry"]
    geometry["coordinates"] = first(geometry["coordinates"], 30)  # whole rings, 1,174 points
    return v


def citm_catalog(v):
    return {k: first(x, 12) if isinstance(x, (dict, list)) else x for k, x in v.items()}


def mesh(v):
    # Lists of vertex attributes; 600 keeps whole triples and pairs.
    return {k: first(x, 600) if isinstance(x, list) and len(x) > 1 else x for k, x in v.items()}


def random_(v):
    v["result"] = first(v["result"], 40)
    return v


def update_center(v):
    v["plugins"] = first(v["plugins"], 20)
    return v


def graphql(v):
    v["data"]["orders"] = first(v["data"]["orders"], 40)
    return v


def countries(v):
    # The 30 features with the smallest geometry, in file order.
    sizes = sorted(range(len(v["features"])), key=lambda i: len(json.dumps(v["features"][i])))
    keep = sorted(sizes[:30])
    v["features"] = [v["features"][i] for i in keep]
    return v


CUTS = {
    "json/twitter.json": twitter,
    "json/canada.json": canada,
    "json/citm_catalog.json": citm_catalog,
    "json/mesh.json": mesh,
    "json/numbers.json": lambda v: first(v, 2000),
    "json/random.json": random_,
    "json/update-center.json": update_center,
    "graphql/decentraland_marketplace_orders.json": graphql,
}
COPIES = ["json/github_events.json"]
GZIPPED = {"geojson/countries.geojson.gz": countries}


def compact(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def main():
    shared = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "data"
    if not shared.is_dir():
        sys.exit(f"{shared} is not a directory: pass the shared data directory")
    for rel, cut in CUTS.items():
        value = json.loads((shared / rel).read_text(encoding="utf-8"))
        (HERE / rel).parent.mkdir(parents=True, exist_ok=True)
        (HERE / rel).write_bytes(compact(cut(value)))
    for rel in COPIES:
        shutil.copyfile(shared / rel, HERE / rel)
    for rel, cut in GZIPPED.items():
        value = json.loads(gzip.decompress((shared / rel).read_bytes()))
        (HERE / rel).parent.mkdir(parents=True, exist_ok=True)
        (HERE / rel).write_bytes(gzip.compress(compact(cut(value)), compresslevel=9, mtime=0))
    for path in sorted(p for p in HERE.rglob("*") if p.is_file()):
        print(f"{path.stat().st_size:>8}  {path.relative_to(HERE)}")


if __name__ == "__main__":
    main()
