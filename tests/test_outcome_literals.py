"""Outcomes are decided and read only through ``needle_lib.contract.outcome`` (issue 33).

A fold, a page or a run file that compares a case's outcome with ``"passed"`` (or assigns
``"skipped"`` to one) re-decides what the contract already decided, and drifts from it the
day the contract changes (a rescore once called a case FAILED that the live run SKIPPED).
This scan fails on any such literal outside ``needle_lib/contract/``: use ``Outcome`` and
its predicates (``is_scored``, ``is_skipped``, ``is_answered``, ``pass_fail`` …) instead.

What counts as an outcome literal: one of the four outcome strings
- compared (``==``, ``!=``, ``in``, ``not in``) with an expression that mentions ``outcome``;
- assigned to a name, attribute or key that mentions ``outcome``;
- the value of an ``"outcome"`` key in a dict display, or of an ``outcome=`` keyword.
The same strings elsewhere (a summary's ``"skipped"`` count, an engine check's ``"failed"``
status, an HTTP body's ``"error"``) are other vocabularies and are left alone.
"""

from __future__ import annotations

import ast
from pathlib import Path

from needle_lib.contract.outcome import Outcome

PACKAGE = Path(__file__).resolve().parent.parent / "needle_lib"
CONTRACT = PACKAGE / "contract"
OUTCOME_STRINGS = frozenset(o.value for o in Outcome)


def _literals(node: ast.AST) -> list[ast.Constant]:
    """The outcome strings ``node`` holds (itself, or inside a tuple, ternary …)."""
    return [n for n in ast.walk(node)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value in OUTCOME_STRINGS]


def _mentions_outcome(node: ast.AST) -> bool:
    return "outcome" in ast.unparse(node).lower()


def outcome_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, snippet) of each outcome literal in ``tree`` (see the module docstring)."""
    found: list[tuple[int, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for operand in operands:
                others = [o for o in operands if o is not operand]
                if _literals(operand) and any(_mentions_outcome(o) for o in others):
                    found.append((node.lineno, node))
                    break
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if (node.value is not None and _literals(node.value)
                    and any(_mentions_outcome(t) for t in targets)):
                found.append((node.lineno, node))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (isinstance(key, ast.Constant) and key.value == "outcome"
                        and _literals(value)):
                    found.append((value.lineno, value))
        elif (isinstance(node, ast.keyword) and node.arg is not None
              and "outcome" in node.arg and _literals(node.value)):
            found.append((node.value.lineno, node.value))
    return sorted({(line, ast.unparse(node)[:80]) for line, node in found})


def scan(root: Path = PACKAGE) -> list[str]:
    hits = []
    for path in sorted(root.rglob("*.py")):
        if CONTRACT in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        hits += [f"{path.relative_to(root.parent)}:{line}: {snippet}"
                 for line, snippet in outcome_literals(tree)]
    return hits


def test_no_outcome_literals_outside_the_contract() -> None:
    hits = scan()
    assert not hits, ("outcome string literals outside needle_lib/contract/ (use Outcome and "
                      "its predicates from needle_lib.contract.outcome):\n" + "\n".join(hits))


def test_the_scan_finds_each_kind_of_literal() -> None:
    """The scan is not vacuous: each form it looks for is found, other vocabularies are not."""
    source = '''
a = case.get("outcome") in ("passed", "failed")
b = case["outcome"] != "skipped"
case["outcome"] = "error"
SCORED_OUTCOMES = ("passed", "failed")
d = {**base, "outcome": "passed" if rank else "failed"}
e = make(outcome="skipped")
f = "error" == record.outcome
summary = {"skipped": counts.skipped, "passed": 3}
check = EngineCheck(name, "failed")
projection_ok = projection.outcome == "evergreen"
status = "error" if bad else "ok"
'''
    lines = [line for line, _ in outcome_literals(ast.parse(source))]
    assert lines == [2, 3, 4, 5, 6, 7, 8]


def test_the_contract_still_writes_the_same_strings() -> None:
    """Files on disk keep ``"passed"`` …: the enum is a ``str`` whose value is the string."""
    import json

    assert json.dumps([o for o in Outcome]) == '["passed", "failed", "error", "skipped"]'
    assert {"outcome": Outcome.SKIPPED} == {"outcome": "skipped"}
