"""Leafwire: a binary format for leafy trees -- JSON-like metadata around big typed arrays.

Quick use::

    import leafwire, numpy as np
    data = leafwire.dumps({"name": "mesh", "xs": np.arange(3.0)})
    leafwire.loads(data)                  # {'name': 'mesh', 'xs': array([0., 1., 2.])}
    doc = leafwire.open("mesh.lw")        # lazy and memory-mapped
    doc["xs"].sum()                       # a numpy view of the file, nothing copied
    with leafwire.edit("mesh.lw") as ed:  # edit the bytes in place; atomic commit
        ed["name"] = "mesh-2"

Python mapping (both directions): ``None``, ``bool``, ``int`` (any size: beyond 64 bits a
bignum), ``float``, ``str``, ``bytes`` (also from ``bytearray``/``memoryview``), ``list``
(also from ``tuple``), ``dict`` with ``str`` keys (an object) or ``int`` keys (an intmap),
and numpy arrays of bool, int8..int64, uint8..uint64, float32, float64 (typed arrays, N-d
shape kept). numpy scalars encode as their value (float32 stays f32, read back as float).

Other everyday types are written by documented conventions (spec §12) that any reader of
the format reads, and come back with ``loads(data, type=T)``: ``datetime``/``date``/``time``
as RFC 3339 / ISO 8601 text (``isoformat()``: offset kept, none for naive values), ``UUID``
as its hyphenated text, an ``Enum`` member as its value, a dataclass as an object of its
fields, numpy string/bytes/object arrays as nested lists, float16 as float32, and numpy
``datetime64``/``timedelta64`` (arrays or scalars) as ``{"$dtype": "datetime64[ns]",
"$data": <int64 counts>}``. Anything else raises ``EncodeError`` naming the type and, in
``.path``, the JSON Pointer of the value (unless ``default=`` converts it).

numpy is optional (``pip install leafwire[numpy]``) and imported only when needed: without
it everything works except reading typed arrays as numpy arrays, which raises
``ModuleNotFoundError``; ``loads(data, arrays="list")`` and ``.to_python(arrays="list")``
read them as lists.

The compiled extension (``leafwire._leafwire``) does the work; ``leafwire.reference`` is
an independent pure-Python reader and is importable without it.
"""

from collections.abc import ItemsView, KeysView, Mapping, Sequence, ValuesView

try:
    from . import _leafwire
except ImportError as _error:  # pragma: no cover - exercised only without a build
    # Keep the package importable so that ``leafwire.reference`` (pure Python) works; the
    # compiled API fails on first use with the original error.
    _IMPORT_ERROR = _error

    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise ImportError(
            f"leafwire.{name} needs the compiled extension leafwire._leafwire, which failed to "
            f"import ({_IMPORT_ERROR}); build it with `pip install .` or `maturin develop`"
        ) from _IMPORT_ERROR

else:
    from ._leafwire import (
        DEFAULT_MAX_DEPTH,
        MAX_DEPTH_CAP,
        ArrayNode,
        DecodeError,
        Document,
        EncodeError,
        Editor,
        Frame,
        NotFoundError,
        ObjectNode,
        StreamWriter,
        Table,
        from_json,
        iter_stream,
        to_json,
        validate,
    )

    def dumps(obj, *, default=None, max_depth=DEFAULT_MAX_DEPTH, packed=False, zstd=None, lossy_float_step=None,
              columns_only=False):
        """Serialize ``obj`` to Leafwire bytes (a canonical document, spec §7).

        ``default`` is called with any object of another type and its result is encoded
        instead (as with ``json.dumps``/``orjson.dumps``); without it, or if it raises,
        ``EncodeError`` (a ``TypeError``) is raised. Python lists stay generic arrays; only
        numpy arrays become typed arrays (C order; non-contiguous arrays are copied).

        ``max_depth`` bounds the nesting of lists, tuples and dicts (and of ``default``
        calls): ``DEFAULT_MAX_DEPTH`` (128) unless raised, up to ``MAX_DEPTH_CAP`` (1024).
        Deeper input raises ``EncodeError`` (``category`` ``"depth_limit"``); a list, tuple
        or dict that contains itself raises ``EncodeError`` (``category`` ``"cycle"``).

        An empty numpy array whose shape describes more rows than the document has bytes
        (like ``np.zeros((10**6, 0))``) raises ``EncodeError``: spec §5.2 forbids it so
        that readers need not trust such shapes.

        ``packed=True`` writes packed mode (spec §13): every list or array of 64 numbers
        or more (records included), and every dict of 32 entries or more whose values
        hold 64 numbers or strings (keys that are data: records by id), is shredded into
        compressed columns, several times smaller and still readable by element;
        ``loads`` and ``open`` read it like any document (``open`` unpacks it in memory
        first). ``zstd`` (a level, 1-22) compresses each page, or each stripe of records
        whole, with zstd where it pays (from level 10 with pages of 65,536 values:
        smaller, slower to read one element); ``lossy_float_step`` (T) stores floats
        rounded to multiples of 2**T (lossy, by request only). Where zstd makes less of
        their JSON text than the columns do (configuration, schemas, documentation text),
        such values are kept whole as that compressed text, and so is a top-level dict
        with much outside them; ``columns_only=True`` keeps everything in columns.
        """
        return _leafwire.dumps(obj, default=default, max_depth=max_depth, packed=packed, zstd=zstd,
                               lossy_float_step=lossy_float_step, columns_only=columns_only)

    def loads(data, *, type=None, arrays="numpy", max_depth=DEFAULT_MAX_DEPTH):  # noqa: A002 - msgspec's name
        """Deserialize Leafwire bytes (any bytes-like object) to Python objects.

        Typed arrays come back as numpy arrays by default (``arrays="numpy"``): they are
        homogeneous blocks of fixed-size numbers, and a numpy array keeps them compact (one
        buffer instead of a list of boxed Python numbers) and exact (int8/uint64/float32...
        keep their type). The arrays are copies that own their memory. JSON-converted
        arrays that mix integers and floats are f64 with an "integer mask" (spec §5.2):
        they come back as float64 arrays. ``arrays="list"`` gives nested lists instead, as
        JSON would, with the masked elements as ``int``.

        A table (spec §15) comes back as a dict from column name to its cells: with
        ``arrays="numpy"``, a numeric column without missing cells is a one-dimensional numpy
        array of its element type (dates and date-times as their int32/int64 counts, the
        value §15.2 gives them), and any other column a list (``None`` for a missing cell,
        ``str`` for strings); with ``arrays="list"``, every column is a list. ``dumps`` of
        such a dict writes a plain object, not a table. For numpy views, datetime64 columns,
        masked arrays and Arrow, open the document: ``open(path).tables()``, or a pointer
        that lands on a table, gives a ``leafwire.Table``.

        Object keys are interned strings. As orjson does, ``loads`` keeps up to 1024 of
        them (ASCII keys of at most 64 bytes) from one call to the next, so documents of
        one kind do not make their keys again; they live until the interpreter exits.

        Raises ``DecodeError`` (a ``ValueError``, with ``.offset``) for malformed input and
        for nesting deeper than ``max_depth`` (at most ``MAX_DEPTH_CAP``, 1024: decoding
        recurses on the native stack). Everything decoded is read with bounds checks; use
        ``validate()`` to check a whole untrusted document against the spec.

        With ``type=T`` (a class or a type annotation: a dataclass, ``datetime``,
        ``date``, ``time``, ``uuid.UUID``, an ``Enum``, ``numpy.ndarray``,
        ``numpy.datetime64``, ``list[T]``, ``tuple[...]``, ``dict[K, V]``,
        ``Optional[T]``/``T | None``, ``Union``, ``Literal``, ``Any``, the JSON types), the
        value is rebuilt as that type from the forms ``dumps`` writes (spec §12): the round
        trip of these types is ``loads(dumps(x), type=type(x))``. Dataclass fields are
        read by their annotations (missing fields take their defaults; unknown keys are
        ignored); datetimes are parsed from RFC 3339 text (a trailing ``Z`` is UTC; a text
        without an offset gives a naive datetime); enums are looked up by value; numpy
        ``datetime64``/``timedelta64`` come back from their ``{"$dtype", "$data"}``
        object. A value that does not fit raises ``DecodeError`` with category
        ``"wrong_type"`` and ``path``, the JSON Pointer of the value::

            @dataclass
            class Event:
                id: uuid.UUID
                at: datetime.datetime
                level: Level              # an Enum
                tags: list[str]

            events = leafwire.loads(leafwire.dumps(events), type=list[Event])
        """
        value = _leafwire.loads(data, arrays=arrays, max_depth=max_depth)
        if type is None:
            return value
        from ._typed import convert

        return convert(value, type)

    def dump(obj, fp, *, checksums=True, **kw):
        """Serialize ``obj`` as Leafwire to the binary file object ``fp``.

        Files get page checksums (``checksums=True``, spec §2.3): a CRC-32 per 4 KiB page,
        4 bytes per page plus 40, so that ``validate`` finds any changed bit and reports
        its page; ``dumps`` returns the canonical bytes without them. Values with no fast
        form (numpy arrays, big integers, ``default=``...) are streamed into ``fp`` a
        megabyte at a time, so the whole document is never held as ``bytes``.
        """
        _leafwire.dump(obj, fp, checksums=checksums, **kw)

    def load(fp, **kw):
        """Deserialize the Leafwire document read from the binary file object ``fp`` (the
        options of ``loads``, ``type=`` included)."""
        return loads(fp.read(), **kw)

    def open(source):  # noqa: A001 - the module's entry point, as in `gzip.open`
        """Open a Leafwire document lazily; returns a ``Document``.

        ``source`` is a path (``str`` or ``os.PathLike``), which is memory-mapped, or a
        bytes-like object (``bytes``, ``bytearray``, ``memoryview``...), which is used in
        place and kept alive (never written; do not modify it while the document is open).
        Opening reads only the header. ``doc["a"]["b"][3]``, ``doc.pointer("/a/b/3")`` and
        iteration read only the blocks on the way: objects and intmaps are read-only
        ``Mapping`` nodes, arrays ``Sequence`` nodes, scalars plain Python values, and
        typed arrays read-only numpy arrays that view the file or buffer without copying
        (their ``.base`` keeps the document alive, so they stay valid after ``del doc``).
        A typed array that is not aligned in memory for its element type (possible only in
        a caller's buffer that does not start at a multiple of 8) is copied instead.

        A mapped file must not be truncated or rewritten by another process while open.
        Lazy access checks only what it reads; call ``doc.validate()`` on untrusted input.
        """
        return _leafwire.open(source)

    def edit(source, *, compact_threshold=None, compact_min_garbage=None, trusted=False):
        """Open a Leafwire document for editing on its bytes (spec §8); returns an ``Editor``.

        ``source`` is a path (``str`` or ``os.PathLike``) or a ``bytearray``:

        - a **file** is mapped, not read: opening costs the header (plus one validating
          pass over the file unless ``trusted=True``), and memory holds only the pages
          edits change. ``commit()`` makes the edits durable atomically at a cost
          proportional to them (a crash leaves the old or the new version, never a mix):
          new blocks are appended, and bytes changed in place go first into a journal
          (spec §8.4). Edits not committed are lost. No other program may change the file
          while it is open.
        - a **bytearray** is copied; ``commit()`` (or ``flush()``) writes the edited bytes
          back into that same object, resizing it (``BufferError`` if a ``memoryview`` or
          an open ``Document`` still uses it and the size changes; nothing is written
          then). ``bytes`` are refused with a ``TypeError`` (they are immutable; pass
          ``bytearray(data)``).

        The input is validated fully first (``DecodeError`` with ``.offset`` if invalid),
        unless ``trusted=True``: for files this library wrote, opening is then O(1), and a
        damaged file gives errors (never a crash) from the edits that reach the damage.
        As a context manager, the editor commits on a clean exit, not after an exception,
        and is closed either way::

            with leafwire.edit("data.lw") as ed:
                ed["name"] = "mesh-2"             # root keys (or indexes of a root array)
                ed.set("/stats/count", 3)         # JSON Pointers anywhere
                ed.append("new", at="/tags")
                del ed["obsolete"]

        ``[]``, ``in``, ``len()`` and iteration address the root, as on the dict or list
        it holds (``KeyError``/``IndexError`` for missing keys and indexes; negative
        indexes count from the end; keys may contain ``/`` and ``~``). The methods take
        JSON Pointers (RFC 6901: ``~1`` stands for ``/`` and ``~0`` for ``~`` in a key):
        ``set``, ``get``/``pointer``, ``delete``, ``insert``, ``append``, ``rename``,
        ``set_element``, ``set_cell``. Reads return plain Python values (typed arrays as
        numpy *copies*), so ``ed["a"]["b"] = 1`` changes only a copy: nested edits go
        through pointers, ``ed.set("/a/b", 1)``. Values are converted as by ``dumps``
        (numpy arrays become typed arrays). A failed edit raises and leaves the document
        unchanged.

        ``set_cell(pointer, column, row, value)`` replaces one cell of a numeric column of
        the table at ``pointer`` in place (spec §15.3; no relocation, no garbage): an
        int, float or bool the column's element type holds exactly, for date and
        date-time columns also a ``numpy.datetime64``, ``datetime.date``/``datetime``
        (aware ones as their UTC instant) or ISO text no finer than the column's unit, or
        ``None`` (or NaT) to make the cell missing, which needs a column with a validity
        bitmap (one that had a missing cell when written)::

            with leafwire.edit("package.lw") as ed:
                ed.set_cell("/resources/0/data", "Aggregate", 0, 523)
                ed.set_cell("/resources/0/data", "value", -1, None)

        String cells, and rows or columns, change by setting a new table. Errors:
        ``NotFoundError`` (pointer, column), ``IndexError`` (row), ``TypeError`` (string
        column, a value that does not fit), ``ValueError`` (``None`` without a validity
        bitmap).

        Deleting or replacing leaves garbage (``ed.garbage`` bytes) until ``compact()``
        rewrites the document canonically. ``compact_threshold`` (a ``garbage / size``
        ratio, by default 0.5; 0 disables) makes edits compact automatically, for a file
        on the next commit (a new file renamed over the old one). It applies once at least
        ``compact_min_garbage`` bytes are garbage (by default 64 KiB, so that a burst of
        edits on a small document does not rewrite it again and again; 0 compacts on the
        ratio alone).
        """
        return _leafwire.edit(source, compact_threshold=compact_threshold, compact_min_garbage=compact_min_garbage, trusted=trusted)

    class _NodeKeysView(KeysView):
        __slots__ = ()

    class _NodeValuesView(ValuesView):
        __slots__ = ()

        def __iter__(self):
            return self._mapping._iter_values()

    class _NodeItemsView(ItemsView):
        __slots__ = ()

        def __iter__(self):
            return self._mapping._iter_items()

    Mapping.register(ObjectNode)
    Sequence.register(ArrayNode)

__all__ = [
    "ArrayNode",
    "DecodeError",
    "Document",
    "EncodeError",
    "Editor",
    "Frame",
    "NotFoundError",
    "ObjectNode",
    "StreamWriter",
    "Table",
    "dump",
    "dumps",
    "edit",
    "from_json",
    "iter_stream",
    "load",
    "loads",
    "open",
    "to_json",
    "validate",
]
