"""A τ²-bench retail trajectory as a memory-augmented session of the benchmark's agent runtime.

What is taken from the trajectory, unchanged: the user's messages, the read-only tool calls
the agent made (tool, arguments) and what they returned, in order, up to the agent's first
action in the world (modify, cancel, return, exchange, transfer). What the mapping adds is
the memory: after each turn the agent notes what the turn's lookups established, and a final
question asks, from those notes, for the facts that first action depends on.

    turn t (one per user message the agent answered with lookups):
        memory read, claim (t > 1: restates facts noted in earlier turns), plan,
        the trajectory's read-only calls (recorded results: `world.tool_results`),
        answer (the facts the calls returned), notes (memory writes, one fact each)
    final turn: "Before you <action> order #W…: from your notes, what is its status and
        total, what do the items cost, which payment method?" — answered from the notes only

Facts of a call's result (`facts_of`) use the tool's field names (`status`, `total`,
`paid_price`, `price`, `payment`, …); notes state them under `noted_<key>`, so the final
answer reads the notes, never the tool results directly: the answer is what the memory
holds. A note is written once per fact (the first lookup that establishes it); the user's
account (id, zip, email), every payment method, every order's status and total, and the
prices of the items the first action names are noted; the rest of a result stays in the
observation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from provrepair.benchmark.agent import TurnScript
from provrepair.benchmark.scripts import (
    Expr,
    Mutations,
    Session,
    derived_fact,
    lookup,
    tool,
    tpl,
    write,
)
from provrepair.benchmark.scripts import call as tool_call
from provrepair.benchmark.transfer.tau2 import Call, Trajectory
from provrepair.provenance.errors import InputError
from provrepair.provenance.vocab import MemorySource

DOMAIN = "retail"
NOTED = "noted_"
MAX_ITEMS = 2          # item prices asked per side (the items changed, the items chosen)
MIN_FACTS = 3          # a trajectory whose first action needs fewer noted facts is not used
VERBS = {"modify_pending_order_items": "change the items of",
         "exchange_delivered_order_items": "exchange items of",
         "return_delivered_order_items": "return items of",
         "cancel_pending_order": "cancel",
         "modify_pending_order_address": "change the shipping address of",
         "modify_pending_order_payment": "change the payment method of",
         "modify_user_address": "change your address for",
         "transfer_to_human_agents": "hand over",
         }
LABELS = {"user_id": "Customer id", "zip": "Customer zip", "email": "Customer email",
          "payment": "Payment method #{e}", "status": "Order {e} status",
          "total": "Order {e} total", "paid_price": "Item {e} was paid",
          "price": "Item {e} now costs", "paid_with": "Order {e} was paid with"}


class NotUsable(InputError):
    """A trajectory the mapping cannot turn into a case (too few facts for the question)."""


FactRow = tuple[str, str, str]   # entity, key, value


def money(amount: float) -> str:
    return f"${amount:,.2f}"


def payment(method: dict[str, Any]) -> str:
    source = str(method.get("source", ""))
    if source == "credit_card":
        return f"{method.get('brand', 'card')} ending {method.get('last_four', '')}"
    if source == "gift_card":
        return f"gift card with balance {money(float(method.get('balance', 0.0)))}"
    return source or "unknown"


def facts_of(call: Call) -> list[FactRow]:
    """The facts a successful read-only call's result states."""
    if not call.ok:
        return []
    data = call.parsed()
    if call.tool.startswith("find_user_id"):
        return [("user", "user_id", str(data))]
    if not isinstance(data, dict):
        return [(f"calc:{call.args.get('expression', '')}", "result", str(data))] \
            if call.tool == "calculate" else []
    if call.tool == "get_user_details":
        address = data.get("address", {})
        out = [("user", "user_id", str(data["user_id"])), ("user", "zip", str(address.get("zip"))),
               ("user", "email", str(data.get("email")))]
        return out + [(pm, "payment", payment(m)) for pm, m in data.get("payment_methods", {}).items()]
    if call.tool == "get_order_details":
        order = str(data["order_id"])
        items = data.get("items", [])
        paid = [p for p in data.get("payment_history", []) if p.get("transaction_type") == "payment"]
        out = [(order, "status", str(data["status"])),
               (order, "total", money(sum(float(i["price"]) for i in items)))]
        if paid:
            out.append((order, "paid_with", str(paid[0]["payment_method_id"])))
        return out + [(str(i["item_id"]), "paid_price", money(float(i["price"]))) for i in items]
    if call.tool == "get_product_details":
        return [(str(v["item_id"]), "price", money(float(v["price"])))
                for v in data.get("variants", {}).values()]
    if call.tool == "list_all_product_types":
        return [("catalog", "product_types", str(len(data)))]
    return []


def rendered(call: Call) -> str:
    """What the observation says: the call's facts, one `entity key: value` per line (the raw
    result is in the source; a case keeps what the mapping reads)."""
    if not call.ok:
        return str(call.result or "(no result)")
    return "\n".join(f"{e} {k}: {v}" for e, k, v in facts_of(call)) or "(nothing)"


@dataclass
class Question:
    """The final question: the first action the trajectory took, and the facts it needs, each
    as (entity, key) of the tool facts; `asked` keeps them in the answer's order."""

    tool: str
    order: str | None
    asked: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Mapped:
    session: Session
    question: Question
    turns: list[list[int]]            # the source message numbers each working turn uses
    action_index: int | None          # the message number of the first action (None: none)


def first_action(traj: Trajectory) -> Call | None:
    return next((c for c in traj.calls if not c.reads), None)


def reading_phase(traj: Trajectory) -> list[tuple[int, str, list[Call]]]:
    """(user message number, text, the read-only calls made before the next user message),
    up to the first action; user messages answered without a lookup are left out."""
    action = first_action(traj)
    stop = action.index if action is not None else None
    out: list[tuple[int, str, list[Call]]] = []
    for message in traj.messages:
        if stop is not None and message.index >= stop:
            break
        if message.role == "user":
            out.append((message.index, message.text, []))
        elif message.call is not None and out:
            out[-1][2].append(message.call)
    return [t for t in out if t[2]]


def question(traj: Trajectory, known: dict[tuple[str, str], str]) -> Question:
    """What the final question asks: for the first action's order, its status and total, the
    prices of the items it changes (paid) and chooses (catalog), and the payment method it
    charges or refunds; without an action, the last order looked up."""
    action = first_action(traj)
    args = action.args if action is not None else {}
    orders = [str(c.args["order_id"]) for c in traj.calls if c.reads and "order_id" in c.args]
    order = str(args["order_id"]) if "order_id" in args else (orders[-1] if orders and not args
                                                                  else None)
    asked: list[tuple[str, str]] = []
    if order is not None:
        asked += [(order, "status"), (order, "total")]
        items = [str(i) for i in args.get("item_ids", [])] or \
            [e for (e, k) in known if k == "paid_price" and action is None][:1]
        asked += [(i, "paid_price") for i in items[:MAX_ITEMS]]
        asked += [(str(i), "price") for i in args.get("new_item_ids", [])[:MAX_ITEMS]]
    method = args.get("payment_method_id") or (known.get((order, "paid_with")) if order else None)
    if method:
        asked.append((str(method), "payment"))
    asked = [a for a in dict.fromkeys(asked) if a in known]
    return Question(action.tool if action is not None else "", order, asked)


def noted(asked: list[tuple[str, str]]) -> set[tuple[str | None, str]]:
    """Which facts the agent notes: the account, every payment method, every order's status
    and total (entity None: any), and the asked item prices."""
    wanted: set[tuple[str | None, str]] = {(None, k) for k in ("user_id", "zip", "email", "payment",
                                                               "status", "total")}
    return wanted | {(e, k) for e, k in asked if k in ("paid_price", "price")}


def map_trajectory(traj: Trajectory) -> Mapped:
    phase = reading_phase(traj)
    known: dict[tuple[str, str], str] = {}
    for _, _, calls in phase:
        for call in calls:
            for entity, key, value in facts_of(call):
                known.setdefault((entity, key), value)
    asked_q = question(traj, known)
    if len(asked_q.asked) < MIN_FACTS:
        raise NotUsable(f"task {traj.task_id}: its first action needs {len(asked_q.asked)} noted "
                        f"facts (at least {MIN_FACTS})")
    wanted = noted(asked_q.asked)
    written: set[tuple[str, str]] = set()
    turns: list[TurnScript] = []
    earlier: list[tuple[str, str]] = []
    for number, (_, text, calls) in enumerate(phase, 1):
        facts = [f for c in calls for f in facts_of(c)]
        notes = [(e, k) for e, k, _ in facts if ((e, k) not in written and
                                                 ((None, k) in wanted or (e, k) in wanted))]
        notes = list(dict.fromkeys(notes))
        written.update(notes)
        turns.append(TurnScript(
            content=text, claim=_claim(earlier, number),
            plan=tpl("Look up " + "; ".join(_shown(c) for c in calls) + "."),
            tool_calls=[tool_call(c.tool, **c.args) for c in calls],
            answer=_answer(facts), mutations=_notes(number, notes)))
        earlier = notes or earlier
    turns.append(_final(asked_q))
    world = {"tool_results": [{"tool": c.tool, "args": dict(c.args), "result": rendered(c),
                               "facts": [{"entity_id": e, "fact_key": k, "fact_value": v}
                                         for e, k, v in facts_of(c)],
                               "status": "ok" if c.ok else "error"}
                              for _, _, calls in phase for c in calls]}
    tools = [tool(name) for name in sorted({c.tool for _, _, calls in phase for c in calls})]
    action = first_action(traj)
    return Mapped(Session(DOMAIN, world, tools, [], turns), asked_q,
                  [[n, *(c.index for c in calls)] for n, _, calls in phase],
                  action.index if action is not None else None)


def _shown(call: Call) -> str:
    args = ", ".join(f"{k}={v}" for k, v in sorted(call.args.items()))
    return f"{call.tool}({args})"


def _label(entity: str, key: str) -> str:
    """How a note or answer names a fact; a payment method by its number only, so that its
    kind ("paypal_…") is never a second copy of the value."""
    shown = entity.rsplit("_", 1)[-1] if key == "payment" else entity
    return LABELS.get(key, "{e} " + key).format(e=shown)


def _claim(earlier: list[tuple[str, str]], turn: int) -> Expr:
    """Turn 1 knows nothing yet; a later turn restates (up to) two facts noted before it."""
    if turn == 1 or not earlier:
        return tpl("The customer needs help with their orders.")
    shown = earlier[:2]
    text = "From my notes: " + "; ".join(f"{_label(e, k)}: {{f{i}}}"
                                         for i, (e, k) in enumerate(shown)) + "."
    return tpl(text, **{f"f{i}": lookup(e, NOTED + k) for i, (e, k) in enumerate(shown)})


def _answer(facts: list[FactRow]) -> Expr:
    """The turn's answer: what its lookups returned (the account and order facts first)."""
    order = {"user_id": 0, "status": 1, "total": 2, "payment": 3}
    shown = sorted(dict.fromkeys((e, k) for e, k, _ in facts), key=lambda f: order.get(f[1], 9))[:4]
    if not shown:
        return tpl("The lookup returned nothing usable.")
    text = "Found: " + "; ".join(f"{_label(e, k)}: {{f{i}}}" for i, (e, k) in enumerate(shown)) + "."
    return tpl(text, **{f"f{i}": lookup(e, k) for i, (e, k) in enumerate(shown)})


def _notes(turn: int, notes: list[tuple[str, str]]) -> Mutations:
    return [write(f"t{turn}.{e}.{k}", f"{e}:{k}", _label(e, k) + ": {v}",
                  derived_fact(e, NOTED + k, lookup(e, k)), v=lookup(e, k),
                  source=MemorySource.TOOL_OBSERVATION) for e, k in notes]


def _final(asked_q: Question) -> TurnScript:
    keys = {k for _, k in asked_q.asked}
    wanted = [part for part, needed in (("its status and total", "status" in keys),
                                        ("what the items cost", bool(keys & {"paid_price", "price"})),
                                        ("which payment method it uses", "payment" in keys))
              if needed]
    what = ", ".join(wanted[:-1]) + (" and " if len(wanted) > 1 else "") + wanted[-1]
    order = f"order {asked_q.order}" if asked_q.order else "your order"
    lead = f"Before you {VERBS.get(asked_q.tool, 'act on')} {order}" if asked_q.tool else \
        f"About {order}"
    content = f"{lead}: from what you noted, tell me {what}."
    text = "; ".join(f"{_label(e, k)}: {{f{i}}}" for i, (e, k) in enumerate(asked_q.asked)) + "."
    answer = tpl(text, **{f"f{i}": lookup(e, NOTED + k) for i, (e, k) in enumerate(asked_q.asked)})
    first = asked_q.asked[0]
    claim = tpl(f"{_label(*first)} (noted): {{f}}.", f=lookup(first[0], NOTED + first[1]))
    return TurnScript(content=content, claim=claim, answer=answer)


def iter_usable(trajectories: list[Trajectory]) -> Iterator[tuple[Trajectory, Mapped]]:
    for traj in trajectories:
        try:
            yield traj, map_trajectory(traj)
        except NotUsable:
            continue
