"""Domain state with one typed home each: what a repair run's status means (runs.py).

Every reader and writer asks these modules, never a string literal: a status set reaches
Cypher as a parameter (`run_params()`), so a query and the Python that reads its result
cannot disagree on what "finished" or "a committed repair" is.
"""
