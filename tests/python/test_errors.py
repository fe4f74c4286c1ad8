"""Errors of the Python package that are not about malformed bytes: a Rust panic becomes
DecodeError (never pyo3's PanicException), missing files raise as open() does, cycles are
named, max_depth raises the nesting limit, and numpy is optional."""

import errno
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import leafwire
from leafwire import _leafwire
from lwvectors import TYPED, header, root_record

REPO = Path(__file__).resolve().parents[2]
CRATE_SRC = REPO / "crates" / "leafwire-py" / "src"


# -- panics become DecodeError -------------------------------------------------------------

def test_a_panic_in_a_function_becomes_decode_error():
    with pytest.raises(leafwire.DecodeError) as info:
        _leafwire._panic_for_test("boom at byte 42")
    assert "internal error" in str(info.value) and "boom at byte 42" in str(info.value)
    assert info.value.category == "internal"
    # A ValueError, so `except Exception` (and `except ValueError`) catch it.
    assert isinstance(info.value, ValueError)


def test_the_extension_still_works_after_a_panic():
    for _ in range(3):
        with pytest.raises(leafwire.DecodeError):
            _leafwire._panic_for_test()
    assert leafwire.loads(leafwire.dumps({"a": [1, 2]})) == {"a": [1, 2]}


@pytest.mark.parametrize("root", [(1 << 64) - 2, (1 << 64) - 1], ids=["u64max-1", "u64max"])
@pytest.mark.parametrize("entry", [
    leafwire.loads,
    lambda d: leafwire.loads(d, arrays="list"),
    lambda d: leafwire.open(d).root,  # a method of Document
    lambda d: leafwire.open(d).to_python(arrays="list"),
    leafwire.to_json,
    leafwire.validate,
], ids=["loads", "loads-list", "Document.root", "Document.to_python", "to_json", "validate"])
def test_a_typed_array_offset_near_u64_max_raises_decode_error(entry, root):
    # Issue 9: this root offset made the core panic (`p + 2` wrapped), and the panic reached
    # Python as PanicException. Whether the core reports it or the guard catches a panic,
    # Python sees DecodeError.
    data = header(root_record(1, root, TYPED, 0, 112 + 16)) + bytes(16)
    with pytest.raises(leafwire.DecodeError):
        entry(data)


def _guarded_blocks(text):
    """The spans of `guarded! { ... }` invocations in a Rust source, by brace matching."""
    spans = []
    for match in re.finditer(r"guarded!\s*\{", text):
        depth, i = 1, match.end()
        while depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        spans.append((match.start(), i))
    return spans


def test_every_entry_point_is_guarded():
    # Each #[pyfunction] and #[pymethods] of the extension is declared inside `guarded!`
    # (crates/leafwire-py/src/guard.rs), which turns a panic into DecodeError.
    sources = sorted(CRATE_SRC.rglob("*.rs"))
    assert sources, f"no Rust sources under {CRATE_SRC}"
    unguarded, seen = [], 0
    for path in sources:
        text = path.read_text(encoding="utf-8")
        spans = _guarded_blocks(text)
        for match in re.finditer(r"^\s*#\[(pyfunction|pymethods)\]", text, re.MULTILINE):
            seen += 1
            if not any(start < match.start() < end for start, end in spans):
                line = text.count("\n", 0, match.start()) + 1
                unguarded.append(f"{path.relative_to(REPO)}:{line}")
    assert seen >= 10, seen
    assert not unguarded, f"entry points outside guarded!: {unguarded}"


def test_every_public_callable_is_a_guarded_entry_point():
    # The module's compiled functions are exactly those the crate declares (plus the test
    # hook), so the source check above covers all of them.
    declared = set()
    for path in CRATE_SRC.rglob("*.rs"):
        text = path.read_text(encoding="utf-8")
        declared |= set(re.findall(r"^\s*#\[pyfunction\][^{]*?fn\s+(\w+)", text, re.DOTALL | re.MULTILINE))
    compiled = {name for name in dir(_leafwire) if type(getattr(_leafwire, name)).__name__ == "builtin_function_or_method"}
    assert compiled == declared


# -- files ----------------------------------------------------------------------------------

@pytest.mark.parametrize("entry", [leafwire.open, leafwire.edit], ids=["open", "edit"])
@pytest.mark.parametrize("as_path", [False, True], ids=["str", "Path"])
def test_a_missing_file_raises_as_open_does(tmp_path, entry, as_path):
    missing = tmp_path / "nope.lw"
    with pytest.raises(FileNotFoundError) as info:
        entry(missing if as_path else str(missing))
    with pytest.raises(FileNotFoundError) as builtin:
        open(missing if as_path else str(missing), "rb")
    e = info.value
    assert e.errno == errno.ENOENT and e.filename == str(missing) == builtin.value.filename
    assert str(e) == str(builtin.value)
    assert str(missing) in str(e)


def test_a_directory_raises_is_a_directory_error(tmp_path):
    with pytest.raises(IsADirectoryError) as info:
        leafwire.open(tmp_path)
    assert info.value.errno == errno.EISDIR and info.value.filename == str(tmp_path)


# -- nesting: cycles and max_depth ----------------------------------------------------------

def _cycles():
    a = []
    a.append(a)
    d = {}
    d["self"] = d
    outer = [1, {"x": None}]
    outer[1]["x"] = outer  # through a dict
    t = ([],)
    t[0].append(t)  # a tuple reached through a list
    deep = []
    node = deep
    for _ in range(50):  # a cycle that starts below the root
        node.append([])
        node = node[0]
    node.append(node)
    return {"list": a, "dict": d, "list-dict": outer, "tuple": t, "deep": deep}


@pytest.mark.parametrize("name", list(_cycles()))
@pytest.mark.parametrize("max_depth", [128, 1024])
def test_a_cycle_is_reported_as_a_cycle(name, max_depth):
    value = _cycles()[name]
    with pytest.raises(leafwire.EncodeError) as info:
        leafwire.dumps(value, max_depth=max_depth)
    assert "cycle" in str(info.value) and "contains itself" in str(info.value), str(info.value)
    assert info.value.category == "cycle"


def test_a_cycle_inside_a_subclass_and_through_default():
    class L(list):
        pass

    a = L()
    a.append(a)
    with pytest.raises(leafwire.EncodeError, match="cycle"):
        leafwire.dumps(a)

    class Box:
        pass

    box = Box()
    with pytest.raises(leafwire.EncodeError, match=r"cycle: a \S*Box contains itself"):
        leafwire.dumps(box, default=lambda obj: [obj])


def test_deep_but_finite_nesting_is_a_depth_error():
    value = []
    for _ in range(200):
        value = [value]
    with pytest.raises(leafwire.EncodeError) as info:
        leafwire.dumps(value)
    assert "nesting deeper than the limit of 128" in str(info.value) and "cycle" not in str(info.value)
    assert info.value.category == "depth_limit"
    # The same object twice side by side is not a cycle.
    shared = [1, 2]
    assert leafwire.loads(leafwire.dumps([shared, shared, {"a": shared}])) == [[1, 2], [1, 2], {"a": [1, 2]}]


@pytest.mark.parametrize("wrap", [lambda v: [v], lambda v: {"k": v}, lambda v: (v,)], ids=["list", "dict", "tuple"])
def test_max_depth_raises_the_nesting_limit(wrap):
    value = None
    for _ in range(500):
        value = wrap(value)
    with pytest.raises(leafwire.EncodeError):
        leafwire.dumps(value)
    data = leafwire.dumps(value, max_depth=leafwire.MAX_DEPTH_CAP)
    back = leafwire.loads(data, max_depth=leafwire.MAX_DEPTH_CAP)
    depth = 0
    while back is not None:
        back = back["k"] if isinstance(back, dict) else back[0]
        depth += 1
    assert depth == 500


def test_the_docstrings_state_the_limit_max_depth_sets():
    doc = leafwire.dumps.__doc__
    assert "max_depth" in doc and "MAX_DEPTH_CAP" in doc and "cycle" in doc
    assert "caps nesting at 128" not in doc and "do not help" not in doc


# -- numpy is optional ------------------------------------------------------------------------

# Runs in a fresh interpreter in which `import numpy` fails, as if it were not installed.
WITHOUT_NUMPY = textwrap.dedent(
    r"""
    import sys

    class NoNumpy:
        def find_spec(self, name, path=None, target=None):
            if name == "numpy" or name.startswith("numpy."):
                raise ImportError(f"No module named {name!r} (hidden by the test)")
            return None

    sys.meta_path.insert(0, NoNumpy())
    sys.modules.pop("numpy", None)

    import leafwire

    class SubList(list):
        pass

    class SubDict(dict):
        pass

    value = {"xs": [0.5, 1.5], "sub": SubList([1, SubDict(a=2)]), "t": (1, "x"), "n": None}
    data = leafwire.dumps(value)
    assert leafwire.loads(data) == {"xs": [0.5, 1.5], "sub": [1, {"a": 2}], "t": [1, "x"], "n": None}

    typed = leafwire.from_json('{"xs": [0.5, 1.5, 2.5], "name": "mesh"}')
    assert leafwire.loads(typed, arrays="list") == {"xs": [0.5, 1.5, 2.5], "name": "mesh"}
    try:
        leafwire.loads(typed)
    except ModuleNotFoundError as e:
        assert e.name == "numpy" and 'arrays="list"' in str(e), str(e)
    else:
        raise AssertionError("loads with numpy arrays worked without numpy")

    path = sys.argv[1]
    with open(path, "wb") as f:
        f.write(typed)
    doc = leafwire.open(path)
    assert doc["name"] == "mesh" and len(doc) == 2
    assert doc.to_python(arrays="list") == {"xs": [0.5, 1.5, 2.5], "name": "mesh"}
    try:
        doc["xs"]
    except ModuleNotFoundError:
        pass
    else:
        raise AssertionError("a numpy view worked without numpy")

    buf = bytearray(typed)
    with leafwire.edit(buf) as ed:
        ed.set_element("/xs", 0, 9)
        ed["name"] = SubList(["a"])
    assert leafwire.loads(buf, arrays="list") == {"xs": [9.0, 1.5, 2.5], "name": ["a"]}

    assert "numpy" not in sys.modules
    print("ok")
    """
)


def test_works_without_numpy(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_NUMPY, str(tmp_path / "doc.lw")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_numpy_is_not_imported_by_the_package():
    code = "import sys, leafwire; leafwire.loads(leafwire.dumps([1, {'a': 2.5}])); print('numpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"
