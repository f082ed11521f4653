"""Customer support: an order and its category's refund policy, open support tickets, a
contact preference and a concise case summary.

Session (4 turns): look up the order and its refund policy and note them with a case
summary; check the open tickets and note their severity; one ticket got resolved (forget
it), a new contact channel, the case summary brought up to date; then answer from the latest
summary and notes: the order status and refund window, the most severe open ticket, and the
contact channel.
"""

from __future__ import annotations

import random
from typing import Any

from provrepair.benchmark.agent import TurnScript
from provrepair.benchmark.domains.common import ids, person, price
from provrepair.benchmark.scripts import (
    Expr,
    Mutations,
    Seed,
    Session,
    argmax,
    call,
    const_fact,
    delete,
    derived_fact,
    lookup,
    sessions_of,
    tool,
    tpl,
    update,
    write,
)
from provrepair.provenance.vocab import MemorySource

ITEMS = [("noise-cancelling headphones", "Electronics"), ("ceramic cookware set", "Home"),
         ("trail running shoes", "Footwear"), ("robot vacuum", "Home"),
         ("gaming monitor", "Electronics"), ("winter parka", "Apparel"),
         ("blender", "Kitchen"), ("office chair", "Furniture")]
WINDOWS = {"Electronics": "30 days", "Home": "30 days", "Footwear": "60 days",
           "Apparel": "45 days", "Kitchen": "14 days", "Furniture": "90 days"}
STATUSES = ["processing", "shipped", "delivered"]
SUBJECTS = ["billing error", "login problem", "damaged parcel", "missing invoice",
            "warranty claim", "address change", "late delivery", "coupon not applied"]
CHANNELS = ["email", "phone", "sms", "chat"]
TOOLS = [tool("lookup_order"), tool("get_policy"), tool("get_ticket")]


def most_severe() -> Expr:
    return argmax("open_severity", None)


def _world(rng: random.Random, order: str, tickets: list[str]) -> dict[str, Any]:
    item, category = rng.choice(ITEMS)
    return {
        "orders": {order: {"status": rng.choice(STATUSES), "category": category, "item": item,
                           "total": price(rng, 40, 900), "user_id": "me"}},
        "policies": {c: {"refund_window": w, "return_shipping": rng.choice(["free", "paid"])}
                     for c, w in WINDOWS.items()},
        "tickets": {t: {"status": "open", "subject": s, "severity": str(rng.randint(1, 5))}
                    for t, s in zip(tickets, rng.sample(SUBJECTS, len(tickets)), strict=True)},
    }


def build(rng: random.Random, rich: int) -> Session:
    order = ids(rng, "ORD", 1, 100, 999, 5)[0]
    tickets = sorted(ids(rng, "T", 2 + rich, 1000, 9999, 4))
    world = _world(rng, order, tickets)
    channel = rng.choice(CHANNELS)
    channel2 = rng.choice([c for c in CHANNELS if c != channel])
    seeds = _seeds(rng, rich, channel)
    work = [_order(world, order, rich), _tickets(order, tickets),
            _lifecycle(order, rng.choice(tickets), channel2 if rich >= 1 else None)]
    turns = sessions_of(rng, work, _final(order), early=False)
    first, second = ids(rng, "T", 2, 10000, 99999, 5)
    strangers = [
        Seed("stranger:chargeback", f"Escalation {first}: chargeback dispute (severity 5)",
             first, "open_severity", "5", MemorySource.TOOL_OBSERVATION),
        Seed("stranger:duplicate", f"Escalation {second}: duplicate charge (severity 4)",
             second, "open_severity", "4", MemorySource.TOOL_OBSERVATION),
    ]
    return Session("customer_support", world, TOOLS, seeds, turns, strangers)


def _seeds(rng: random.Random, rich: int, channel: str) -> list[Seed]:
    customer = person(rng)
    seeds = [Seed("contact", f"Preferred contact channel: {channel}", "user", "contact",
                  channel)]
    if rich >= 1:
        seeds += [Seed("profile:name", f"Customer name: {customer}", "user", "customer_name",
                       customer),
                  Seed("profile:tier", "Support plan: premium", "user", "support_plan",
                       "premium")]
    if rich >= 2:
        seeds.append(Seed("profile:hours", "Reachable weekdays after 6pm", "user",
                          "reachable", "weekdays after 6pm"))
    return seeds


def window_of(order: str) -> Expr:
    return lookup(lookup(order, "category"), "refund_window")


def _order(world: dict[str, Any], order: str, rich: int) -> TurnScript:
    """The claim names a record no later turn changes: the customer name, or the contact
    channel when this session never changes it."""
    item = world["orders"][order]["item"]
    anchor = "customer_name" if rich >= 1 else "contact"
    notes: Mutations = [
        write("t1.window", "window", "{c} refund window: {w}",
              derived_fact("policy", "refund_window", window_of(order)),
              c=lookup(order, "category"), w=window_of(order)),
        write("t1.summary", "summary", "Case " + order + ": refund window {w}",
              derived_fact(order, "refund_window", window_of(order)), w=window_of(order),
              source=MemorySource.AGENT_SUMMARY),
    ]
    notes.insert(0, write("t1.status", "status", "Order " + order + " status: {s}",
                          derived_fact(order, "status", lookup(order, "status")),
                          s=lookup(order, "status")))
    if rich >= 1:
        notes.append(write("t1.total", "total", "Order " + order + " total: {t}",
                           derived_fact(order, "total", lookup(order, "total")),
                           t=lookup(order, "total")))
    return TurnScript(
        content=f"Can you check order {order} for my {item} and tell me whether I could "
                "still return it?",
        claim=tpl("Your account is under {n}.", n=lookup("user", anchor)),
        plan=tpl("Look up " + order + " and its refund policy for {n}.",
                 n=lookup("user", anchor)),
        tool_calls=[call("lookup_order", order_id=order),
                    call("get_policy", category=lookup(order, "category"))],
        answer=tpl("Order " + order + " is {s}; the refund window is {w}.",
                   s=lookup(order, "status"), w=window_of(order)),
        mutations=notes)


def _tickets(order: str, tickets: list[str]) -> TurnScript:
    notes: Mutations = [write(f"t2.ticket.{t}", f"ticket:{t}", "Open ticket " + t + ": {s} (severity {v})",
                   derived_fact(t, "open_severity", lookup(t, "severity")),
                   s=lookup(t, "subject"), v=lookup(t, "severity"))
             for t in tickets]
    return TurnScript(
        content="Where do my support tickets " + ", ".join(tickets) + " stand? Keep track of "
                "the unresolved ones.",
        claim=tpl("You ordered the {i}.", i=lookup(order, "item")),
        plan=tpl("Fetch each ticket besides the {i} order.", i=lookup(order, "item")),
        tool_calls=[call("get_ticket", ticket_id=t) for t in tickets],
        answer=tpl("Most severe right now: {t}.", t=argmax("severity", tickets)),
        mutations=notes)


def _lifecycle(order: str, solved: str, channel2: str | None) -> TurnScript:
    summary = tpl("Case " + order + ": refund window {w}, {r} return shipping",
                  w=lookup("policy", "refund_window"),
                  r=lookup(lookup(order, "category"), "return_shipping"))
    mutations: Mutations = [delete("t3.forget", [f"ticket:{solved}"], f"Forget resolved ticket {solved}")]
    request = f"Ticket {solved} got resolved, so forget it. "
    if channel2 is not None:
        request += f"Please use {channel2} to reach me from now on. "
        mutations.append(update("t3.contact", "contact", "contact",
                                f"Preferred contact channel: {channel2}",
                                const_fact("user", "contact", channel2)))
    mutations.append(update("t3.summary", "summary", "summary2", "{x}",
                            derived_fact(order, "refund_window",
                                         lookup("policy", "refund_window")),
                            x=summary, source=MemorySource.AGENT_SUMMARY))
    return TurnScript(
        content=request + f"And refresh the case summary for {order}.",
        claim=tpl("Ticket " + solved + " was about {s}.", s=lookup(solved, "subject")),
        answer=tpl("Done: " + solved + " is closed and the case summary is current."),
        mutations=mutations)


def _final(order: str) -> TurnScript:
    return TurnScript(
        content=f"Using only the latest case summary and notes you stored: what is the refund "
                f"window for {order}, which open ticket is most severe, and how will you "
                "contact me?",
        claim=tpl("The latest summary gives a refund window of {w}.",
                  w=lookup(order, "refund_window")),
        answer=tpl("Order " + order + " ({s}): refund window {w}. Most severe open ticket: {t} "
                   "({v}). Contact: {c}.", s=lookup(order, "status"),
                   w=lookup(order, "refund_window"), t=most_severe(),
                   v=tpl("severity {x}", x=lookup(most_severe(), "open_severity")),
                   c=lookup("user", "contact")))
