"""Domain tool packs (shopping, travel, customer_support) that run against a case's `world`.

World layouts (all optional; a pack answers only from what the world holds):
  shopping          {"catalog": {product_id: {"name": str, "prices": {store: "$12.34"}}}}
  travel            {"flights": {flight_id: {"origin", "destination", "date", "price",
                     "seats"}}, "bookings": {booking_id: {...}}}
  customer_support  {"orders": {order_id: {"status", "items", "total", "user_id"}},
                     "tickets": {ticket_id: {"status", "subject"}}}
Each tool returns a text result and facts ({entity_id, fact_key, fact_value}) for replay.
"""

from __future__ import annotations

from typing import Any

from repair.replay.derive import DomainFunction
from repair.tools.registry import DomainTool, ToolResult


def _missing(what: str) -> ToolResult:
    return ToolResult(f"not found: {what}", [], "error")


def compare_price(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    product = world.get("catalog", {}).get(args.get("product_id"))
    if product is None:
        return _missing(f"product {args.get('product_id')}")
    stores = args.get("stores") or sorted(product.get("prices", {}))
    prices = {s: product["prices"][s] for s in stores if s in product.get("prices", {})}
    key = f"price_{args['product_id']}"
    return ToolResult("; ".join(f"{s}: {p}" for s, p in prices.items()),
                      [{"entity_id": s, "fact_key": key, "fact_value": p} for s, p in prices.items()])


def get_flight(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    flight = world.get("flights", {}).get(args.get("flight_id"))
    if flight is None:
        return _missing(f"flight {args.get('flight_id')}")
    fid = args["flight_id"]
    return ToolResult(f"{fid}: " + ", ".join(f"{k}={v}" for k, v in sorted(flight.items())),
                      [{"entity_id": fid, "fact_key": k, "fact_value": v} for k, v in flight.items()])


def search_flights(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    hits = {fid: f for fid, f in world.get("flights", {}).items()
            if all(f.get(k) == args[k] for k in ("origin", "destination", "date") if k in args)}
    facts = [{"entity_id": fid, "fact_key": "price", "fact_value": f.get("price")}
             for fid, f in sorted(hits.items())]
    return ToolResult("; ".join(f"{fid}: {f.get('price')}" for fid, f in sorted(hits.items()))
                      or "no flights", facts)


def lookup_order(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    order = world.get("orders", {}).get(args.get("order_id"))
    if order is None:
        return _missing(f"order {args.get('order_id')}")
    oid = args["order_id"]
    return ToolResult(f"{oid}: " + ", ".join(f"{k}={v}" for k, v in sorted(order.items())),
                      [{"entity_id": oid, "fact_key": k, "fact_value": v}
                       for k, v in order.items() if not isinstance(v, (list, dict))])


def get_ticket(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    ticket = world.get("tickets", {}).get(args.get("ticket_id"))
    if ticket is None:
        return _missing(f"ticket {args.get('ticket_id')}")
    tid = args["ticket_id"]
    return ToolResult(f"{tid}: " + ", ".join(f"{k}={v}" for k, v in sorted(ticket.items())),
                      [{"entity_id": tid, "fact_key": k, "fact_value": v} for k, v in ticket.items()])


PACKS: dict[str, dict[str, DomainTool]] = {
    "shopping": {"compare_price": compare_price},
    "travel": {"get_flight": get_flight, "search_flights": search_flights},
    "customer_support": {"lookup_order": lookup_order, "get_ticket": get_ticket},
}

FUNCTIONS: dict[str, dict[str, DomainFunction]] = {}
