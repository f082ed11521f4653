"""Repair methods behind one interface: each makes a rollback plan for a task; the same
executor replays it (docs/method.md, "Baselines and ablations: same interface, same
executor"). `METHODS` maps the CLI name (`provrepair repair --method NAME`) to the method.

    dependency_guided    ours (ours.py)
    no_support_check     ablation: P_sup = ∅ (ours.py)
    no_rollback_planner  ablation (ablations.py)
    no_selective_replay  ablation (ablations.py)
    no_repair            baseline (no_repair.py)
    full_reset           baseline (full_reset.py)
    delete_retrieved     baseline (delete_retrieved.py)
    memaudit             baseline, no oracle data (memaudit.py)
    memaudit_oracle      baseline as the paper ran it: ORACLE-ASSISTED (memaudit.py)
    llm_judge            baseline, needs --reasoner openai (llm_judge.py)
    agenttrace           baseline (agenttrace.py)
"""

from __future__ import annotations

from provrepair.provenance.errors import ConfigError
from provrepair.provenance.registry import Registry
from provrepair.repair.methods.ablations import NoRollbackPlanner, NoSelectiveReplay
from provrepair.repair.methods.agenttrace import AgentTrace
from provrepair.repair.methods.base import Decision, Method, MethodContext, MethodNotRun, Planned
from provrepair.repair.methods.delete_retrieved import DeleteRetrieved
from provrepair.repair.methods.full_reset import FullReset
from provrepair.repair.methods.llm_judge import LLMJudge
from provrepair.repair.methods.memaudit import MemAudit, MemAuditOracle
from provrepair.repair.methods.no_repair import NoRepair
from provrepair.repair.methods.ours import DependencyGuided, WithoutSupportCheck

METHODS: dict[str, Method] = {m.name: m for m in (
    DependencyGuided(), WithoutSupportCheck(), NoRollbackPlanner(), NoSelectiveReplay(),
    NoRepair(), FullReset(), DeleteRetrieved(), MemAudit(), MemAuditOracle(), LLMJudge(),
    AgentTrace())}


# methods other packages add through the "provrepair.methods" entry points (a Method class or
# factory, provenance/registry.py); the built-ins above are never replaced by one
PLUGINS: Registry[Method] = Registry("method", {})


def get_method(name: str) -> Method:
    if name in METHODS:
        return METHODS[name]
    factory = PLUGINS.find(name)
    if factory is None:
        known = ", ".join(sorted({*METHODS, *PLUGINS.names()}))
        raise ConfigError(f"unknown method {name!r}; known: {known} (plugins add names through "
                          "the 'provrepair.methods' entry points)")
    METHODS[name] = method = factory()
    return method


def register(method: Method) -> None:
    METHODS[method.name] = method


__all__ = ["METHODS", "Decision", "Method", "MethodContext", "MethodNotRun", "Planned", "get_method",
           "register"]
