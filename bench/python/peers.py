"""The registry of libraries the Python benchmark compares, each in its fastest sensible mode.

A peer is a name, its package version, and callables for the workloads it takes part in:
``dumps(obj)`` and ``loads(data)`` for whole-document round trips, ``lazy(source, tokens,
pointer)`` for fetching one deep value. A peer whose package is missing is skipped (and
listed as such in the results). Install them all with:

    pip install orjson msgspec ujson msgpack cbor2 pysimdjson pyarrow
"""

import importlib
import json
import pickle
from dataclasses import dataclass, field
from typing import Any, Callable, Optional


@dataclass
class Peer:
    name: str
    version: str
    dumps: Optional[Callable[[Any], Any]] = None
    loads: Optional[Callable[[Any], Any]] = None
    note: str = ""
    extra: dict = field(default_factory=dict)


def _version(module) -> str:
    return str(getattr(module, "__version__", getattr(module, "VERSION", "?")))


def _leafwire():
    import leafwire

    # Lists stay generic arrays in `dumps`, so `loads` has no typed arrays to turn into numpy
    # here; the JSON-converted variant below is the typed-array case.
    return Peer("leafwire", _version_of_dist("leafwire"), leafwire.dumps, leafwire.loads,
                "dumps(obj) / loads(bytes); Python lists stay generic arrays")


def _json():
    return Peer("json", "stdlib", lambda o: json.dumps(o, separators=(",", ":")), json.loads,
                "compact separators; str in, str out")


def _orjson():
    import orjson

    return Peer("orjson", _version(orjson), orjson.dumps, orjson.loads)


def _msgspec_msgpack():
    import msgspec

    # One Encoder and one Decoder made up front and reused: msgspec's fastest public API
    # (the module-level msgspec.msgpack.encode/decode look up a cached default per call).
    encoder, decoder = msgspec.msgpack.Encoder(), msgspec.msgpack.Decoder()
    return Peer("msgspec.msgpack", _version(msgspec), encoder.encode, decoder.decode,
                "msgspec.msgpack.Encoder().encode / Decoder().decode, objects reused")


def _msgspec_json():
    import msgspec

    encoder, decoder = msgspec.json.Encoder(), msgspec.json.Decoder()
    return Peer("msgspec.json", _version(msgspec), encoder.encode, decoder.decode,
                "msgspec.json.Encoder().encode / Decoder().decode, objects reused; bytes out")


def _ujson():
    import ujson

    return Peer("ujson", _version(ujson), ujson.dumps, ujson.loads, "str in, str out")


def _msgpack():
    import msgpack

    return Peer("msgpack", _version_of_dist("msgpack"), msgpack.packb, msgpack.unpackb)


def _cbor2():
    import cbor2

    return Peer("cbor2", _version_of_dist("cbor2"), cbor2.dumps, cbor2.loads)


def _simdjson():
    import simdjson

    parser = simdjson.Parser()
    # recursive=True builds plain Python objects (the full-decode mode); the lazy proxy
    # mode is used by the lazy-access workload.
    return Peer("pysimdjson", _version_of_dist("pysimdjson"), None, lambda b: parser.parse(b, True),
                "loads only (no encoder); Parser.parse(data, recursive=True)", {"parser": parser})


def _pickle():
    return Peer("pickle", f"protocol {pickle.HIGHEST_PROTOCOL}",
                lambda o: pickle.dumps(o, protocol=pickle.HIGHEST_PROTOCOL), pickle.loads)


def _version_of_dist(name: str) -> str:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001 - a version string is informative only
        return "?"


FACTORIES = {
    "leafwire": _leafwire,
    "orjson": _orjson,
    "msgspec.msgpack": _msgspec_msgpack,
    "msgspec.json": _msgspec_json,
    "json": _json,
    "ujson": _ujson,
    "msgpack": _msgpack,
    "cbor2": _cbor2,
    "pysimdjson": _simdjson,
    "pickle": _pickle,
}


def load_peers(names=None):
    """(available peers by name, {missing name: reason})."""
    peers, missing = {}, {}
    for name, factory in FACTORIES.items():
        if names and name not in names:
            continue
        try:
            peers[name] = factory()
        except ImportError as e:
            missing[name] = str(e)
    return peers, missing


def have(module: str) -> bool:
    try:
        importlib.import_module(module)
        return True
    except ImportError:
        return False
