"""The transfer set (the paper's §4.4, Table 3): 50 multi-fault cases built from τ²-bench's
published retail simulations, committed in `cases/` with their source and license.

    tau2.py      read the source (one simulation per JSON line) into trajectories
    session.py   a trajectory → a session of the benchmark's agent runtime (turns, notes, question)
    poison.py    k notes on the final answer's path poisoned (the controlled generator's fault)
    build.py     select, poison, label, record, write (`bench/transfer.py build`)
    run.py       every method on the committed cases over seeds → the Table 3 form
                 (`run_transfer`, `bench/transfer.py run`)

docs/benchmark.md, "The transfer set", says how poisoning and gold are derived and why the
mapping is fair.
"""
