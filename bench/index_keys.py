"""What integer-indexed planner structures would save: one lookup, by uid string or by index.

    .venv/bin/python bench/index_keys.py [--nodes 2000]

The planner keys its caches by node uid (a string whose hash Python computes once and keeps);
issue 14 suggested compact integer-indexed structures instead. This times one lookup of each
kind side by side, in one process, over the uids of a 1k-region plan's nodes: a dict keyed by
the uid strings, a dict keyed by ints, and a list indexed by int (min of 5 repeats).
"""

from __future__ import annotations

import argparse
import timeit


def lookups_ns(nodes: int) -> dict[str, float]:
    uids = [f"~target-r1000/step-{i:06d}" for i in range(nodes)]
    indexes = list(range(nodes))
    by_uid = {uid: i for i, uid in enumerate(uids)}
    by_int = dict(enumerate(uids))
    by_index = list(uids)

    def uid_dict() -> None:
        for uid in uids:
            by_uid[uid]

    def int_dict() -> None:
        for i in indexes:
            by_int[i]

    def int_list() -> None:
        for i in indexes:
            by_index[i]

    number = 200
    return {f.__name__: min(timeit.repeat(f, number=number, repeat=5)) / number / nodes * 1e9
            for f in (uid_dict, int_dict, int_list)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=2000)
    args = parser.parse_args()
    times = lookups_ns(args.nodes)
    for name, ns in times.items():
        print(f"{name:9} {ns:5.1f} ns per lookup (×{ns / times['uid_dict']:.2f} the uid dict)")


if __name__ == "__main__":
    main()
