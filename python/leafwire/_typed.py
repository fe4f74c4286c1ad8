"""Typed decoding: ``loads(data, type=T)`` turns the plain values a document holds back into
the Python types ``dumps`` wrote by the conventions of spec §12 (dataclasses, datetimes,
UUIDs, enums, numpy ``datetime64``...), guided by a type annotation, as msgspec does.

The document is decoded as usual first; this module then walks the value and the type
together. A value that does not fit the type raises ``DecodeError`` (category
``"wrong_type"``) whose ``path`` is the JSON Pointer of the value, so the caller can tell
which field of which record was wrong.
"""

import dataclasses
import datetime
import enum
import sys
import typing
import uuid

from ._leafwire import DecodeError

_UNION_TYPES = (typing.Union,) + ((__import__("types").UnionType,) if sys.version_info >= (3, 10) else ())
_NONE = type(None)


def _fail(message, path):
    error = DecodeError(f"{message} (at {path or 'the root'})")
    error.path = path
    error.category = "wrong_type"
    return error


def _name(tp):
    return getattr(tp, "__qualname__", None) or repr(tp)


def _expect(value, types, tp, path):
    types = types if isinstance(types, tuple) else (types,)
    # bool is an int subclass, but True is no answer to "an int or float here".
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        raise _fail(f"expected {_name(tp)}, found {type(value).__name__}", path)
    return value


def _from_iso(parse, text, tp, path):
    if not isinstance(text, str):
        raise _fail(f"expected {_name(tp)} as ISO 8601 text, found {type(text).__name__}", path)
    # Python before 3.11 does not read "Z" for UTC, which other writers use (RFC 3339).
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        return parse(text)
    except ValueError as e:
        raise _fail(f"expected {_name(tp)}: {e}", path) from None


def _numpy_time(value, tp, path):
    import numpy

    if isinstance(value, dict) and set(value) == {"$dtype", "$data"}:
        kind = value["$dtype"]
        if not isinstance(kind, str) or not kind.startswith(("datetime64", "timedelta64")):
            raise _fail(f"unknown $dtype {kind!r}", path)
        counts = numpy.asarray(value["$data"], dtype="int64")
        result = counts.view(numpy.dtype(kind))
        return result[()] if result.ndim == 0 else result
    if tp is numpy.ndarray:
        if isinstance(value, numpy.ndarray):
            return value
        if isinstance(value, list):
            return numpy.array(value)
    raise _fail(f"expected {_name(tp)}, found {type(value).__name__}", path)


def convert(value, tp, path=""):
    """``value`` (as ``loads`` returns it) as the type ``tp``."""
    if tp is typing.Any or tp is object:
        return value
    if tp is None or tp is _NONE:
        if value is not None:
            raise _fail(f"expected None, found {type(value).__name__}", path)
        return None
    origin = typing.get_origin(tp)
    if origin is not None:
        return _generic(value, tp, origin, typing.get_args(tp), path)
    if isinstance(tp, typing.TypeVar) or isinstance(tp, typing.ForwardRef):
        return value
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass(value, tp, path)
    if isinstance(tp, type):
        return _simple(value, tp, path)
    raise TypeError(f"loads(type=...): unsupported type annotation {tp!r}")


def _simple(value, tp, path):
    # datetime before date: it is its subclass.
    if tp is datetime.datetime:
        return _from_iso(datetime.datetime.fromisoformat, value, tp, path)
    if tp is datetime.date:
        return _from_iso(datetime.date.fromisoformat, value, tp, path)
    if tp is datetime.time:
        return _from_iso(datetime.time.fromisoformat, value, tp, path)
    if issubclass(tp, uuid.UUID):
        if isinstance(value, str):
            try:
                return tp(value)
            except ValueError as e:
                raise _fail(f"expected a UUID: {e}", path) from None
        if isinstance(value, bytes) and len(value) == 16:
            return tp(bytes=value)
        raise _fail(f"expected a UUID as text, found {type(value).__name__}", path)
    if issubclass(tp, enum.Enum):
        for candidate in (value, tuple(value) if isinstance(value, list) else value):
            try:
                return tp(candidate)
            except (ValueError, TypeError):
                pass
        raise _fail(f"{value!r} is not a value of {_name(tp)}", path)
    if tp is float:
        return float(_expect(value, (int, float), tp, path))
    if tp is bytes:
        return bytes(_expect(value, (bytes, bytearray), tp, path))
    if tp in (list, tuple, set, frozenset):
        return _generic(value, tp, tp, (), path)
    if tp is dict:
        return _expect(value, dict, tp, path)
    if "numpy" in sys.modules:
        import numpy

        if tp is numpy.ndarray or issubclass(tp, (numpy.datetime64, numpy.timedelta64)):
            return _numpy_time(value, tp, path)
    return _expect(value, tp, tp, path)


def _generic(value, tp, origin, args, path):
    if origin in _UNION_TYPES:
        if value is None and _NONE in args:
            return None
        errors = []
        for arg in args:
            if arg is _NONE:
                continue
            try:
                return convert(value, arg, path)
            except DecodeError as e:
                errors.append(str(e))
        raise _fail(f"{value!r:.60} matches none of {tp}: " + "; ".join(errors), path)
    if origin is typing.Literal:
        if value in args:
            return value
        raise _fail(f"{value!r:.60} is not one of {args}", path)
    if hasattr(value, "tolist") and not isinstance(value, (int, float)) and origin in (list, tuple, set, frozenset):
        value = value.tolist()  # a typed array read as a numpy array, asked for as a list
    if origin in (list, set, frozenset) or origin is typing.Sequence or getattr(origin, "__name__", "") in ("Sequence", "Iterable", "Collection"):
        items = _expect(value, list, tp, path)
        (item,) = args or (typing.Any,)
        result = [convert(v, item, f"{path}/{i}") for i, v in enumerate(items)]
        return origin(result) if origin in (set, frozenset) else result
    if origin is tuple:
        items = _expect(value, list, tp, path)
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            item = args[0] if args else typing.Any
            return tuple(convert(v, item, f"{path}/{i}") for i, v in enumerate(items))
        if len(items) != len(args):
            raise _fail(f"expected {len(args)} items for {tp}, found {len(items)}", path)
        return tuple(convert(v, a, f"{path}/{i}") for i, (v, a) in enumerate(zip(items, args)))
    if origin is dict or getattr(origin, "__name__", "") in ("Mapping", "MutableMapping"):
        items = _expect(value, dict, tp, path)
        key_type, value_type = args or (typing.Any, typing.Any)
        return {
            convert(k, key_type, f"{path}/{_escape(k)}"): convert(v, value_type, f"{path}/{_escape(k)}")
            for k, v in items.items()
        }
    if origin is typing.Annotated:
        return convert(value, args[0], path)
    raise TypeError(f"loads(type=...): unsupported type annotation {tp!r}")


def _escape(key):
    return str(key).replace("~", "~0").replace("/", "~1")


_HINTS = {}


def _dataclass(value, tp, path):
    if not isinstance(value, dict):
        raise _fail(f"expected {_name(tp)} (an object), found {type(value).__name__}", path)
    hints = _HINTS.get(tp)
    if hints is None:
        resolved = typing.get_type_hints(tp)
        hints = _HINTS[tp] = [(f.name, resolved.get(f.name, typing.Any), _required(f)) for f in dataclasses.fields(tp) if f.init]
    kwargs = {}
    for name, hint, required in hints:
        if name in value:
            kwargs[name] = convert(value[name], hint, f"{path}/{_escape(name)}")
        elif required:
            raise _fail(f"{_name(tp)} needs the field {name!r}, absent", path)
    return tp(**kwargs)


def _required(field):
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
