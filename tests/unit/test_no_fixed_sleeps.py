"""Tests wait for conditions, never for a fixed time: every `sleep` under tests/ is the pause
of a loop that polls a condition (`while not condition(): sleep(0.05)`), except the latency
the OpenAI test double simulates on purpose."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SIMULATED = {"openai_double.py"}  # a slow endpoint, the behaviour under test


def fixed_sleeps(tree: ast.AST) -> list[int]:
    """Lines of `sleep(...)` calls outside any `while` loop."""
    found: list[int] = []

    def visit(node: ast.AST, polling: bool) -> None:
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "sleep" and not polling:
                found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, polling or isinstance(node, ast.While))

    visit(tree, False)
    return found


def test_no_test_sleeps_a_fixed_time() -> None:
    offenders = [f"{path.relative_to(TESTS)}:{line}"
                 for path in sorted(TESTS.rglob("*.py")) if path.name not in SIMULATED
                 for line in fixed_sleeps(ast.parse(path.read_text(encoding="utf-8")))]
    assert offenders == []


def test_a_fixed_sleep_is_found() -> None:
    tree = ast.parse("import time\ntime.sleep(1.0)\nwhile not ready():\n    time.sleep(0.05)\n")
    assert fixed_sleeps(tree) == [2]
