"""The transfer set (the paper's §4.4, Table 3): 50 multi-fault cases built from τ²-bench's
published retail simulations, committed in `cases/` with the source lines they come from,
the source and its license; `bench generate|sweep --set transfer` (this package is that case
set: caseset.py).

    tau2.py      read the source (one simulation per JSON line) into trajectories
    session.py   a trajectory → a session of the benchmark's agent runtime (turns, notes, question)
    poison.py    k notes on the final answer's path poisoned (the controlled generator's fault)
    build.py     select, poison, label, record, write (`bench/transfer.py build`)
    caseset.py   the case set of `bench generate|sweep --set transfer`: the cases at any seed,
                 fidelity and share from the committed source lines
    table3.py    a sweep's results in the paper's Table 3 form, its numbers beside ours

docs/benchmark.md, "The transfer set", says how poisoning and gold are derived and why the
mapping is fair.
"""

from provrepair.benchmark.transfer.caseset import (
    DEFAULTS,
    SET_NAME,
    case_count,
    generate_benchmark,
    paper_tables,
    summary_table,
)

__all__ = ["DEFAULTS", "SET_NAME", "case_count", "generate_benchmark", "paper_tables",
           "summary_table"]
