"""The monorepo's contract (docs/design.md, section 1): `import tocha` stays light, missing
distributions are named (every import form: tests/core/test_missing_distributions.py), the
namespace spans distributions, and each package imports only the packages before it in the
dependency table.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tocha

ROOT = Path(__file__).resolve().parents[2]

# docs/design.md's package table, in dependency order:
# (folder, distribution, the modules it owns, the distributions it depends on).
PACKAGES = [
    ("tensor-core", "tocha-core", ("tocha",), ()),
    ("autograd", "tocha-autograd", ("tocha.autograd",), ("tocha-core",)),
    ("nn", "tocha-nn", ("tocha.nn",), ("tocha-autograd",)),
    ("optim", "tocha-optim", ("tocha.optim",), ("tocha-autograd", "tocha-nn")),
    ("distributions", "tocha-distributions", ("tocha.distributions",), ("tocha-autograd",)),
    ("func", "tocha-func", ("tocha.func",), ("tocha-autograd", "tocha-nn")),
    ("fx", "tocha-fx", ("tocha.fx", "tocha.jit", "tocha.export"), ("tocha-autograd", "tocha-nn")),
    ("onnx", "tocha-onnx", ("tocha.onnx",), ("tocha-fx",)),
    (
        "compiler",
        "tocha-compiler",
        ("tocha.compiler", "tocha._dynamo", "tocha._inductor"),
        ("tocha-fx",),
    ),
    ("mp", "tocha-mp", ("tocha.multiprocessing",), ("tocha-core",)),
    ("utils", "tocha-utils", ("tocha.utils",), ("tocha-core", "tocha-mp")),
    (
        "distributed",
        "tocha-distributed",
        ("tocha.distributed", "tocha.futures"),
        ("tocha-core", "tocha-autograd", "tocha-nn", "tocha-optim"),
    ),
    ("cuda", "tocha-cuda", ("tocha_cuda",), ("tocha-core",)),
    ("onednn", "tocha-onednn", ("tocha_onednn",), ("tocha-core",)),
]
FOLDERS = [folder for folder, *_ in PACKAGES]
OWNER = {module: dist for _, dist, modules, _ in PACKAGES for module in modules}
# The subpackages other distributions add to the tocha namespace.
SUBPACKAGES = {module.partition(".")[2]: dist for module, dist in OWNER.items() if "." in module}


def run_python(code: str, env: dict | None = None) -> str:
    """Run `code` in a fresh interpreter; its stdout, or a failure showing its stderr."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def allowed(dist: str) -> set[str]:
    """`dist` and every distribution it depends on, directly or not."""
    deps = {d: set(ds) for _, d, _, ds in PACKAGES}
    seen, todo = set(), [dist]
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(deps[d])
    return seen


def owner(module: str) -> str | None:
    """The distribution that ships `module` (longest matching prefix); None if not tocha's."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        dist = OWNER.get(".".join(parts[:n]))
        if dist is not None:
            return dist
    return None


# -- import tocha stays light ---------------------------------------------------------------
def test_import_tocha_loads_no_ml_dtypes_nor_metadata():
    out = run_python(
        "import sys\n"
        "before = set(sys.modules)\n"
        "import tocha\n"
        "print(sorted(m for m in set(sys.modules) - before\n"
        "             if m.split('.')[0] == 'ml_dtypes' or m == 'importlib.metadata'))\n"
    )
    assert out.strip() == "[]"


def test_bfloat16_loads_ml_dtypes_on_first_use():
    pytest.importorskip("ml_dtypes")
    out = run_python(
        "import sys, tocha\n"
        "print('ml_dtypes' in sys.modules)\n"
        "print(tocha.zeros(2, dtype=tocha.bfloat16).dtype, 'ml_dtypes' in sys.modules)\n"
    )
    assert out.split() == ["False", "tocha.bfloat16", "True"]


# -- one namespace, many distributions ------------------------------------------------------
def test_namespace_path_is_extended(tmp_path):
    sub = tmp_path / "tocha" / "extra_sub"
    sub.mkdir(parents=True)
    (sub / "__init__.py").write_text("VALUE = 42\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), *sys.path]))
    out = run_python(
        "import tocha, tocha.extra_sub\n"
        f"print(tocha.extra_sub.VALUE, {str(tmp_path / 'tocha')!r} in tocha.__path__)\n",
        env,
    )
    assert out.split() == ["42", "True"]


@pytest.mark.parametrize(("name", "dist"), sorted(SUBPACKAGES.items()))
def test_missing_subpackage_names_its_distribution(name, dist):
    # Only tocha-core's folder stays on tocha.__path__: as if nothing else were installed.
    out = run_python(
        "import os, tocha\n"
        "tocha.__path__[:] = [os.path.dirname(tocha.__file__)]\n"
        "try:\n"
        f"    tocha.{name}\n"
        "except ImportError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
    )
    assert out.startswith("ModuleNotFoundError ")
    folder = next(folder for folder, d, _, _ in PACKAGES if d == dist)
    assert f"pip install {dist} (from a checkout: pip install -e packages/{folder})" in out


def test_core_knows_each_distribution_and_its_folder():
    # The one table tocha-core reads to name a missing distribution agrees with this one.
    from tocha import _missing

    assert _missing.FOLDERS == {dist: folder for folder, dist, _, _ in PACKAGES}
    others = {name: dist for name, dist in tocha._SUBPACKAGES.items() if dist != "tocha-core"}
    assert others == SUBPACKAGES
    assert _missing.BACKENDS == {"cuda": OWNER["tocha_cuda"]}


def test_requires_grad_without_autograd_names_tocha_autograd():
    out = run_python(
        "import os, tocha\n"
        "tocha.__path__[:] = [os.path.dirname(tocha.__file__)]\n"
        "try:\n"
        "    tocha.zeros(2, requires_grad=True)\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    assert "tocha-autograd" in out


def test_unknown_attribute_raises_attribute_error():
    with pytest.raises(AttributeError, match="module 'tocha' has no attribute 'no_such_thing'"):
        tocha.no_such_thing  # noqa: B018


# -- the dependency order -------------------------------------------------------------------
def test_table_covers_every_package():
    folders = sorted(p.name for p in (ROOT / "packages").iterdir() if p.is_dir())
    assert set(folders) <= set(FOLDERS), f"packages missing from the table: {folders}"


def test_only_tocha_core_ships_tocha_init():
    for folder in FOLDERS[1:]:
        assert not (ROOT / "packages" / folder / "src/tocha/__init__.py").exists(), folder


def test_each_pyproject_names_its_distribution_and_siblings():
    tomllib = pytest.importorskip("tomllib")
    for folder, dist, _, deps in PACKAGES:
        path = ROOT / "packages" / folder / "pyproject.toml"
        if not path.exists():
            continue
        project = tomllib.loads(path.read_text())["project"]
        assert project["name"] == dist
        declared = {
            re.match(r"[A-Za-z0-9._-]+", req).group(0).lower().replace("_", "-")
            for req in project.get("dependencies", [])
        }
        missing = set(deps) - declared
        assert not missing, f"{dist} does not declare its dependencies {missing}"


def _is_optional(node: ast.AST, parents: dict) -> bool:
    """Whether an import only runs when typing, or sits in a ``try`` that handles its
    ImportError (the code then works without the imported package)."""
    child, node = node, parents.get(node)
    while node is not None:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
        if isinstance(node, ast.Try) and child in node.body:
            names = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
            if any("ImportError" in n or "ModuleNotFoundError" in n for n in names):
                return True
        child, node = node, parents.get(node)
    return False


def imported_modules(path: Path, module: str):
    """(line, imported module) of every import in a file whose dotted name is `module`."""
    tree = ast.parse(path.read_text(), str(path))
    parents = {c: p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if _is_optional(node, parents):
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def test_packages_import_only_earlier_packages():
    problems = []
    for folder, dist, _, _ in PACKAGES:
        src = ROOT / "packages" / folder / "src"
        for path in sorted(src.rglob("*.py")):
            rel = path.relative_to(src).with_suffix("")
            module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
            for line, imported in imported_modules(path, module):
                target = owner(imported)
                if target is not None and target not in allowed(dist):
                    problems.append(
                        f"{path.relative_to(ROOT)}:{line}: {dist} imports {imported} from {target}"
                    )
    assert not problems, "\n".join(problems)


def private_of_another(imported: str, dist: str) -> bool:
    """Whether `imported` reaches into a private module of a distribution other than `dist`
    (a dotted part after the owner's module that starts with one underscore)."""
    target = owner(imported)
    if target is None or target == dist:
        return False
    return any(part.startswith("_") and not part.startswith("__") for part in imported.split("."))


def dotted_attributes(path: Path):
    """(line, ``tocha.a.b``) of every attribute chain on the name ``tocha`` in a file."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute):
            parts, inner = [], node
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id == "tocha":
                yield node.lineno, ".".join(["tocha", *reversed(parts)])


def test_packages_use_only_published_names_of_each_other():
    """Packages meet through published APIs (``tocha``, ``tocha.library``,
    ``tocha.autograd.derivatives``...), never another distribution's underscore modules."""
    problems = []
    for folder, dist, _, _ in PACKAGES:
        src = ROOT / "packages" / folder / "src"
        for path in sorted(src.rglob("*.py")):
            rel = path.relative_to(src).with_suffix("")
            module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
            uses = [*imported_modules(path, module), *dotted_attributes(path)]
            for line, name in uses:
                if private_of_another(name, dist):
                    problems.append(f"{path.relative_to(ROOT)}:{line}: {dist} uses {name}")
    assert not problems, "\n".join(problems)


def test_private_use_check_sees_a_violation():
    assert private_of_another("tocha._tensor.Tensor", "tocha-nn")
    assert private_of_another("tocha.autograd._formulas.d", "tocha-nn")
    assert not private_of_another("tocha.autograd._formulas.d", "tocha-autograd")
    assert not private_of_another("tocha.library.defop", "tocha-nn")
    assert not private_of_another("tocha.Tensor.__init__", "tocha-nn")


def test_dependency_check_sees_a_violation(tmp_path):
    bad = tmp_path / "tocha" / "_bad.py"
    bad.parent.mkdir()
    bad.write_text("from . import nn\nfrom .nn import functional\nimport tocha_cuda\n")
    found = [m for _, m in imported_modules(bad, "tocha._bad")]
    assert found == ["tocha.nn", "tocha.nn.functional", "tocha_cuda"]
    assert {owner(m) for m in found} == {"tocha-nn", "tocha-cuda"}
    assert "tocha-nn" not in allowed("tocha-core")
    assert allowed("tocha-nn") == {"tocha-nn", "tocha-autograd", "tocha-core"}
