"""The baselines and ablations the benchmark compares with the engine's methods (`paper`,
`dependency_guided`: repair/methods/ours.py). Each is reached through the method registry
(repair/methods/__init__.py): pyproject.toml declares them under the "provrepair.methods"
entry points, so `provrepair repair --method NAME` and `provrepair bench run` find them, and
`provrepair plugins` lists them with their source. Same interface, same executor
(docs/method.md, "Baselines and ablations").

    no_support_check        ablation: P_sup = ∅ (ablations.py)
    no_rollback_planner     ablation (ablations.py)
    no_selective_replay     ablation (ablations.py)
    no_repair               baseline (no_repair.py)
    full_reset              baseline (full_reset.py)
    delete_retrieved        baseline (delete_retrieved.py)
    memaudit                baseline, no oracle data (memaudit.py)
    memaudit_oracle         baseline as the paper ran it: ORACLE-ASSISTED (memaudit.py)
    llm_judge               baseline, needs --reasoner openai (llm_judge.py)
    agenttrace              baseline (agenttrace.py)
    replay_everything       the benchmark's floor (replay_everything.py)
    dependency_guided_echo  ours with the echo sweep acting (replay_everything.py)
"""
