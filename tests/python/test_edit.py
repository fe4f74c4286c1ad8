"""Tests of `leafwire.edit`: editing documents on their bytes from Python (spec §8).

The model test drives an editor and a plain dict/list side by side through random edits
and compares them after every step; the other tests cover files, bytearrays, the context
manager, errors (which must leave the document unchanged), numpy arrays and set_element.
"""

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import leafwire
import leafwire.reference as reference
from test_package import arrays_to_lists, same


def escape(key):
    """A JSON Pointer token (RFC 6901) for `key`."""
    return key.replace("~", "~0").replace("/", "~1")


def pointer(path):
    """The JSON Pointer of a path given as a list of keys and indexes."""
    return "".join("/" + (escape(p) if isinstance(p, str) else str(p)) for p in path)


def check_document(data, expected):
    """`data` is a valid document that the package and the reference reader both read as
    `expected`."""
    leafwire.validate(data)
    assert same(leafwire.loads(data), expected)
    assert same(reference.loads(data), leafwire.loads(data, arrays="list"))


# ---- model test ----

keys = st.text(alphabet=st.sampled_from("ab/~é_"), max_size=4)
int_keys = st.integers(-(2**63), 2**63 - 1)
scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=6) | st.binary(max_size=4))
json_values = st.recursive(
    scalars,
    lambda inner: (st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4)
                   | st.dictionaries(int_keys, inner, min_size=1, max_size=3)),  # intmaps
    max_leaves=8,
)


class IntMap(dict):
    """An intmap in the model. A plain dict cannot tell an emptied intmap from an empty
    object; the document can, so the model must too."""


def tracked(value):
    """`value` with its int-keyed dicts made `IntMap`s."""
    if isinstance(value, list):
        return [tracked(v) for v in value]
    if isinstance(value, dict):
        kind = IntMap if value and isinstance(next(iter(value)), int) else dict
        return kind((k, tracked(v)) for k, v in value.items())
    return value


def plain(value):
    """The model as the editor reads it: `IntMap`s as dicts."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def has_empty_intmap(value):
    if isinstance(value, dict):
        return (isinstance(value, IntMap) and not value) or any(has_empty_intmap(v) for v in value.values())
    return isinstance(value, list) and any(has_empty_intmap(v) for v in value)


def containers(value, path=()):
    """Every (path, container) in `value`, the root first."""
    if isinstance(value, (dict, list)):
        yield list(path), value
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, child in items:
            yield from containers(child, (*path, k))


def renamed(d, old, new):
    """`d` with key `old` renamed to `new` in the same position (as the core renames)."""
    return type(d)((new if k == old else k, v) for k, v in d.items())


def replaced(model, path, value):
    """`model` with the value at `path` replaced (the root when `path` is empty)."""
    if not path:
        return value
    parent = model
    for p in path[:-1]:
        parent = parent[p]
    parent[path[-1]] = value
    return model


def edit_step(data, ed, model):
    """Applies one random edit to the editor and to the model alike; returns the model
    (a new object when the root is replaced or renamed into)."""
    candidates = list(containers(model))
    if not candidates:  # a scalar root: all one can do is replace it
        v = data.draw(json_values, label="value")
        ed.set("", v)
        return tracked(v)
    path, target = data.draw(st.sampled_from(candidates), label="container")
    is_list = isinstance(target, list)
    ops = ["set_new", "replace"]
    if target:
        ops += ["set_existing", "delete"]
    if is_list:
        ops += ["insert", "append"]
    elif target:
        ops += ["rename"]
    op = data.draw(st.sampled_from(ops), label="op")
    existing = range(len(target)) if is_list else list(target.keys())
    new_keys = int_keys if isinstance(target, IntMap) else keys
    root = not path
    if op == "set_existing":
        k = data.draw(st.sampled_from(existing), label="key")
        v = data.draw(json_values, label="value")
        if root and is_list and data.draw(st.booleans(), label="negative index"):
            ed[k - len(target)] = v
        elif root:
            ed[k] = v
        else:
            ed.set(pointer([*path, k]), v)
        target[k] = tracked(v)
    elif op == "set_new":
        v = data.draw(json_values, label="value")
        if is_list:
            ed.set(pointer(path) + "/-", v)  # "-" in an array appends
            target.append(tracked(v))
        else:
            k = data.draw(new_keys.filter(lambda k: k not in target), label="new key")
            if root:
                ed[k] = v
            else:
                ed.set(pointer([*path, k]), v)
            target[k] = tracked(v)
    elif op == "replace":
        v = data.draw(json_values, label="value")
        ed.set(pointer(path), v)
        return replaced(model, path, tracked(v))
    elif op == "delete":
        k = data.draw(st.sampled_from(existing), label="key")
        if root:
            del ed[k]
        else:
            ed.delete(pointer([*path, k]))
        del target[k]
    elif op == "insert":
        i = data.draw(st.integers(0, len(target)), label="index")
        v = data.draw(json_values, label="value")
        ed.insert(pointer([*path, i]), v)
        target.insert(i, tracked(v))
    elif op == "append":
        v = data.draw(json_values, label="value")
        ed.append(v, at=pointer(path))
        target.append(tracked(v))
    elif op == "rename":
        old = data.draw(st.sampled_from(existing), label="old key")
        new = data.draw(new_keys.filter(lambda k: k not in target), label="new key")
        ed.rename(pointer([*path, old]), new)
        return replaced(model, path, renamed(target, old, new))
    return model


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_edits_match_a_python_model(data):
    start = data.draw(st.dictionaries(keys, json_values, max_size=4) | st.lists(json_values, max_size=4), label="start")
    threshold = data.draw(st.sampled_from([None, 0, 0.05, 0.5]), label="compact_threshold")
    buffer = bytearray(leafwire.dumps(start))
    ed = leafwire.edit(buffer, compact_threshold=threshold, compact_min_garbage=0)
    model = tracked(start)
    for _ in range(data.draw(st.integers(1, 25), label="steps")):
        model = edit_step(data, ed, model)
        assert same(ed.to_python(), plain(model))
        if isinstance(model, (dict, list)):
            assert len(ed) == len(model)
            assert same(list(ed), list(plain(model)))
    check_document(ed.to_bytes(), plain(model))
    ed.commit()
    check_document(buffer, plain(model))
    ed.compact()
    assert ed.garbage == 0
    assert same(ed.to_python(), plain(model))
    if not has_empty_intmap(model):  # which no Python value encodes to
        # Compaction is a canonical rewrite: the bytes of a fresh encode (spec §8.3).
        assert ed.to_bytes() == leafwire.dumps(plain(model))


# ---- bytearrays ----

def test_bytearray_round_trip_writes_back_into_the_same_object():
    buffer = bytearray(leafwire.dumps({"name": "mesh", "tags": ["a"], "n": 1}))
    original = bytes(buffer)
    ed = leafwire.edit(buffer)
    ed["name"] = "a much longer name than before, so the string relocates"
    ed.append("b", at="/tags")
    del ed["n"]
    assert bytes(buffer) == original, "edits stay in the editor until commit"
    ed.commit()
    expected = {"name": "a much longer name than before, so the string relocates", "tags": ["a", "b"]}
    check_document(buffer, expected)
    assert bytes(buffer) == ed.to_bytes()
    ed["extra"] = list(range(100))
    ed.flush()  # the same as commit()
    check_document(buffer, {**expected, "extra": list(range(100))})
    ed.compact()
    ed.commit()  # compaction shrinks the document; the bytearray shrinks with it
    assert bytes(buffer) == leafwire.dumps({**expected, "extra": list(range(100))})


def test_commit_into_an_exported_bytearray_raises_buffer_error():
    buffer = bytearray(leafwire.dumps({"a": 1}))
    before = bytes(buffer)
    view = memoryview(buffer)
    ed = leafwire.edit(buffer)
    ed["b"] = "grows the document"
    with pytest.raises(BufferError):
        ed.commit()
    assert bytes(buffer) == before
    view.release()
    ed.commit()
    check_document(buffer, {"a": 1, "b": "grows the document"})


def test_bytes_are_refused_and_never_mutated():
    data = leafwire.dumps({"a": 1})
    with pytest.raises(TypeError, match="bytearray"):
        leafwire.edit(data)
    assert data == leafwire.dumps({"a": 1})
    for other in (memoryview(bytearray(data)), 42, None, np.frombuffer(data, np.uint8)):
        with pytest.raises(TypeError, match="path .* or a bytearray"):
            leafwire.edit(other)


def test_invalid_input_raises_decode_error_with_offset():
    data = bytearray(leafwire.dumps({"a": [1, 2, 3]}))
    data[0] ^= 0xFF  # the magic
    with pytest.raises(leafwire.DecodeError) as info:
        leafwire.edit(data)
    assert info.value.offset is not None
    assert isinstance(info.value, ValueError)
    with pytest.raises(leafwire.DecodeError):
        leafwire.edit(bytearray(leafwire.dumps([1])[:-1]))


# ---- files ----

def test_file_edits_are_visible_only_after_commit(tmp_path):
    path = tmp_path / "data.lw"
    path.write_bytes(leafwire.dumps({"count": 1, "tags": ["a"], "xs": np.arange(3.0)}))
    ed = leafwire.edit(path)  # os.PathLike
    ed["count"] = 2
    ed.append("b", at="/tags")
    ed.set_element("/xs", 0, 10.0)
    assert leafwire.open(str(path))["count"] == 1, "nothing committed yet"
    ed.commit()
    committed = leafwire.open(str(path))
    assert committed["count"] == 2 and list(committed["tags"]) == ["a", "b"]
    assert committed["xs"].tolist() == [10.0, 1.0, 2.0]
    ed["count"] = 3  # edited after the commit, then dropped
    ed.close()
    assert ed.closed
    reopened = leafwire.edit(str(path))
    assert same(reopened.to_python(), {"count": 2, "tags": ["a", "b"], "xs": np.array([10.0, 1.0, 2.0])})
    check_document(path.read_bytes(), reopened.to_python())
    reopened.close()


def test_file_compaction_rewrites_the_file(tmp_path):
    path = tmp_path / "data.lw"
    path.write_bytes(leafwire.dumps({"big": "x" * 1000, "keep": [1, 2]}))
    ed = leafwire.edit(path)
    del ed["big"]
    ed["keep"] = [3]
    assert ed.garbage > 0
    ed.compact()
    assert ed.garbage == 0
    ed.commit()
    assert path.read_bytes() == leafwire.dumps({"keep": [3]})
    ed["more"] = True  # the editor goes on over the new file
    ed.commit()
    check_document(path.read_bytes(), {"keep": [3], "more": True})


def test_file_compact_threshold_compacts_automatically(tmp_path):
    path = tmp_path / "data.lw"
    path.write_bytes(leafwire.dumps({"s": "x" * 200}))
    ed = leafwire.edit(path, compact_threshold=0.1, compact_min_garbage=0)
    ed["s"] = "y" * 400  # the old string becomes garbage, past 10% of the document
    assert ed.garbage == 0
    ed.commit()
    assert path.read_bytes() == leafwire.dumps({"s": "y" * 400})


def test_missing_paths_raise_os_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        leafwire.edit(tmp_path / "missing.lw")
    with pytest.raises(IsADirectoryError):
        leafwire.edit(tmp_path)


# ---- context manager ----

def test_context_manager_commits_on_clean_exit(tmp_path):
    path = tmp_path / "data.lw"
    path.write_bytes(leafwire.dumps({"a": 1}))
    with leafwire.edit(path) as ed:
        ed["a"] = 2
        ed["b"] = "new"
    assert ed.closed
    assert leafwire.loads(path.read_bytes()) == {"a": 2, "b": "new"}
    with pytest.raises(ValueError, match="closed"):
        ed["a"]
    buffer = bytearray(leafwire.dumps([1]))
    with leafwire.edit(buffer) as ed:
        ed.append(2)
    assert leafwire.loads(buffer) == [1, 2]


def test_context_manager_does_not_commit_after_an_exception(tmp_path):
    path = tmp_path / "data.lw"
    path.write_bytes(leafwire.dumps({"a": 1}))
    before = path.read_bytes()
    with pytest.raises(RuntimeError, match="boom"):
        with leafwire.edit(path) as ed:
            ed["a"] = 2
            raise RuntimeError("boom")
    assert ed.closed
    assert path.read_bytes() == before
    buffer = bytearray(before)
    with pytest.raises(RuntimeError):
        with leafwire.edit(buffer) as ed:
            ed["a"] = 2
            raise RuntimeError("boom")
    assert bytes(buffer) == before


# ---- root access ----

def test_root_object_keys_with_slash_and_tilde():
    ed = leafwire.edit(bytearray(leafwire.dumps({"a/b": 1, "~c": {"d~/": 2}})))
    assert ed["a/b"] == 1 and ed.pointer("/a~1b") == 1
    assert ed.get("/~0c/d~0~1") == 2
    ed["a/b"] = 3
    ed["new/~key"] = 4
    ed.rename("/~0c", "~c/renamed")
    assert "new/~key" in ed and "a/b" in ed and "~c" not in ed
    assert list(ed) == ["a/b", "~c/renamed", "new/~key"]
    assert ed.to_python() == {"a/b": 3, "~c/renamed": {"d~/": 2}, "new/~key": 4}
    del ed["a/b"]
    assert list(ed) == ["~c/renamed", "new/~key"]


def test_root_array_indexes_like_a_list():
    ed = leafwire.edit(bytearray(leafwire.dumps([10, 20, 30])))
    assert (ed[0], ed[-1], len(ed)) == (10, 30, 3)
    ed[-1] = 31
    del ed[0]
    assert ed.to_python() == [20, 31]
    assert 31 in ed and 10 not in ed
    assert list(ed) == [20, 31]
    for bad in (2, -3):
        with pytest.raises(IndexError):
            ed[bad]
        with pytest.raises(IndexError):
            ed[bad] = 0
        with pytest.raises(IndexError):
            del ed[bad]
    with pytest.raises(TypeError):
        ed["0"]
    with pytest.raises(TypeError):
        ed[0:1]
    ed.append("end")
    ed.insert("/0", "start")
    assert ed.to_python() == ["start", 20, 31, "end"]


def test_root_intmap_takes_int_keys():
    ed = leafwire.edit(bytearray(leafwire.dumps({1: "a", -5: "b"})))
    assert ed[-5] == "b" and 1 in ed and "1" not in ed
    ed[7] = "c"
    del ed[1]
    assert list(ed) == [-5, 7]
    ed.rename("/7", 8)
    assert ed.to_python() == {-5: "b", 8: "c"}
    with pytest.raises(TypeError):
        ed["x"] = 1
    with pytest.raises(KeyError):
        ed["x"]


def test_missing_keys_raise_key_error_with_the_key():
    ed = leafwire.edit(bytearray(leafwire.dumps({"a": {"b": 1}})))
    with pytest.raises(KeyError) as info:
        ed["zz"]
    assert info.value.args == ("zz",)
    assert isinstance(info.value, leafwire.NotFoundError)
    with pytest.raises(KeyError):
        del ed["zz"]
    with pytest.raises(leafwire.NotFoundError) as info:
        ed.pointer("/a/zz")
    assert info.value.path == "/a/zz"
    assert ed.get("/a/zz") is None and ed.get("/a/zz", 5) == 5
    assert 1 not in ed  # an int is never a key of an object


def test_scalar_root_is_replaced_through_the_empty_pointer():
    ed = leafwire.edit(bytearray(leafwire.dumps("just a string")))
    assert ed.pointer("") == "just a string"
    with pytest.raises(TypeError, match="the root is a string"):
        ed["a"] = 1
    with pytest.raises(TypeError):
        len(ed)
    ed.set("", {"a": 1})
    ed["b"] = 2
    assert ed.to_python() == {"a": 1, "b": 2}


def test_nested_values_read_as_copies():
    """Reads are plain values: writing into them does not change the document."""
    ed = leafwire.edit(bytearray(leafwire.dumps({"a": {"b": 1}})))
    copy = ed["a"]
    copy["b"] = 2
    assert ed.pointer("/a/b") == 1
    ed.set("/a/b", 2)
    assert ed["a"] == {"b": 2}


# ---- numpy ----

@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "uint64", "float32", "float64"])
def test_numpy_arrays_become_typed_arrays(dtype):
    ed = leafwire.edit(bytearray(leafwire.dumps({"meta": 1})))
    array = (np.arange(12) % 2).astype(dtype).reshape(3, 4) if dtype == "bool" else np.arange(12, dtype=dtype).reshape(3, 4)
    ed["m"] = array
    got = ed["m"]
    assert isinstance(got, np.ndarray) and got.dtype == array.dtype and got.shape == (3, 4)
    assert np.array_equal(got, array)
    doc = leafwire.open(ed.to_bytes())
    assert isinstance(doc["m"], np.ndarray) and doc["m"].dtype == array.dtype, "stored as a typed array"
    check_document(ed.to_bytes(), {"meta": 1, "m": array})


def test_read_arrays_are_copies_that_survive_edits():
    ed = leafwire.edit(bytearray(leafwire.dumps({"xs": np.arange(4.0)})))
    xs = ed["xs"]
    assert xs.flags.writeable, "a copy, not a read-only view"
    xs[0] = 99.0
    assert ed["xs"][0] == 0.0
    ed["xs"] = np.zeros(1000)  # relocates and zeroes the old block
    ed.compact()
    assert xs.tolist() == [99.0, 1.0, 2.0, 3.0]


# ---- set_element ----

def test_set_element_writes_in_place():
    ed = leafwire.edit(bytearray(leafwire.dumps({
        "f": np.zeros((2, 2)), "i": np.zeros(3, np.int8), "u": np.zeros(2, np.uint8),
        "b": np.zeros(2, bool), "h": np.zeros(2, np.float32),
    })))
    size = ed.nbytes
    ed.set_element("/f", 3, 1.5)  # flat, row-major
    ed.set_element("/f", -4, 2)  # an int into a float array
    ed.set_element("/i", -1, -128)
    ed.set_element("/u", 0, np.uint8(255))
    ed.set_element("/b", 1, True)
    ed.set_element("/b", 0, np.True_)
    ed.set_element("/h", 0, np.float32(0.25))
    assert ed.nbytes == size and ed.garbage == 0, "in place: no relocation"
    got = ed.to_python()
    assert got["f"].tolist() == [[2.0, 0.0], [0.0, 1.5]]
    assert got["i"].tolist() == [0, 0, -128] and got["u"].tolist() == [255, 0]
    assert got["b"].tolist() == [True, True] and got["h"].tolist() == [0.25, 0.0]


def test_set_element_keeps_integers_exact_in_masked_arrays():
    # JSON arrays mixing ints and floats become f64 arrays with an integer mask (§5.2).
    ed = leafwire.edit(bytearray(leafwire.from_json('{"xs": [1.5, 2]}')))
    ed.set_element("/xs", 0, 7)
    ed.set_element("/xs", 1, 0.5)
    assert same(leafwire.loads(ed.to_bytes(), arrays="list"), {"xs": [7, 0.5]})
    assert leafwire.to_json(ed.to_bytes()) == '{"xs":[7,0.5]}'


def test_small_documents_compact_only_past_the_minimum_garbage():
    data = leafwire.dumps({"s": "x" * 100})
    ed = leafwire.edit(bytearray(data), compact_threshold=0.1)
    ed["s"] = "y" * 200
    assert ed.garbage > 0, "under 64 KiB of garbage: no compaction yet"
    ed = leafwire.edit(bytearray(data), compact_threshold=0.1, compact_min_garbage=0)
    ed["s"] = "y" * 200
    assert ed.garbage == 0, "the ratio alone decides"


def test_set_element_writes_the_whole_uint64_range():
    ed = leafwire.edit(bytearray(leafwire.dumps({"u": np.zeros(2, np.uint64), "i": np.zeros(1, np.int64)})))
    ed.set_element("/u", 0, 2**64 - 1)
    ed.set_element("/u", 1, 2**63)
    assert leafwire.loads(ed.to_bytes())["u"].tolist() == [2**64 - 1, 2**63]
    with pytest.raises(TypeError, match="does not fit"):
        ed.set_element("/i", 0, 2**63)


def test_set_element_errors_leave_the_array_unchanged():
    ed = leafwire.edit(bytearray(leafwire.dumps({"i": np.zeros(3, np.int8), "s": "text"})))
    before = ed.to_bytes()
    with pytest.raises(IndexError):
        ed.set_element("/i", 3, 1)
    with pytest.raises(IndexError):
        ed.set_element("/i", -4, 1)
    with pytest.raises(TypeError, match="does not fit"):
        ed.set_element("/i", 0, 128)
    with pytest.raises(TypeError, match="does not fit"):
        ed.set_element("/i", 0, 1.5)
    with pytest.raises(OverflowError):
        ed.set_element("/i", 0, 2**64)
    with pytest.raises(TypeError):
        ed.set_element("/i", 0, "1")
    with pytest.raises(TypeError):
        ed.set_element("/s", 0, 1)
    with pytest.raises(KeyError):
        ed.set_element("/missing", 0, 1)
    assert ed.to_bytes() == before


# ---- failed edits ----

class Unsupported:
    pass


def deep(n):
    value = []
    for _ in range(n):
        value = [value]
    return value


@pytest.mark.parametrize("edit, error", [
    pytest.param(lambda ed: ed.set("/missing/child", 1), KeyError, id="set under a missing key"),
    pytest.param(lambda ed: ed.set("no-leading-slash", 1), KeyError, id="set at a malformed pointer"),
    pytest.param(lambda ed: ed.set("/name", Unsupported()), leafwire.EncodeError, id="set an unsupported object"),
    pytest.param(lambda ed: ed.set("/list/0", {1: "a", "b": 2}), leafwire.EncodeError, id="set mixed dict keys"),
    pytest.param(lambda ed: ed.set("/obj/x", deep(127)), leafwire.EncodeError, id="set too deep where it lands"),
    pytest.param(lambda ed: ed.set("/obj/x", deep(200)), leafwire.EncodeError, id="set too deep to encode"),
    pytest.param(lambda ed: ed.set("/name/x", 1), TypeError, id="set inside a string"),
    pytest.param(lambda ed: ed.delete("/missing"), KeyError, id="delete a missing key"),
    pytest.param(lambda ed: ed.delete(""), TypeError, id="delete the root"),
    pytest.param(lambda ed: ed.delete("/list/9"), KeyError, id="delete past the end"),
    pytest.param(lambda ed: ed.insert("/obj/0", 1), TypeError, id="insert into an object"),
    pytest.param(lambda ed: ed.insert("/list/9", 1), KeyError, id="insert past the end"),
    pytest.param(lambda ed: ed.append(1, at="/obj"), TypeError, id="append to an object"),
    pytest.param(lambda ed: ed.rename("/obj/x", "y"), ValueError, id="rename onto an existing key"),
    pytest.param(lambda ed: ed.rename("/list/0", "y"), TypeError, id="rename in an array"),
    pytest.param(lambda ed: ed.rename("/obj/missing", "z"), KeyError, id="rename a missing key"),
    pytest.param(lambda ed: ed.__setitem__("name", Unsupported()), leafwire.EncodeError, id="[]= an unsupported object"),
    pytest.param(lambda ed: ed.__delitem__("missing"), KeyError, id="del [] a missing key"),
])
def test_failed_edits_leave_the_document_unchanged(edit, error):
    start = {"name": "n", "list": [1, 2], "obj": {"x": 1, "y": 2}}
    ed = leafwire.edit(bytearray(leafwire.dumps(start)))
    ed["list"] = [1, 2, 3]  # some garbage and spare capacity first
    ed.delete("/list/2")
    before, garbage = ed.to_bytes(), ed.garbage
    with pytest.raises(error):
        edit(ed)
    assert ed.to_bytes() == before and ed.garbage == garbage
    assert ed.to_python() == start
    ed["name"] = "still editable"
    assert ed["name"] == "still editable"


def test_failed_file_edit_commits_nothing_extra(tmp_path):
    path = tmp_path / "data.lw"
    path.write_bytes(leafwire.dumps({"a": 1}))
    with leafwire.edit(path) as ed:
        ed["a"] = 2
        with pytest.raises(leafwire.EncodeError):
            ed["b"] = Unsupported()
    assert leafwire.loads(path.read_bytes()) == {"a": 2}


def test_bad_arguments():
    with pytest.raises(ValueError, match="compact_threshold"):
        leafwire.edit(bytearray(leafwire.dumps(1)), compact_threshold=-1)
    with pytest.raises(ValueError, match="compact_threshold"):
        leafwire.edit(bytearray(leafwire.dumps(1)), compact_threshold=math.nan)
    ed = leafwire.edit(bytearray(leafwire.dumps({"a": 1})))
    with pytest.raises(TypeError):
        ed.rename("/a", 1.5)
    with pytest.raises(ValueError):
        ed.to_python(arrays="tuples")
    ed.close()
    for use in (lambda: ed.to_bytes(), lambda: ed.set("/a", 1), lambda: ed.commit(), lambda: len(ed)):
        with pytest.raises(ValueError, match="closed"):
            use()
    assert "closed" in repr(ed)


def test_garbage_and_compact():
    ed = leafwire.edit(bytearray(leafwire.dumps({"s": "x" * 100, "n": 1})), compact_threshold=0)
    del ed["s"]
    assert ed.garbage >= 100
    assert ed.nbytes > len(leafwire.dumps({"n": 1}))
    ed.compact()
    assert ed.garbage == 0 and ed.to_bytes() == leafwire.dumps({"n": 1})
    assert "bytearray" in repr(ed) and "garbage" in repr(ed)


def test_file_path_as_str_and_repr(tmp_path):
    path = os.fspath(tmp_path / "data.lw")
    with open(path, "wb") as f:
        f.write(leafwire.dumps([]))
    with leafwire.edit(path) as ed:
        ed.append({"k": "v"})
        assert path in repr(ed)
    assert leafwire.loads(open(path, "rb").read()) == [{"k": "v"}]
