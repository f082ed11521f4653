"""Over Bolt, a server that dies or a connection lost mid-command (tests/bolt_proxy.py cuts
the connection to the real test server): a statement is retried for at most
PROVREPAIR_CONNECT_TIMEOUT, not the driver's 30 s per statement, and a write whose commit
went unanswered is its own one-line error saying it may have landed (it did), with the
command safe to re-run saying so."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from provrepair.provenance.errors import OutcomeUnknown, StoreUnavailable
from provrepair.provenance.ingest import list_tasks
from provrepair.provenance.readback import read_case
from provrepair.provenance.store.base import GraphStore
from provrepair.provenance.store.embedded import ServerInfo
from provrepair.provenance.store.neo4j import Neo4jStore
from provrepair.provenance.validate import parse_case
from tests.bolt_proxy import BoltProxy
from tests.bolt_server import BoltServer
from tests.conftest import EXAMPLES, Cli

pytestmark = pytest.mark.neo4j
TIMEOUT = 2.0  # PROVREPAIR_CONNECT_TIMEOUT of these tests, seconds
LOCK = {"task_key": "~faults", "owner": "me", "pid": 1, "host": "here", "now": 1,
        "purpose": "test", "stale_owner": ""}


@pytest.fixture
def proxy(bolt_proxy: BoltProxy) -> BoltProxy:
    return bolt_proxy


@pytest.fixture
def proxied(proxy: BoltProxy, bolt_server: BoltServer, bolt_database: str,
            neo4j_store: GraphStore) -> Iterator[Neo4jStore]:
    """A store reaching the test database through the proxy (`neo4j_store`: directly)."""
    store = Neo4jStore(proxy.uri, bolt_server.user, bolt_server.password,
                       database=bolt_database, connect_timeout=TIMEOUT)
    yield store
    store.close()


def test_a_server_dying_mid_command_is_reported_within_the_connect_timeout(
        proxy: BoltProxy, proxied: Neo4jStore) -> None:
    assert proxied.run("get_task_lock", {"task_key": "~faults"}) == []
    proxy.die_on_next_run()
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="cannot reach the graph store") as info:
        proxied.run("get_task_lock", {"task_key": "~faults"})
    elapsed = time.monotonic() - started
    assert not isinstance(info.value, OutcomeUnknown)
    assert elapsed < 2 * TIMEOUT, elapsed  # retried until the timeout, not for 30 s


def test_an_unanswered_commit_may_have_landed_and_says_so(
        proxy: BoltProxy, proxied: Neo4jStore, neo4j_store: GraphStore) -> None:
    proxy.drop_after_commit()
    with pytest.raises(OutcomeUnknown, match=r"acquire_task_lock\.cypher was committing: the "
                                              r"write may have landed"):
        proxied.run("acquire_task_lock", LOCK)
    assert proxy.commits_dropped == 1
    assert neo4j_store.run("get_task_lock", {"task_key": "~faults"})[0]["holder"] == "me"
    proxied.run("acquire_task_lock", LOCK)  # run again, it converges: the same lock
    assert len(neo4j_store.run("get_task_lock", {"task_key": "~faults"})) == 1


def test_the_cli_names_an_unknown_outcome_and_a_rerun_converges(
        proxy: BoltProxy, bolt_server: BoltServer, bolt_database: str,
        neo4j_store: GraphStore, server_home: Path, server: ServerInfo, graph_name: str) -> None:
    case = EXAMPLES / "shopping_poisoned_price.json"
    cli = Cli(server_home, graph_name)
    cli.env.update(PROVREPAIR_URI=proxy.uri, PROVREPAIR_USER=bolt_server.user,
                   PROVREPAIR_PASSWORD=bolt_server.password, PROVREPAIR_DATABASE=bolt_database,
                   PROVREPAIR_CONNECT_TIMEOUT=str(TIMEOUT))
    proxy.drop_after_commit()
    done = cli("ingest", str(case))
    assert done.returncode == 2, (done.stdout, done.stderr)
    err = done.stderr.strip()
    assert err.startswith("OutcomeUnknown: ") and "\n" not in err and "Traceback" not in err
    assert "may have landed" in err and "`provrepair ingest` is safe to re-run" in err
    assert cli("ingest", str(case)).returncode == 0
    assert read_case(neo4j_store, "shopping_task_014") == parse_case(json.loads(case.read_text()))
    assert [t["task_id"] for t in list_tasks(neo4j_store)] == ["shopping_task_014"]
