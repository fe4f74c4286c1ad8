"""The negative test vectors (spec/vectors/invalid/, spec §9, "Invalid vectors") in Python.

- The reference reader rejects every vector, except those whose .json says
  "reference": "not read by a decoder" (hash indexes, the dictionary's hash table, spare
  capacity), which it must decode; these tests need only python3 and pytest.
- The package: `validate` and `Document.validate` raise `DecodeError` with the vector's
  offset and category; `edit` refuses each vector; `loads`, a full lazy walk of
  `open(...)`, `to_python` and `to_json` never raise anything but `DecodeError` (and
  `NotFoundError` on lookups) -- above all never `PanicException` -- and raise
  `DecodeError` where the rule is one lazy access checks ("decode": "error").

A missing or empty directory fails every test here instead of skipping it.
"""

import json

import pytest

try:
    import leafwire
except ImportError as error:  # the reference reader's tests run without the package
    leafwire, PACKAGE_MISSING = None, error
from lwvectors import INVALID_DIR, VECTOR_DIR, reference, require, vector_paths

PATHS = vector_paths(INVALID_DIR)
NOT_READ = "not read by a decoder"

# The vectors the reference reader accepts: rules about structures a decoder never reads.
REFERENCE_ACCEPTS = {
    "dict_table_entry_unreachable", "dict_table_missing_key", "dict_table_names_id_past_count",
    "dict_table_size_1", "dict_table_size_1_one_key", "dict_table_size_below_2c",
    "dict_table_size_not_power_of_two", "hash_index_entry_unreachable", "hash_index_missing_entry",
    "hash_index_names_child_past_count", "spare_capacity_not_zero", "typed_spare_rows_past_end",
}

CATEGORIES = {"Malformed": "malformed", "Unsupported": "unsupported", "DepthLimit": "depth_limit",
              "LimitExceeded": "limit_exceeded"}


def load(path):
    """(bytes, expectation) of a vector; fails when the directory holds none."""
    require(path)
    meta = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    assert meta["category"] in CATEGORIES and isinstance(meta["offset"], int), path.name
    assert meta["decode"] in ("error", "unchecked"), path.name
    assert meta.get("reference", NOT_READ) == NOT_READ, path.name
    return path.read_bytes(), meta


vectors = pytest.mark.parametrize("path", PATHS, ids=lambda p: p.stem)


# -- the reference reader -----------------------------------------------------------------

@vectors
def test_reference_reader_rejects_what_changes_the_value(path):
    data, meta = load(path)
    if meta.get("reference") == NOT_READ:
        reference.loads(data)  # the broken structure is one a decoder never reads
    else:
        with pytest.raises(reference.FormatError):
            reference.loads(data)


def test_reference_reader_accepts_exactly_the_structures_it_never_reads():
    marked = {p.stem for p in PATHS if load(p)[1].get("reference") == NOT_READ}
    assert marked == REFERENCE_ACCEPTS


# -- the package ----------------------------------------------------------------------------

def need_package():
    if leafwire is None:
        pytest.fail(f"the leafwire package is not installed ({PACKAGE_MISSING}): pip install .", pytrace=False)


def check_decode_error(error, meta):
    assert type(error) is leafwire.DecodeError, f"{type(error).__name__}: {error}"
    assert (error.category, error.offset) == (CATEGORIES[meta["category"]], meta["offset"]), str(error)


@vectors
def test_validate_reports_the_category_and_offset(path):
    need_package()
    data, meta = load(path)
    with pytest.raises(BaseException) as info:
        leafwire.validate(data)
    check_decode_error(info.value, meta)
    try:
        doc = leafwire.open(data)
    except BaseException as error:  # the header is checked on open
        check_decode_error(error, meta)
        return
    with pytest.raises(BaseException) as info:
        doc.validate()
    check_decode_error(info.value, meta)


@vectors
def test_edit_refuses_each_vector(path):
    need_package()
    data, meta = load(path)
    with pytest.raises(BaseException) as info:
        leafwire.edit(bytearray(data))
    check_decode_error(info.value, meta.get("owned", meta))  # an editor finishes a journal first


def walk(node, depth=0):
    """Touches every value reachable through the lazy API, lookups included."""
    if depth > 200:
        return
    if isinstance(node, leafwire.ObjectNode):
        for key in node:
            walk(node[key], depth + 1)
        with pytest.raises(KeyError):
            node["\x01absent" if node.kind == "object" else -(1 << 63) + 12345]
    elif isinstance(node, leafwire.ArrayNode):
        for i in range(len(node)):
            walk(node[i], depth + 1)
        with pytest.raises(IndexError):
            node[len(node)]
    elif isinstance(node, leafwire.Table):
        # Every column, as a reader hands it out (string cells are checked then).
        for name in node.columns:
            column = node[name]
            column.tolist() if hasattr(column, "tolist") else list(column)
        node.to_python()
    elif hasattr(node, "tolist"):
        node.tolist()


def outcomes(data):
    """What each reader does with `data`: None when it succeeds, else the exception."""
    def lazy_walk():
        doc = leafwire.open(data)
        walk(doc.root)

    readers = {
        "loads": lambda: leafwire.loads(data),
        "loads(arrays='list')": lambda: leafwire.loads(data, arrays="list"),
        "open + walk": lazy_walk,
        "open().to_python()": lambda: leafwire.open(data).to_python(),
        "to_json": lambda: leafwire.to_json(data),
    }
    result = {}
    for name, read in readers.items():
        try:
            read()
            result[name] = None
        except BaseException as error:  # PanicException is a BaseException
            result[name] = error
    return result


@vectors
def test_readers_raise_only_decode_errors_never_panic(path):
    need_package()
    data, meta = load(path)
    tree_or_depth = meta["rule"].startswith(("§9.9", "§9.10"))
    problems = []
    for reader, error in outcomes(data).items():
        if error is None:
            # A lazy walk has no depth limit and stops on cycles at its own bound.
            if meta["decode"] == "error" and not (reader == "open + walk" and tree_or_depth):
                problems.append(f"{reader} accepted it")
        elif not isinstance(error, (leafwire.DecodeError, leafwire.NotFoundError)):
            problems.append(f"{reader} raised {type(error).__module__}.{type(error).__name__}: {error}")
    assert not problems, "; ".join(problems)


def test_a_container_in_the_last_two_bytes_reads_the_same_everywhere():
    need_package()
    # spec/vectors/array_at_end.lw is valid: [[]], the inner array filling the last two
    # bytes (issue 9: lookups called it malformed while to_json printed it).
    data = (VECTOR_DIR / "array_at_end.lw").read_bytes()
    leafwire.validate(data)
    assert leafwire.to_json(data) == "[[]]"
    assert leafwire.loads(data) == [[]] and reference.loads(data) == [[]]
    doc = leafwire.open(data)
    inner = doc.pointer("/0")
    assert isinstance(inner, leafwire.ArrayNode) and len(inner) == 0 and list(inner) == []
    assert inner.offset == len(data) - 2
    assert doc[0].to_python() == []
    with pytest.raises(leafwire.NotFoundError):
        doc.pointer("/0/0")
    with pytest.raises(IndexError):
        doc[0][0]
