"""Bad input through the real `provrepair ingest` (embedded FalkorDB, one graph per test).

A refused ingest exits 2 with exactly one `ErrorType: message` line on stderr (no
traceback) that names the file/line, task, field and id as applicable, and writes nothing
(checked with `tasks --json` where a valid case came first, else in-process: no node in the
test's graph or vault). Hostile-but-valid ids and contents are stored and read back verbatim,
edges included.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from provrepair.provenance.validate import parse_case

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shopping_poisoned_price.json"
BASE: dict[str, Any] = json.loads(EXAMPLE.read_text(encoding="utf-8"))
TID = "shopping_task_014"
LIMIT = 32 * 1024 * 1024  # PROVREPAIR_MAX_CASE_BYTES default
MiB = 1024 * 1024


def fresh(task_id: str = TID) -> dict[str, Any]:
    case = copy.deepcopy(BASE)
    if task_id != TID:
        case = rename(case, {TID: task_id})
    return case


def rename(node: Any, mapping: dict[str, str]) -> Any:
    """Replace every string equal to an old id (ids never occur inside other strings here)."""
    if isinstance(node, str):
        return mapping.get(node, node)
    if isinstance(node, list):
        return [rename(v, mapping) for v in node]
    if isinstance(node, dict):
        return {k: rename(v, mapping) for k, v in node.items()}
    return node


def line(case: dict[str, Any]) -> str:
    return json.dumps(case, ensure_ascii=False)


def write(tmp_path: Path, name: str, data: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def stored_tasks(cli: Any) -> list[dict[str, Any]]:
    result = cli("tasks", "--json")
    assert result.returncode == 0, result.stderr
    tasks: list[dict[str, Any]] = json.loads(result.stdout)
    return tasks


def assert_refused(cli: Any, result: Any, error_type: str, *needles: str,
                   check_empty: bool = True) -> str:
    """Exit 2, one `Type: message` line, each needle in it; then `tasks --json` is `[]`."""
    message = one_error_line(result, error_type, *needles)
    if check_empty:
        assert stored_tasks(cli) == []
    return message


def one_error_line(result: Any, error_type: str, *needles: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    message: str = lines[0]
    assert re.fullmatch(rf"{error_type}: \S.*", message), message
    for needle in needles:
        assert needle in message, (needle, message)
    if result.stdout:  # only with --json: the same error, as JSON, for scripts
        assert json.loads(result.stdout)["error"] == error_type
    return message


def ingest_ok(cli: Any, *paths: Path, replace: bool = False) -> str:
    args = ["ingest", *map(str, paths), *(["--replace"] if replace else [])]
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    return str(result.stdout)


def shown(cli: Any, task_id: str) -> dict[str, Any]:
    result = cli("show", "--task", task_id, "--json")
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def as_stored(raw: dict[str, Any]) -> dict[str, Any]:
    """What `show --json` must print for a case: the parsed case, defaults filled in."""
    return parse_case(copy.deepcopy(raw)).model_dump(mode="json")


@pytest.fixture
def cli(cli: Any) -> Any:
    # The size limit under test is the default one: make sure the environment sets none.
    cli.env.pop("PROVREPAIR_MAX_CASE_BYTES", None)
    return cli


@pytest.fixture
def node_count(server: Any, server_home: Path, graph_name: str) -> Iterator[Callable[[], int]]:
    """Nodes in this test's graph and its vault, asked in-process (no CLI start-up cost)."""
    from falkordb import FalkorDB

    from provrepair.provenance.store.embedded import EmbeddedServer

    db = FalkorDB(host=server.host, port=server.port,
                  password=EmbeddedServer(server_home).password())

    def count() -> int:
        existing = set(db.list_graphs())
        total = 0
        for name in (graph_name, f"{graph_name}_vault"):
            if name in existing:
                rows = db.select_graph(name).ro_query("MATCH (n) RETURN count(n)").result_set
                total += rows[0][0]
        return total

    yield count
    db.connection.close()


@pytest.fixture
def refused(cli: Any, node_count: Callable[[], int]) -> Callable[..., str]:
    """Like assert_refused, but checks 'nothing written' in-process: not one node anywhere."""
    def check(result: Any, error_type: str, *needles: str) -> str:
        message = one_error_line(result, error_type, *needles)
        assert node_count() == 0
        return message
    return check


# -- unreadable files -----------------------------------------------------------------------

def test_truncated_json(cli: Any, refused: Any, tmp_path: Path) -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    path = write(tmp_path, "cut.json", text[: len(text) // 2])
    refused(cli("ingest", str(path)), "InputError", str(path), "invalid JSON")


def test_json_with_trailing_garbage(cli: Any, refused: Any, tmp_path: Path) -> None:
    path = write(tmp_path, "two.json", line(fresh()) + "\n" + line(fresh("other")))
    refused(cli("ingest", str(path)), "InputError", str(path), "invalid JSON")


@pytest.mark.parametrize("name", ["empty.json", "empty.jsonl"])
@pytest.mark.parametrize("content", [b"", b"\n  \n\t\n"], ids=["zero-bytes", "blank"])
def test_empty_file(cli: Any, refused: Any, tmp_path: Path, name: str, content: bytes) -> None:
    path = write(tmp_path, name, content)
    refused(cli("ingest", str(path)), "InputError", str(path), "empty")


def test_top_level_not_an_object(cli: Any, refused: Any, tmp_path: Path) -> None:
    path = write(tmp_path, "list.json", "[1, 2]")
    refused(cli("ingest", str(path)), "CaseError", "(top level)",
                   "JSON object", str(path))


@pytest.mark.parametrize(("name", "where"), [("bad.json", ""), ("bad.jsonl", ":2")])
def test_not_utf8(cli: Any, refused: Any, tmp_path: Path, name: str, where: str) -> None:
    text = line(fresh("other"))
    bad = text.replace("wireless headphones", "wireless \udcff headphones", 1)
    data = bad.encode("utf-8", "surrogateescape")
    assert b"\xff" in data
    if where:
        data = line(fresh()).encode() + b"\n" + data + b"\n"
    path = write(tmp_path, name, data)
    refused(cli("ingest", str(path)), "InputError", f"{path}{where}",
                   "not UTF-8", "0xff")


def test_unknown_extension(cli: Any, refused: Any, tmp_path: Path) -> None:
    path = write(tmp_path, "case.txt", line(fresh()))
    refused(cli("ingest", str(path)), "InputError", str(path), "'.txt'")


def test_directory(cli: Any, refused: Any, tmp_path: Path) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    write(folder, "case.json", line(fresh()))
    refused(cli("ingest", str(folder)), "InputError", str(folder), "directory")


def test_missing_file(cli: Any, refused: Any, tmp_path: Path) -> None:
    path = tmp_path / "nowhere.json"
    refused(cli("ingest", str(path)), "InputError", str(path), "cannot read")


def test_missing_file_after_a_good_one(cli: Any, node_count: Any, tmp_path: Path) -> None:
    good = write(tmp_path, "good.json", line(fresh()))
    missing = tmp_path / "nowhere.jsonl"
    assert_refused(cli, cli("ingest", str(good), str(missing)), "InputError", str(missing))
    assert node_count() == 0


def test_no_paths(cli: Any, refused: Any) -> None:
    refused(cli("ingest"), "InputError", "no case files")


# -- oversized input (default limit 32 MiB, no env var) -------------------------------------

def _write_huge(path: Path, size: int) -> None:
    """A valid case whose one step content makes the line ~size bytes, written in chunks."""
    case = fresh()
    case["trace"][0]["content"] = "@@HUGE@@"
    head, tail = line(case).split("@@HUGE@@")
    chunk = b"x" * MiB
    with path.open("wb") as out:
        out.write(head.encode())
        for _ in range(size // MiB):
            out.write(chunk)
        out.write(tail.encode() + b"\n")


def test_50mb_jsonl_line_is_refused(cli: Any, tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    _write_huge(path, 50 * MiB)
    result = cli("ingest", str(path))
    assert_refused(cli, result, "InputError", f"{path}:1", str(LIMIT),
                   "PROVREPAIR_MAX_CASE_BYTES")


def test_50mb_json_file_is_refused(cli: Any, refused: Any, tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    _write_huge(path, 50 * MiB)
    result = cli("ingest", str(path))
    refused(result, "InputError", str(path), str(LIMIT),
                   "PROVREPAIR_MAX_CASE_BYTES")


# -- .jsonl: one bad line writes nothing ----------------------------------------------------

def test_jsonl_second_line_invalid_case(cli: Any, node_count: Any, tmp_path: Path) -> None:
    second = fresh("task_b")
    second["trace"][3]["used_ids"].append("ghost")
    path = write(tmp_path, "two.jsonl", line(fresh()) + "\n" + line(second) + "\n")
    assert_refused(cli, cli("ingest", str(path)), "CaseError", f"{path}:2", "'task_b'",
                   "trace[3].used_ids", "'ghost'")
    assert node_count() == 0


def test_jsonl_second_line_truncated(cli: Any, node_count: Any, tmp_path: Path) -> None:
    second = line(fresh("task_b"))
    path = write(tmp_path, "two.jsonl", line(fresh()) + "\n" + second[: len(second) // 3])
    assert_refused(cli, cli("ingest", str(path)), "InputError", f"{path}:2", "invalid JSON")
    assert node_count() == 0


def test_bad_second_file_writes_nothing(cli: Any, node_count: Any, tmp_path: Path) -> None:
    good = write(tmp_path, "good.json", line(fresh()))
    bad = fresh("task_b")
    bad["format"] = "provrepair.case/0"
    bad_path = write(tmp_path, "bad.json", line(bad))
    assert_refused(cli, cli("ingest", str(good), str(bad_path)), "CaseError", "'task_b'",
                   "format", str(bad_path))
    assert node_count() == 0


# -- 'Rejected input' rules through the CLI -------------------------------------------------

def _mutated(mutate: Any) -> dict[str, Any]:
    case = fresh()
    mutate(case)
    return case


RULES = [
    pytest.param(lambda c: c.update(format="provrepair.case/9"), ["format", "provrepair.case/9"],
                 id="unknown-format"),
    pytest.param(lambda c: c["trace"][3]["used_ids"].append("ghost"),
                 ["trace[3].used_ids", "'ghost'"], id="dangling-used_ids"),
    pytest.param(lambda c: c["trace"][10]["next_step_ids"].append("s_010"),
                 ["CHAIN cycle", "'s_010'"], id="chain-cycle"),
    pytest.param(lambda c: c["trace"][1].update(step_id="s_001"),
                 ["trace[1].step_id", "'s_001'", "duplicate"], id="duplicate-step-id"),
    pytest.param(lambda c: c["trace"][0].update(timestamp=101.0),
                 ["trace[0].timestamp", "'s_001'", "101.0"], id="float-timestamp"),
    pytest.param(lambda c: c["memory_store"][0].pop("supersedes"),
                 ["memory_store[0].supersedes", "'m_001'", "missing"], id="missing-supersedes"),
    pytest.param(lambda c: c["memory_store"][1].update(last_modified_by="m_001"),
                 ["memory_store[1].last_modified_by", "'m_001'", "a memory"],
                 id="wrong-kind-last_modified_by"),
    pytest.param(lambda c: c.update(diagnosed_faults=["s_008"]),
                 ["diagnosed_faults", "'s_008'"], id="wrong-kind-diagnosed_faults"),
    pytest.param(lambda c: c["trace"][0].update(timestamp=2**63),
                 ["trace[0].timestamp", "'s_001'"], id="timestamp-over-int64"),
    pytest.param(lambda c: c["trace"][2].update(content="before\x00after"),
                 ["trace[2].content", "NUL"], id="nul-in-content"),
    pytest.param(lambda c: c["trace"][2].update(step_id="\ud800"),
                 ["trace[2].step_id", "surrogate"], id="lone-surrogate-id"),
]


@pytest.mark.parametrize(("mutate", "needles"), RULES)
def test_rejected_rule(cli: Any, refused: Any, tmp_path: Path, mutate: Any,
                       needles: list[str]) -> None:
    # ensure_ascii: NUL and lone surrogates travel as JSON escapes in a valid UTF-8 file.
    path = write(tmp_path, "case.json", json.dumps(_mutated(mutate)))
    refused(cli("ingest", str(path)), "CaseError", f"'{TID}'", str(path), *needles)


@pytest.mark.parametrize("where", ["trust_score", "world", "tool_args"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_are_refused(cli: Any, refused: Any, tmp_path: Path, where: str,
                                        value: float) -> None:
    """Python's json writes and reads bare NaN/Infinity tokens; the format has none (they
    were stored as null inside `world` and `tool_args`)."""
    case = fresh()
    if where == "trust_score":
        case["memory_store"][1]["trust_score"] = value
    elif where == "world":
        case["world"]["threshold"] = [1, {"x": value}]
    else:
        case["trace"][0]["tool_args"] = {"limit": value}
    path = write(tmp_path, "nan.json", json.dumps(case))  # writes a bare token
    refused(cli("ingest", str(path)), "InputError", str(path), "not a JSON number")


def test_duplicate_keys_are_refused(cli: Any, refused: Any, tmp_path: Path) -> None:
    text = line(fresh())
    path = write(tmp_path, "dup.json", text[:-1] + ', "domain": "travel"}')
    refused(cli("ingest", str(path)), "InputError", str(path), "duplicate key 'domain'")


def test_duplicate_keys_in_an_event_stream_are_refused(cli: Any, tmp_path: Path) -> None:
    path = write(tmp_path, "events.jsonl",
                 '{"kind": "task", "task_id": "t", "domain": "a", "domain": "b"}\n')
    result = cli("ingest", "--follow", str(path))
    assert result.returncode == 2 and "duplicate key 'domain'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_newline_in_an_unknown_key_stays_one_line(cli: Any, refused: Any,
                                                  tmp_path: Path) -> None:
    case = fresh()
    case["trace"][0]["note\nx"] = 1
    path = write(tmp_path, "key.json", json.dumps(case))
    refused(cli("ingest", str(path)), "CaseError", f"'{TID}'", "'s_001'", "note\\nx")


def test_chain_cycle_with_a_tail(cli: Any, refused: Any, tmp_path: Path) -> None:
    """'a_tail' (smallest id) hangs after the cycle s_011 <-> s_012; the cycle is named."""
    case = fresh()
    case["trace"][10]["next_step_ids"] = ["s_011", "a_tail"]
    tail = copy.deepcopy(case["trace"][9])
    tail.update(step_id="a_tail", prev_step_ids=["s_012"], next_step_ids=[], used_ids=[],
                timestamp=207)
    case["trace"].append(tail)
    path = write(tmp_path, "tail.json", json.dumps(case))
    refused(cli("ingest", str(path)), "CaseError", f"'{TID}'", "CHAIN cycle", "'s_011'")


def test_same_task_twice_in_two_files(cli: Any, node_count: Any, tmp_path: Path) -> None:
    first = write(tmp_path, "a.json", line(fresh()))
    second = write(tmp_path, "b.json", line(fresh()))
    assert_refused(cli, cli("ingest", str(first), str(second)), "CaseError", f"'{TID}'",
                   "twice", str(first), str(second))
    assert node_count() == 0


def test_same_task_twice_in_one_jsonl(cli: Any, node_count: Any, tmp_path: Path) -> None:
    changed = fresh()
    changed["trace"][1]["content"] = "another version"
    path = write(tmp_path, "dup.jsonl", line(fresh()) + "\n" + line(changed) + "\n")
    assert_refused(cli, cli("ingest", str(path)), "CaseError", f"'{TID}'", "twice",
                   f"{path}:1", f"{path}:2")
    assert node_count() == 0


# -- hostile but valid ids and contents -----------------------------------------------------

HOSTILE_TID = "x' }) DETACH DELETE n //"
HOSTILE_IDS = {
    TID: HOSTILE_TID,
    "u_1": "\"; MATCH (n) DETACH DELETE n; //",
    "u_2": "`Node`",
    "m_001": "\\\" RETURN 1",
    "m_004": "back\\slash\\",
    "m_f003": "m_ünïcødé_💥_日本語",
    "s_001": "MATCH (n) DETACH DELETE n",
    "s_002": "$param",
    "s_003": "} RETURN 1 //",
    "s_005": "it's \"quoted\"",
    "s_007": "line\nbreak\r\ttab",
    "s_008": "{id: 1}) WITH * CALL db.labels() //",
    "s_010": "a/b%2Fc",
    "s_012": "~shopping_task_014",
    "m_005": "",
    "m_006": "\x01ctrl\x7f\u2028 ",
}
HOSTILE_CONTENT = ("x' }) DETACH DELETE n // \"; MATCH (n) DETACH DELETE n; // `Node` "
                   "\\\" RETURN 1\n💥")


def hostile_case() -> dict[str, Any]:
    case: dict[str, Any] = rename(fresh(), HOSTILE_IDS)
    case["domain"] = "`shopping`\n'"
    case["trace"][1]["content"] = HOSTILE_CONTENT
    case["session"][0]["content"] = HOSTILE_CONTENT[::-1]
    case["memory_store"][1]["content"] = "\\\\ \\n \\u0000 ${x} {{y}} %s %(z)s"
    case["memory_store"][1]["fact_value"] = "'); DROP TABLE t; --"
    case["memory_store"][3]["derived_from"] = ["", HOSTILE_IDS["m_004"]]   # m_006 from m_005
    case["memory_store"][3]["sufficient_from"] = [""]
    case["trace"][7]["used_ids"].append(HOSTILE_IDS["m_006"])            # s_009 reads m_006
    return case


def test_hostile_ids_round_trip(cli: Any, falkordb_store: Any, tmp_path: Path) -> None:
    other = write(tmp_path, "other.json", line(fresh()))
    ingest_ok(cli, other)
    before = shown(cli, TID)
    assert before == as_stored(fresh())

    hostile = hostile_case()
    path = write(tmp_path, "hostile.jsonl", line(hostile) + "\n")
    out = ingest_ok(cli, path)
    assert "created" in out

    got = shown(cli, HOSTILE_TID)
    assert got == as_stored(hostile)
    from provrepair.provenance.edges import derive_edges
    from provrepair.provenance.keys import task_key

    edges = falkordb_store.run("list_task_edges", {"task_key": task_key(HOSTILE_TID)})
    assert sorted((e["label"], e["src"], e["dst"], e["sufficient"]) for e in edges) == sorted(
        (e.label.value, e.src, e.dst, e.sufficient) for e in derive_edges(parse_case(hostile)))
    assert ("DERIVE", "", HOSTILE_IDS["m_006"], True) in {
        (e["label"], e["src"], e["dst"], e["sufficient"]) for e in edges}
    assert got["task_id"] == HOSTILE_TID
    assert [s["step_id"] for s in got["trace"]][:3] == [
        "MATCH (n) DETACH DELETE n", "$param", "} RETURN 1 //"]
    assert got["trace"][1]["content"] == HOSTILE_CONTENT
    assert got["diagnosed_faults"] == ["m_ünïcødé_💥_日本語"]

    # the other task is untouched, and both are listed
    assert shown(cli, TID) == before
    listed = {t["task_id"]: t for t in stored_tasks(cli)}
    assert set(listed) == {TID, HOSTILE_TID}
    assert listed[TID]["steps"] == listed[HOSTILE_TID]["steps"] == len(BASE["trace"])

    # re-ingesting the identical hostile case is a no-op
    assert "unchanged" in ingest_ok(cli, path)
    assert shown(cli, HOSTILE_TID) == got


def test_ids_differing_only_in_case_and_white_space(cli: Any, tmp_path: Path) -> None:
    """Index lookups must be exact: 'S_001', ' s_001' and 's_001 ' are distinct ids."""
    case = fresh()
    twin = copy.deepcopy(case["memory_store"][1])
    extra = []
    for i, mid in enumerate(["M_004", " m_004", "m_004 ", "m_004\t"]):
        record = copy.deepcopy(twin)
        record.update(memory_id=mid, content=f"twin {i}", created_at=60 + i,
                      last_modified_at=60 + i)
        extra.append(record)
    case["memory_store"].extend(extra)
    case["trace"][5]["used_ids"].extend(r["memory_id"] for r in extra)
    ingest_ok(cli, write(tmp_path, "twins.json", line(case)))
    got = shown(cli, TID)
    assert got == as_stored(case)
    assert [m["memory_id"] for m in got["memory_store"]][-4:] == ["M_004", " m_004", "m_004 ",
                                                                  "m_004\t"]


def test_tasks_differing_in_white_space_are_distinct(cli: Any, tmp_path: Path) -> None:
    padded = TID + " "
    ingest_ok(cli, write(tmp_path, "a.json", line(fresh())),
              write(tmp_path, "b.json", line(fresh(padded))))
    assert sorted(t["task_id"] for t in stored_tasks(cli)) == sorted([TID, padded])
    assert shown(cli, padded)["task_id"] == padded
    assert shown(cli, TID) == as_stored(fresh())


# -- valid input the store must either keep exactly or refuse clearly ---------------------
# Each of these is accepted by parse_case. Acceptable outcomes: exit 0 and the case reads back
# verbatim (nodes and every derived edge), or exit 2 with one error line and nothing written.
# Not acceptable: a traceback, or "created" with data silently lost or altered.

def kept_or_refused(cli: Any, store: Any, node_count: Callable[[], int], result: Any,
                    raw: dict[str, Any], *needles: str) -> None:
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.returncode in (0, 2), (result.returncode, result.stderr[-2000:])
    if result.returncode == 2:
        one_error_line(result, r"\w+", *needles)
        assert node_count() == 0
        return
    from provrepair.provenance.edges import derive_edges
    from provrepair.provenance.keys import task_key

    case = parse_case(copy.deepcopy(raw))
    assert [t["task_id"] for t in stored_tasks(cli)] == [case.task_id]
    assert shown(cli, case.task_id) == case.model_dump(mode="json")
    edges = store.run("list_task_edges", {"task_key": task_key(case.task_id)})
    assert sorted((e["label"], e["src"], e["dst"]) for e in edges) == sorted(
        (e.label.value, e.src, e.dst) for e in derive_edges(case))


def test_deeply_nested_world(cli: Any, falkordb_store: Any, node_count: Any,
                             tmp_path: Path) -> None:
    case = fresh()
    deep: list[Any] = []
    for _ in range(299):
        deep = [deep]
    case["world"]["deep"] = deep
    path = write(tmp_path, "deep.json", json.dumps(case))
    kept_or_refused(cli, falkordb_store, node_count, cli("ingest", str(path)), case, f"'{TID}'")


def test_trust_score_beyond_int64(cli: Any, falkordb_store: Any, node_count: Any,
                                  tmp_path: Path) -> None:
    case = fresh()
    case["memory_store"][1]["trust_score"] = 2**70
    path = write(tmp_path, "trust.json", json.dumps(case))
    kept_or_refused(cli, falkordb_store, node_count, cli("ingest", str(path)), case,
                    f"'{TID}'", "memory_store[1].trust_score", "'m_004'")


def test_long_task_id(cli: Any, falkordb_store: Any, node_count: Any, tmp_path: Path) -> None:
    case = rename(fresh(), {TID: "T" * 4096})
    path = write(tmp_path, "long_task.json", json.dumps(case))
    kept_or_refused(cli, falkordb_store, node_count, cli("ingest", str(path)), case,
                    "task_id")


def test_long_unicode_node_id(cli: Any, falkordb_store: Any, node_count: Any,
                              tmp_path: Path) -> None:
    case = rename(fresh(), {"m_f003": "日" * 500})
    path = write(tmp_path, "long_node.json", json.dumps(case, ensure_ascii=False))
    kept_or_refused(cli, falkordb_store, node_count, cli("ingest", str(path)), case,
                    f"'{TID}'")


def test_long_ids_within_the_index_limit(cli: Any, falkordb_store: Any, node_count: Any,
                                         tmp_path: Path) -> None:
    """Control for the two tests above: long ids that stay below 4096 encoded bytes work."""
    case = rename(fresh(), {TID: "T" * 1000, "m_f003": "日" * 300})
    path = write(tmp_path, "long_ok.json", json.dumps(case, ensure_ascii=False))
    result = cli("ingest", str(path))
    assert result.returncode == 0, result.stderr
    kept_or_refused(cli, falkordb_store, node_count, result, case)


# -- conflicts: a changed case needs --replace ----------------------------------------------

def test_changed_case_needs_replace(cli: Any, tmp_path: Path) -> None:
    original = write(tmp_path, "v1.json", line(fresh()))
    assert "created" in ingest_ok(cli, original)
    stored_v1 = shown(cli, TID)
    assert stored_v1 == as_stored(fresh())

    changed = fresh()
    changed["trace"][1]["content"] = "a different plan"
    changed["memory_store"].pop(2)  # m_005 is referenced by nothing
    v2 = write(tmp_path, "v2.json", line(changed))
    result = cli("ingest", str(v2))
    assert_refused(cli, result, "TaskConflict", f"'{TID}'", "--replace", check_empty=False)
    assert shown(cli, TID) == stored_v1

    out = ingest_ok(cli, v2, replace=True)
    assert "replaced" in out
    stored_v2 = shown(cli, TID)
    assert stored_v2 == as_stored(changed)
    assert len(stored_v2["memory_store"]) == len(BASE["memory_store"]) - 1
    assert [t["task_id"] for t in stored_tasks(cli)] == [TID]

    # identical again: unchanged, with or without --replace the content stays v2
    assert "unchanged" in ingest_ok(cli, v2)
    assert shown(cli, TID) == stored_v2


def test_unknown_task_for_show(cli: Any, refused: Any) -> None:
    result = cli("show", "--task", "no such task", "--json")
    refused(result, "TaskNotFound", "'no such task'")


def test_conflict_in_a_later_file_writes_nothing(cli: Any, tmp_path: Path) -> None:
    """Conflicts are found for every case before any case is written."""
    stored = fresh()
    ingest_ok(cli, write(tmp_path, "stored.json", line(stored)))
    changed = fresh()
    changed["session"][0]["content"] = "changed"
    other = rename(fresh(), {TID: "other-task"})
    result = cli("ingest", str(write(tmp_path, "new.json", line(other))),
                 str(write(tmp_path, "changed.json", line(changed))))
    assert result.returncode == 2 and result.stderr.startswith("TaskConflict: ")
    assert [t["task_id"] for t in stored_tasks(cli)] == [TID]


def test_every_error_of_a_file_is_reported_and_json_lists_them(cli: Any, refused: Any,
                                                               tmp_path: Path) -> None:
    case = fresh()
    for i in range(3):
        case["trace"][i]["used_ids"].append(f"ghost_{i}")
    path = write(tmp_path, "three.json", line(case))
    refused(cli("ingest", str(path)), "CaseError", "ghost_0", "(and 2 more errors; --json")
    result = cli("ingest", str(path), "--json")
    assert result.returncode == 2
    report = json.loads(result.stdout)
    assert report["error"] == "CaseError"
    assert [e["id"] for e in report["errors"]] == ["ghost_0", "ghost_1", "ghost_2"]
    assert all(e["field"] == f"trace[{i}].used_ids" for i, e in enumerate(report["errors"]))


def test_errors_are_capped_at_twenty(cli: Any, tmp_path: Path) -> None:
    case = fresh()
    for step in case["trace"]:
        step["timestamp"] = 1.5  # a float timestamp: one pydantic error per step
    case["trace"] = case["trace"] * 3  # 30+ erroneous steps (duplicates too)
    path = write(tmp_path, "many.json", line(case))
    result = cli("ingest", str(path), "--json")
    assert result.returncode == 2
    assert len(json.loads(result.stdout)["errors"]) == 20


@pytest.mark.parametrize("where", ["missing.jsonl", "."])
def test_follow_of_a_missing_file_or_a_directory(cli: Any, refused: Any, tmp_path: Path,
                                                 where: str) -> None:
    refused(cli("ingest", "--follow", str(tmp_path / where)), "InputError", "--follow takes")


def test_deeply_nested_event_is_one_line(cli: Any, refused: Any, tmp_path: Path) -> None:
    deep = '{"kind": "task", "task_id": "t", "world": ' + "[" * 50_000 + "]" * 50_000 + "}\n"
    refused(cli("ingest", "--follow", str(write(tmp_path, "deep.jsonl", deep))), "InputError",
            "nested too deeply")
