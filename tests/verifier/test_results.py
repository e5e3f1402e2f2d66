"""A result's ``details`` are typed per engine (``verifier.results.Details``: the SMT layer's, check's, audit's):
every key the code writes or reads is declared by one of them, so the reports and the JSON read documented
keys only."""
from __future__ import annotations

import ast
import os

from verifier.results import DETAIL_KINDS

from tests.helpers import ROOT

DECLARED = {k for kind in DETAIL_KINDS for k in kind.__annotations__}


def _is_details(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "details") or \
        (isinstance(node, ast.Name) and node.id == "details")


def _keys(tree: ast.AST) -> set[str]:
    """The keys of ``details`` written or read in ``tree``: ``details["k"]``, ``details.get("k")``,
    ``details.update(k=...)`` / ``update({"k": ...})``, ``details={"k": ...}`` and ``x.details = dict(..., k=...)``."""
    out: set[str] = set()

    def literal(d: ast.AST) -> None:
        if isinstance(d, ast.Dict):
            out.update(k.value for k in d.keys if isinstance(k, ast.Constant) and isinstance(k.value, str))
        elif isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "dict":
            out.update(kw.arg for kw in d.keywords if kw.arg)

    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_details(node.value) and isinstance(node.slice, ast.Constant):
            out.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_details(node.func.value):
            if node.func.attr in ("get", "setdefault", "pop") and node.args and isinstance(node.args[0], ast.Constant):
                out.add(node.args[0].value)
            elif node.func.attr == "update":
                out.update(kw.arg for kw in node.keywords if kw.arg)
                for a in node.args:
                    literal(a)
        elif isinstance(node, ast.keyword) and node.arg == "details":
            literal(node.value)
        elif isinstance(node, ast.Assign) and any(_is_details(t) for t in node.targets):
            literal(node.value)
    return out


def _source_keys() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for pkg in ("verifier", "mechverify"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, "src", pkg)):
            for f in files:
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    with open(path, encoding="utf-8") as fh:
                        keys = _keys(ast.parse(fh.read(), path))
                    if keys:
                        found[os.path.relpath(path, ROOT)] = keys
    return found


def test_every_details_key_is_declared_by_an_engine_type():
    found = _source_keys()
    assert sum(len(k) for k in found.values()) >= 30  # the scan sees the SMT layer, check and audit
    undeclared = {path: sorted(keys - DECLARED) for path, keys in found.items() if keys - DECLARED}
    assert not undeclared, f"details keys no Details type declares: {undeclared}"


def test_the_details_check_can_fail():
    planted = ast.parse('r.details["free_text"] = 1\nres.details.update(cases=1, whatever=2)\n'
                        'Result("m", "p", "v", details={"covered_by_claim": True, "nope": 0})\n')
    assert _keys(planted) - DECLARED == {"free_text", "whatever", "nope"}
