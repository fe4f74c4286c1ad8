"""The JSON corpora the tests run on: the sample kept in the repository
(tests/data/sample), always, and the full shared data (../shared/data beside the
repository, or the directory LEAFWIRE_SHARED_DATA names) when it is there.

The sample has the layout and file names of the shared data and is the list of files:
every JSON file in it must be in the shared data too. Nothing is skipped quietly: a
missing sample, a missing shared file, or a LEAFWIRE_SHARED_DATA that names no directory
fails at collection with a message saying what is missing. `conftest.py` reports in the
test header which corpora ran. (The Rust tests read the same corpora:
crates/leafwire/tests/common/corpus.rs.)
"""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "tests" / "data" / "sample"


def _shared_dir():
    named = os.environ.get("LEAFWIRE_SHARED_DATA")
    if named:
        if not Path(named).is_dir():
            raise FileNotFoundError(f"LEAFWIRE_SHARED_DATA={named} is not a directory")
        return Path(named)
    default = REPO.parent / "shared" / "data"
    return default if default.is_dir() else None


def _json_names():
    names = sorted(p.relative_to(SAMPLE).as_posix() for p in SAMPLE.glob("*/*.json"))
    if not names:
        raise FileNotFoundError(
            f"the in-repository sample corpus {SAMPLE} is missing or has no JSON files: "
            "it is part of the repository (see its README.md)"
        )
    return names


SHARED = _shared_dir()
JSON_NAMES = _json_names()


def _json_files():
    files = [SAMPLE / name for name in JSON_NAMES]
    if SHARED is not None:
        for name in JSON_NAMES:
            if not (SHARED / name).is_file():
                raise FileNotFoundError(f"the shared data {SHARED} lacks {name}, which the sample has")
        files += [SHARED / name for name in JSON_NAMES]
    return files


#: Every JSON file of every corpus that runs: the sample's, then the shared data's.
JSON_FILES = _json_files()


def file_id(path):
    """A test id such as "sample/json/twitter.json"."""
    corpus = "sample" if path.is_relative_to(SAMPLE) else "shared"
    return f"{corpus}/{path.parent.name}/{path.name}"


def describe():
    """One line saying which corpora run."""
    sample = f"the in-repository sample ({len(JSON_NAMES)} JSON files, tests/data/sample)"
    if SHARED is None:
        return f"corpus: {sample} only; ../shared/data is absent, the full corpus does not run"
    return f"corpus: {sample} and the full shared data in {SHARED}"
