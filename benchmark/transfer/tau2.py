"""Reading τ²-bench's published retail simulations: one trajectory per JSON line.

The source (`SOURCE`) is a file of sierra-research/tau2-bench (MIT): each line is one
simulation of the retail domain (agent and user simulator GPT-4o) with the task id, the task
reward and the conversation as its judge prompt holds it, one numbered message per item:

    5. Assistant TOOL CALL -> find_user_id_by_name_zip {'first_name': 'Yusuf', ...}
    6. Tool call_C9hK1p53af41stFsGhtX7IWP: yusuf_rossi_9620
    7. Assistant: Thank you, Yusuf! ...
    13. User: ...

A message runs until the next line that starts with the next number and a role (a numbered
list inside a message is not a new message). Tool calls are Python dict literals; their
results follow in call order (several calls in a row, then their results), each the tool's
JSON output or an error text.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from provrepair.provenance.errors import InputError


@dataclass(frozen=True)
class Source:
    repository: str
    commit: str
    path: str
    license: str


SOURCE = Source(
    repository="sierra-research/tau2-bench",
    commit="07c6aaca2241884938a700504bf621f10b886d33",
    path="judge_viewer/data/simulations/retail-multi-judge-full_quick_triage_v1.json",
    license="MIT")

TRANSCRIPT = re.compile(r"Conversation transcript:\n(.*?)\n\nJudging instructions:", re.S)
MESSAGE = re.compile(r"^(\d+)\. (Assistant TOOL CALL -> |Assistant: |User: |Tool [^:\n]*: )", re.M)
# The tools that only read the store; anything else (modify, cancel, return, exchange,
# transfer to a human) acts in the world.
READ_TOOLS = frozenset({"find_user_id_by_email", "find_user_id_by_name_zip", "get_user_details",
                        "get_order_details", "get_product_details", "list_all_product_types",
                        "calculate"})


@dataclass
class Call:
    """One tool call, its arguments and what it returned (`result` None: no result given)."""

    index: int                     # the message number of the call
    tool: str
    args: dict[str, Any]
    result: str | None = None
    result_index: int | None = None

    @property
    def reads(self) -> bool:
        return self.tool in READ_TOOLS

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.startswith(("Error", "error"))

    def parsed(self) -> Any:
        """The result as JSON when it is JSON, else the text."""
        assert self.result is not None
        try:
            return json.loads(self.result)
        except ValueError:
            return self.result


@dataclass
class Message:
    index: int
    role: str                      # user | assistant | call | tool
    text: str
    call: Call | None = None


@dataclass
class Trajectory:
    task_id: str
    simulation_id: str
    reward: float
    messages: list[Message] = field(default_factory=list)

    @property
    def calls(self) -> list[Call]:
        return [m.call for m in self.messages if m.call is not None]


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of a source file (a copy of `SOURCE.path`, or a part of it)."""
    return parse_lines(path.read_text(encoding="utf-8"), str(path))


def rows_from_git(git_dir: Path, source: Source = SOURCE) -> list[dict[str, Any]]:
    """The source file at its pinned commit, read from a fetched copy of the repository (a
    git directory; no work tree needed)."""
    done = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{source.commit}:{source.path}"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InputError(f"{git_dir}: cannot read {source.path} at {source.commit[:12]} "
                         f"({done.stderr.strip() or 'git failed'}); fetch {source.repository}")
    return parse_lines(done.stdout, f"{source.commit[:12]}:{source.path}")


def parse_lines(text: str, where: str) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise InputError(f"{where}:{number}: not a JSON line ({exc})") from exc
    return rows


def trajectory(row: dict[str, Any]) -> Trajectory:
    """One source line as a trajectory; a line without a transcript is an InputError."""
    found = TRANSCRIPT.search(str(row.get("prompt", "")))
    if found is None:
        raise InputError(f"task {row.get('task_id')!r}: no conversation transcript in its prompt")
    if "task_id" not in row:
        raise InputError("a source line without a task_id")
    out = Trajectory(str(row["task_id"]), str(row.get("simulation_id", "")),
                     float(row.get("tau2_reward", 0.0)))
    pending: list[Call] = []
    for index, role, text in _messages(found.group(1)):
        if role == "call":
            name, _, args = text.partition(" ")
            call = Call(index, name.strip(), _arguments(args, out.task_id, index))
            pending.append(call)
            out.messages.append(Message(index, role, text, call))
        elif role == "tool":
            if pending:
                call = pending.pop(0)
                call.result, call.result_index = text, index
            out.messages.append(Message(index, role, text))
        else:
            out.messages.append(Message(index, role, text))
    return out


def _messages(transcript: str) -> list[tuple[int, str, str]]:
    """(number, role, text) of every message, numbered 1, 2, 3, ... without gaps."""
    kept = []
    expected = 1
    for match in MESSAGE.finditer(transcript):
        if int(match.group(1)) == expected:
            kept.append(match)
            expected += 1
    out = []
    for match, following in zip(kept, [*kept[1:], None], strict=True):
        end = following.start() if following is not None else len(transcript)
        prefix = match.group(2)
        role = ("call" if prefix.startswith("Assistant TOOL") else "assistant"
                if prefix.startswith("Assistant") else "user" if prefix.startswith("User")
                else "tool")
        out.append((int(match.group(1)), role, transcript[match.end():end].strip()))
    return out


def _arguments(text: str, task_id: str, index: int) -> dict[str, Any]:
    """A call's arguments (a Python dict literal), or an InputError naming task and message."""
    try:
        args = ast.literal_eval(text.strip() or "{}")
    except (ValueError, SyntaxError) as exc:
        raise InputError(f"task {task_id!r}, message {index}: tool call arguments are not a "
                         f"dict literal ({type(exc).__name__})") from exc
    if not isinstance(args, dict):
        raise InputError(f"task {task_id!r}, message {index}: tool call arguments are not a dict")
    return args
