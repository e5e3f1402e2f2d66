"""The layers (docs/architecture.md): every import -- module-level or inside a function -- goes down or
sideways, never up; and no two modules import each other, at module level or inside functions (no import
cycle).

    mechverify  <-  mechanisms  <-  simulation  (used by the verifier's `simulate` command only)
                         ^
    verifier: properties (+ exact)  <-  claims, results (the vocabulary every engine returns)
              <-  engines (+ minimize, z3)  <-  store  <-  run, check, audit, seeds, report  <-  cli
"""
from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src")  # the importable packages (a src layout: a clone never shadows the install)
PACKAGES = ("mechverify", "mechanisms", "simulation", "verifier")

# (module prefix, rank): a module may import modules of rank <= its own; the longest prefix decides
RANKS = [
    ("mechverify", 0),
    ("mechanisms", 1),
    ("simulation", 2),
    ("verifier.files", 3),  # atomic file writing: the store, campaigns and reports write through it
    ("verifier.properties", 3), ("verifier.exact", 3),
    ("verifier.claims", 3.5), ("verifier.results", 3.5),
    ("verifier.engines", 4),
    ("verifier.store", 5),
    ("verifier", 6),
    ("verifier.cli", 7), ("verifier.__main__", 7),
    # the public facade (docs/architecture.md): `from mechverify import run, check, ...`, the strategies, the
    # pytest helper and plugin sit ABOVE everything they re-export; the core modules import none of them
    ("mechverify.api", 8), ("mechverify.strategies", 8), ("mechverify.testing", 8), ("mechverify.pytest_plugin", 8),
]
# the one upward import allowed: the package's lazy `__getattr__` reaching its own facade (function level)
LAZY_FACADE = {("mechverify", "mechverify.api")}
# the simulation layer (rank 2: the simulator runs mechanisms through the model's stepping) is used by the
# command that runs it and by the orchestration that runs simulations as campaign cells (verifier.simsweep:
# the sweep's worker function), and by nothing else of the verifier: properties, engines, the store and the
# reports do not depend on it (a report renders the record it is handed)
FORBIDDEN = [("verifier", "simulation"), ("mechanisms", "simulation")]
FORBIDDEN_EXCEPT = {("verifier.cli.simulate", "simulation"), ("verifier.simsweep", "simulation")}


def _rank(module: str) -> int:
    best, rank = -1, None
    for prefix, r in RANKS:
        if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
            best, rank = len(prefix), r
    assert rank is not None, module
    return rank


def _modules(src: str = SRC, packages: tuple = PACKAGES):
    for pkg in packages:
        base = os.path.join(src, pkg)
        assert os.path.isdir(base), base
        for dirpath, _, files in os.walk(base):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    rel = os.path.relpath(path, src)[:-3].replace(os.sep, ".")
                    name = rel[: -len(".__init__")] if rel.endswith(".__init__") else rel
                    yield name, path, f == "__init__.py"


def _imports(name: str, path: str, is_pkg: bool):
    """(imported module, module level?) for every import statement of the file; ``from pkg import x`` names
    ``pkg.x`` (resolved to ``pkg`` by :func:`_graph` when ``x`` is not a module of ``pkg``)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    top = {id(n) for n in tree.body}
    package = name if is_pkg else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, id(node) in top
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                mod = f"{base}.{node.module}" if node.module else base
            else:
                mod = node.module or ""
            for a in node.names:
                yield f"{mod}.{a.name}", id(node) in top


def _ours(mod: str) -> bool:
    return mod.split(".")[0] in PACKAGES


def test_no_import_goes_up_a_layer():
    bad = []
    for name, path, is_pkg in _modules():
        for mod, top in _imports(name, path, is_pkg):
            if not _ours(mod):
                continue
            if not top and (name, mod) in LAZY_FACADE:
                continue
            if _rank(mod) > _rank(name):
                bad.append(f"{name} imports {mod}")
            for lo, hi in FORBIDDEN:
                if (name, hi) in FORBIDDEN_EXCEPT:
                    continue
                if (name == lo or name.startswith(lo + ".")) and (mod == hi or mod.startswith(hi + ".")):
                    bad.append(f"{name} imports {mod}")
    assert not bad, "\n".join(bad)


def _graph(module_level_only: bool, src: str = SRC, packages: tuple = PACKAGES) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports (at module level only, or anywhere: inside functions too).
    Every edge counts: a package importing its own submodules, and the package's lazy facade (its
    ``__getattr__`` importing the Python API) too."""
    graph: dict[str, set[str]] = {}
    mods = list(_modules(src, packages))
    names = {n for n, _, _ in mods}
    for name, path, is_pkg in mods:
        deps = set()
        for mod, top in _imports(name, path, is_pkg):
            if (top or not module_level_only) and mod.split(".")[0] in packages:
                while mod not in names and "." in mod:  # `from pkg.mod import name`: the module
                    mod = mod.rpartition(".")[0]
                if mod in names and mod != name:
                    deps.add(mod)
        graph[name] = deps
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    """One line per import cycle found (depth first), e.g. ``a -> b -> a``."""
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[str] = []

    def visit(n: str) -> None:
        state[n] = 1
        stack.append(n)
        for d in sorted(graph.get(n, ())):
            if state.get(d) == 1:
                found.append(" -> ".join(stack[stack.index(d):] + [d]))
            elif d not in state:
                visit(d)
        stack.pop()
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n)
    return found


# cycles through function-level imports the owners of those modules still have to break (each a set of
# modules); an entry here is a debt, not a licence: the test fails on any other cycle
KNOWN_FUNCTION_LEVEL_CYCLES: list[set[str]] = []  # none: keep it that way


def test_no_module_level_import_cycle():
    cycles = _cycles(_graph(module_level_only=True))
    assert not cycles, "import cycle: " + "; ".join(cycles)


def test_no_import_cycle_through_function_level_imports():
    """An import inside a function is still a dependency: two modules that import each other, at any
    level, are one module in two files (move what both need into a lower module)."""
    cycles = [c for c in _cycles(_graph(module_level_only=False))
              if set(c.split(" -> ")) not in KNOWN_FUNCTION_LEVEL_CYCLES]
    assert not cycles, "import cycle: " + "; ".join(cycles)


def test_the_cycle_check_can_fail():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a -> b -> c -> a"]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_a_planted_facade_cycle_is_found(tmp_path):
    """The shape of the cycle this test once missed: a package whose ``__getattr__`` lazily imports its facade,
    the facade importing a lower module, and that module importing a name from the package itself."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("VERSION = 1\n\ndef __getattr__(name):\n    from . import api\n"
                                     "    return getattr(api, name)\n")
    (pkg / "api.py").write_text("from .low import run\n")
    (pkg / "low.py").write_text("def run():\n    from pkg import VERSION\n    return VERSION\n")
    (pkg / "leaf.py").write_text("X = 1\n")
    graph = _graph(module_level_only=False, src=str(tmp_path), packages=("pkg",))
    assert graph == {"pkg": {"pkg.api"}, "pkg.api": {"pkg.low"}, "pkg.low": {"pkg"}, "pkg.leaf": set()}
    assert _cycles(graph) == ["pkg -> pkg.api -> pkg.low -> pkg"]
    (pkg / "low.py").write_text("from pkg.leaf import X\n")  # importing a leaf module instead: no cycle
    assert _cycles(_graph(module_level_only=False, src=str(tmp_path), packages=("pkg",))) == []


def test_the_layer_check_can_fail():
    # the rank table really orders the layers it names
    assert _rank("mechverify.model") < _rank("mechanisms.core.registry") < _rank("verifier.properties.sp") \
        < _rank("verifier.engines.search") < _rank("verifier.store") < _rank("verifier.run") < _rank("verifier.cli.main") \
        < _rank("mechverify.api")
    assert _rank("mechverify.declare") == _rank("mechverify") == 0  # the decorator is core: metadata only


#: where the name test looks: the engines and everything that orchestrates, prints or fronts them
NAME_FREE = [os.path.join(SRC, *p.split("/")) for p in (
    "verifier/engines", "verifier/run.py", "verifier/check.py", "verifier/audit.py", "verifier/rates.py",
    "verifier/campaign.py", "verifier/cell.py", "verifier/record.py", "verifier/planning.py", "verifier/config.py",
    "verifier/cli", "verifier/report", "mechverify/api.py", "mechverify/testing.py")]


def _name_literals(tree: ast.AST, names: set[str]) -> list[tuple[int, str]]:
    """``(line, literal)`` of every string constant in ``tree`` that is one of ``names`` -- except docstrings,
    the fixed parts of f-strings (text, not values), the member definitions of an ``Enum`` (where a vocabulary
    is written, once), the CLI's own vocabulary: a command's name (the first argument of ``command(...)``)
    and the module-level ``NAMES`` / ``COMMAND_MODULES`` tables that list the commands, and a module's
    ``__all__`` (Python names: the API's ``order`` function is not the ``order`` property)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
        elif isinstance(node, ast.ClassDef) and any(getattr(b, "id", getattr(b, "attr", "")).endswith("Enum")
                                                    for b in node.bases):
            skip.update(id(n) for stmt in node.body if isinstance(stmt, ast.Assign) for n in ast.walk(stmt.value))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "command" and node.args:
            skip.add(id(node.args[0]))
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", "") in ("NAMES", "COMMAND_MODULES", "__all__")
                                                  for t in node.targets):
            skip.update(id(n) for n in ast.walk(node.value))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
            and id(node) not in skip]


def _registered_names() -> set[str]:
    from mechanisms.core.registry import all_mechanisms
    from verifier.properties import PROPERTIES
    from verifier.results import Verdict

    return set(PROPERTIES) | {m.name for m in all_mechanisms()} | {v.value for v in Verdict}


def _python_files(path: str):
    if path.endswith(".py"):
        yield path
        return
    for dirpath, _, files in os.walk(path):
        for f in sorted(files):
            if f.endswith(".py"):
                yield os.path.join(dirpath, f)


def test_no_property_mechanism_or_verdict_name_in_generic_code():
    # the engines, the orchestration, the CLI, the reports and the Python API loop over facets (Property.hints,
    # Property.z3, Property.mechanism_failure, Mechanism.z3, ...) and compare Verdict members; a property,
    # mechanism or verdict name in them is a switch on a name (docs/architecture.md).  Names exist on disk, on
    # the command line and in campaign tasks; they are resolved at that boundary, once.
    names = _registered_names()
    bad = []
    for top in NAME_FREE:
        for path in _python_files(top):
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), path)
            bad += [f"{os.path.relpath(path, ROOT)}:{line}: {lit!r}" for line, lit in _name_literals(tree, names)]
    assert not bad, f"{len(bad)} property/mechanism/verdict name literal(s) in generic code:\n" + "\n".join(bad)


def test_the_name_check_can_fail():
    tree = ast.parse('"""sp in a docstring"""\nSPECS = {"drf": 1}\nif p == "sp": pass\nx = f"ef{1}"\n'
                     'class V(str, Enum):\n    X = "violated"\nif v == "violated": pass\n'
                     '@command("order", "help")\ndef f(): pass\n')
    assert _name_literals(tree, {"sp", "drf", "ef", "violated", "order"}) == [(2, "drf"), (3, "sp"), (7, "violated")]


def _documented_folders() -> tuple[set[str], str]:
    """The folders docs/architecture.md's tree lists (its lines that start with a path), and the tree's text."""
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as fh:
        text = fh.read()
    tree = text.split("## The tree, one line per folder", 1)[1].split("```")[1]
    folders = set()
    for line in tree.splitlines():
        head = line.split("  ", 1)[0].strip()
        for part in head.split(", "):
            if part.endswith("/"):
                folders.add(part.rstrip("/"))
    return folders, tree


def test_the_architecture_doc_lists_every_package_and_only_real_folders():
    documented, tree = _documented_folders()
    missing = [f for f in documented if not os.path.isdir(os.path.join(ROOT, f))]
    assert not missing, f"docs/architecture.md lists folders that do not exist: {missing}"
    packages = set()
    for dirpath, _, files in os.walk(SRC):
        rel = os.path.relpath(dirpath, ROOT).replace(os.sep, "/")
        if "__init__.py" in files and rel.count("/") <= 3:
            packages.add(rel)
    # a folder is described by its own line, named on its parent's (volcano/ on the ports/ line) or by its
    # children's lines (src/mechanisms/ by core/, paper/ and ports/)
    undescribed = [p for p in packages if p not in documented
                   and not (p.rpartition("/")[0] in documented and p.rpartition("/")[2] + "/" in tree)
                   and not any(d.startswith(p + "/") for d in documented)]
    assert not undescribed, f"packages docs/architecture.md does not describe: {sorted(undescribed)}"
