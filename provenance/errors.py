"""The one error tree of provrepair.

    ProvrepairError                   base of everything we raise on purpose
    ├── UserError                     the user can fix it; the CLI prints `Type: message`, exit 2
    │   ├── InputError                a file or stream cannot be read as cases/events
    │   │                             (not UTF-8, truncated JSON, empty, oversized line)
    │   ├── CaseError                 a case breaks a rule of docs/case-format.md; names task, field, id
    │   ├── TaskNotFound              no task with that id in the store
    │   ├── TaskConflict              the task exists with other content (use --replace), or
    │   │                             is being written by another process
    │   ├── TaskIncomplete            a streamed task is still being recorded (no `end` yet)
    │   ├── NoNamespace               a task declares no memory namespace (`--scope namespace`)
    │   ├── RecordNotFound            no task of a memory namespace holds that record (agent id)
    │   ├── NothingToResume           `repair --resume` without a stopped repair, or naming a
    │   │                             step the stopped repair does not replay
    │   ├── NotRepaired               a memory patch asked of a task (or run) with no repair
    │   ├── PatchConflict             the target memory store changed since the repair
    │   ├── TargetMismatch            the target is not the agent's memory store (no such
    │   │                             path, another namespace or value key, another database)
    │   ├── ConfigError               bad PROVREPAIR_* settings (URI scheme, missing password)
    │   ├── StoreUnavailable          the store cannot be reached or started (with the reason),
    │   │   │                         or has no such database
    │   │   └── OutcomeUnknown        the connection was lost while a write was committing:
    │   │                             it may have landed (the CLI says which commands are safe
    │   │                             to re-run)
    │   └── AccessDenied              the store refused a statement to this user (a read-only
    │                                 role writing, a user without schema rights migrating)
    └── InternalError                 our bug: a traceback is printed
        ├── QueryFileError            a cypher/ file is malformed (file:line in the message)
        └── StoreError                the engine rejected a query we sent (driver error mapped)

Driver and pydantic errors are mapped here (`raise ... from e`) by `map_driver_error` and
by `provenance.validate`; nothing else in the product raises bare library errors at users.
"""

from __future__ import annotations

import sys


class ProvrepairError(Exception):
    """Base class of every error provrepair raises on purpose."""


class UserError(ProvrepairError):
    """An error the user caused and can fix; reported as one line, exit code 2."""


class InputError(UserError):
    """A file or stream could not be read as JSON cases or events."""


MAX_REPORTED_ERRORS = 20  # errors collected per file before validation stops looking


class CaseError(UserError):
    """A case (or a live event) breaks a rule of docs/case-format.md. `more` holds further
    errors found in the same file (at most MAX_REPORTED_ERRORS in all)."""

    def __init__(self, task_id: str | None, field: str, offending_id: str | None, problem: str,
                 more: list[CaseError] | None = None):
        self.task_id = task_id
        self.field = field
        self.offending_id = offending_id
        self.problem = problem
        self.more = more or []
        where = f"task {task_id!r}" if task_id is not None else "case without a task_id"
        ident = f", id {offending_id!r}" if offending_id is not None else ""
        extra = (f" (and {len(self.more)} more error{'s' * (len(self.more) > 1)}; "
                 "--json lists them)") if self.more else ""
        super().__init__(f"{where}, field {printable(field)}{ident}: {problem}{extra}")

    @classmethod
    def combined(cls, errors: list[CaseError]) -> CaseError:
        """One error carrying several (the first is the headline)."""
        flat = [e for error in errors for e in (error, *error.more)][:MAX_REPORTED_ERRORS]
        first = flat[0]
        return cls(first.task_id, first.field, first.offending_id, first.problem,
                   [cls(e.task_id, e.field, e.offending_id, e.problem) for e in flat[1:]])

    def to_json(self) -> list[dict[str, str | None]]:
        return [{"task_id": e.task_id, "field": e.field, "id": e.offending_id,
                 "problem": e.problem} for e in (self, *self.more)]


def printable(text: str) -> str:
    """Text from user data made safe for a one-line message (escapes, like repr, no quotes)."""
    return text if text.isprintable() else repr(text)[1:-1]


class TaskNotFound(UserError):
    """No task with that id is stored."""


class TaskConflict(UserError):
    """The task exists with different content, or another writer holds it."""


class TaskIncomplete(UserError):
    """The task's recording has not ended: it cannot be repaired yet."""


class NoNamespace(UserError):
    """`--scope namespace` on a task that declares no memory namespace."""


class RecordNotFound(UserError):
    """No task of the memory namespace holds a record with that agent id."""


class NothingToResume(UserError):
    """`repair --resume` has no stopped (needs_human) repair to continue, or a bad step."""


class NotRepaired(UserError):
    """No committed repair to take a memory patch from."""


class PatchConflict(UserError):
    """A memory store no longer holds what the patch expects (it changed since the run)."""


class TargetMismatch(UserError):
    """The store a patch was sent to does not hold the agent's memory: nothing written."""


class ConfigError(UserError):
    """A PROVREPAIR_* setting is missing or malformed."""


class StoreUnavailable(UserError):
    """The graph store cannot be reached or started."""


class OutcomeUnknown(StoreUnavailable):
    """The connection was lost while a write was committing: it may or may not have landed."""


class AccessDenied(UserError):
    """The graph store refused a statement to the connected user (its role's rights)."""


class InternalError(ProvrepairError):
    """A bug in provrepair itself; the CLI shows a traceback."""


class QueryFileError(InternalError):
    """A file under cypher/ is malformed; the message starts with file:line."""


class StoreError(InternalError):
    """The engine rejected a query provrepair sent."""


def map_driver_error(exc: BaseException, query_name: str,
                     database: str | None = None, *, write: bool = False) -> ProvrepairError:
    """Translate an engine/driver exception into the project tree.

    Connection and authentication failures are the user's environment (StoreUnavailable),
    and so are a database that does not exist and a right the user's role lacks; anything
    else the engine says about a query we sent is our bug (StoreError). A driver is only
    consulted if it is loaded: an exception can only come from a client already imported.
    A `write` whose commit went unanswered (the Neo4j driver's IncompleteCommit) is
    OutcomeUnknown: it may have landed.
    """
    rex = sys.modules.get("redis.exceptions")
    neo = sys.modules.get("neo4j.exceptions")
    # Authentication first: redis' AuthenticationError is a ConnectionError subclass.
    if (rex and isinstance(exc, rex.AuthenticationError)) or (neo and isinstance(exc, neo.AuthError)):
        return StoreUnavailable(f"the graph store refused the credentials: {type(exc).__name__}")
    if neo is not None and isinstance(exc, neo.Neo4jError):
        code, said = exc.code or "", exc.message or str(exc)
        if code == "Neo.ClientError.Database.DatabaseNotFound":
            return StoreUnavailable(f"the graph store has no database {database or ''!r}: create it, "
                                    f"or name an existing one (PROVREPAIR_DATABASE; export: "
                                    f"--database) ({said})")
        if code.startswith("Neo.ClientError.Security."):
            hint = ("; the schema is created once by a user with schema rights: provrepair db "
                    "migrate" if "/schema/" in query_name else "")
            return AccessDenied(f"the graph store refused {query_name} to this user: {said}{hint}")
    if write and neo is not None and isinstance(exc, neo.IncompleteCommit):
        return OutcomeUnknown(f"the connection to the graph store was lost while {query_name} "
                              "was committing: the write may have landed or not")
    unreachable: tuple[type[BaseException], ...] = (ConnectionError, OSError)
    if rex is not None:
        unreachable += (rex.ConnectionError, rex.TimeoutError)
    if neo is not None:
        unreachable += (neo.ServiceUnavailable, neo.SessionExpired)
    if isinstance(exc, unreachable):
        return StoreUnavailable(f"cannot reach the graph store ({query_name}): {exc}")
    return StoreError(f"query {query_name} failed: {exc}")
