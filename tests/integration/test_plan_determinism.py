"""A plan is the same whatever the interpreter's hash seed: every id list is in trace order
with ties broken by id (a memory and the step that wrote it share timestamp and position; their
order followed set iteration, so `s_005, m_f003` became `m_f003, s_005` under another
PYTHONHASHSEED). Each seed is its own process, as a user's successive commands are."""

from __future__ import annotations

import json

from tests.conftest import EXAMPLES, Cli

TASK = "shopping_task_014"
SEEDS = ("0", "2", "5")  # before the fix, 0 and 2 gave different affected_ids orders


def test_plan_ids_do_not_depend_on_the_hash_seed(cli: Cli) -> None:
    assert cli("ingest", str(EXAMPLES / "shopping_poisoned_price.json")).returncode == 0
    plans = []
    for seed in SEEDS:
        cli.env["PYTHONHASHSEED"] = seed
        done = cli("plan", "--task", TASK, "--no-record", "--json")
        assert done.returncode == 0, done.stderr
        plans.append(json.loads(done.stdout))
    assert plans[0] == plans[1] == plans[2]
    affected = plans[0]["affected_ids"]
    assert affected.index("m_f003") == affected.index("s_005") - 1  # a tie, broken by id
