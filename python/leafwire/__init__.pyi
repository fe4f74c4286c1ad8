import os
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar, Union, final, overload

_T = TypeVar("_T")

from ._leafwire import (
    DEFAULT_MAX_DEPTH as DEFAULT_MAX_DEPTH,
    MAX_DEPTH_CAP as MAX_DEPTH_CAP,
    ArrayNode as ArrayNode,
    _ArraysMode,
    _Buffer,
    DecodeError as DecodeError,
    Document as Document,
    Editor as Editor,
    EncodeError as EncodeError,
    Frame as Frame,
    NotFoundError as NotFoundError,
    ObjectNode as ObjectNode,
    StreamWriter as StreamWriter,
    Table as Table,
    _Source,
    from_json as from_json,
    iter_stream as iter_stream,
    to_json as to_json,
    validate as validate,
)

__all__ = [
    "ArrayNode", "DecodeError", "Document", "EncodeError", "Editor", "Frame", "NotFoundError", "ObjectNode",
    "StreamWriter", "Table", "dump", "dumps", "edit", "from_json", "iter_stream", "load", "loads", "open",
    "to_json", "validate",
]

def dumps(obj: Any, *, default: Callable[[Any], Any] | None = ..., max_depth: int = ..., packed: bool = ..., zstd: int | None = ..., lossy_float_step: int | None = ..., columns_only: bool = ...) -> bytes: ...
@overload
def loads(data: _Buffer, *, type: None = ..., arrays: _ArraysMode = ..., max_depth: int = ...) -> Any: ...
@overload
def loads(data: _Buffer, *, type: type[_T], arrays: _ArraysMode = ..., max_depth: int = ...) -> _T: ...
@overload
def loads(data: _Buffer, *, type: Any, arrays: _ArraysMode = ..., max_depth: int = ...) -> Any: ...
def dump(obj: Any, fp: IO[bytes], *, checksums: bool = ..., default: Callable[[Any], Any] | None = ..., max_depth: int = ...) -> None: ...
def load(fp: IO[bytes], *, type: Any = ..., arrays: _ArraysMode = ..., max_depth: int = ...) -> Any: ...
def open(source: _Source) -> Document: ...

def edit(source: Union[str, os.PathLike[str], bytearray], *, compact_threshold: float | None = None, compact_min_garbage: int | None = None, trusted: bool = False) -> Editor: ...

