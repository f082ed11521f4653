"""Domain tool packs (shopping, travel, customer_support) that run against a case's `world`.

World layouts (all optional; a pack answers only from what the world holds):
  shopping          {"catalog": {product_id: {"name": str, "category": str, "rating": str,
                     "prices": {store: "$12.34"}, "stock": {store: int}}}}
  travel            {"flights": {flight_id: {"origin", "destination", "date", "price",
                     "airline", "depart", "seats"}}, "bookings": {booking_id: {...}},
                     "hotels": {hotel_id: {"city", "name", "nightly_price", "amenities"}}}
  customer_support  {"orders": {order_id: {"status", "items", "total", "user_id"}},
                     "tickets": {ticket_id: {"status", "subject"}},
                     "policies": {category: {"refund_window": "30 days", ...}}}
Each tool returns a text result and facts ({entity_id, fact_key, fact_value}) for replay.
Tools are pure functions of their arguments and the world (a booking is confirmed, not
stored), so a replayed call returns what the original call returned.
"""

from __future__ import annotations

from typing import Any

from provrepair.repair.derive import Context, DomainFunction, Unresolved, as_number
from provrepair.repair.tools.base import DomainTool, ToolPack, ToolResult
from provrepair.repair.tools.declared import spec_of


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
    return _record("flights", "flight_id", args, world)


def search_flights(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    hits = {fid: f for fid, f in world.get("flights", {}).items()
            if all(f.get(k) == args[k] for k in ("origin", "destination", "date") if k in args)}
    facts = [{"entity_id": fid, "fact_key": "price", "fact_value": f.get("price")}
             for fid, f in sorted(hits.items())]
    return ToolResult("; ".join(f"{fid}: {f.get('price')}" for fid, f in sorted(hits.items()))
                      or "no flights", facts)


def lookup_order(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    return _record("orders", "order_id", args, world)


def get_ticket(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    return _record("tickets", "ticket_id", args, world)


def _record(kind: str, key: str, args: dict[str, Any], world: dict[str, Any],
            fields: tuple[str, ...] | None = None) -> ToolResult:
    """The world record `world[kind][args[key]]` as a text result (its listed fields, else all
    of them sorted) and one fact per field (a fact states a JSON scalar: a list or an object
    is shown, not stated). A missing record is named by `key` without its `_id`."""
    entity = args.get(key)
    record = world.get(kind, {}).get(entity)
    if record is None:
        return _missing(f"{key.removesuffix('_id')} {entity}")
    listed = [(f, record[f]) for f in fields if f in record] if fields else list(record.items())
    text = listed if fields else sorted(listed)
    return ToolResult(f"{entity}: " + ", ".join(f"{f}={v}" for f, v in text),
                      [{"entity_id": entity, "fact_key": f, "fact_value": v} for f, v in listed
                       if not isinstance(v, (list, dict))])


def get_product(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    return _record("catalog", "product_id", args, world, ("name", "category", "rating"))


def check_inventory(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    product = world.get("catalog", {}).get(args.get("product_id"))
    store = args.get("store")
    if product is None or store not in product.get("stock", {}):
        return _missing(f"stock of {args.get('product_id')} at {store}")
    count = product["stock"][store]
    value = f"{count} in stock" if count else "out of stock"
    return ToolResult(f"{args['product_id']} at {store}: {value}",
                      [{"entity_id": store, "fact_key": f"stock_{args['product_id']}",
                        "fact_value": value}])


def search_hotels(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    hits = sorted((hid, h) for hid, h in world.get("hotels", {}).items()
                  if h.get("city") == args.get("city"))
    facts = [{"entity_id": hid, "fact_key": k, "fact_value": h[k]}
             for hid, h in hits for k in ("nightly_price", "amenities") if k in h]
    return ToolResult("; ".join(f"{hid}: {h.get('nightly_price')} ({h.get('amenities')})"
                                for hid, h in hits) or "no hotels", facts)


def book_flight(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    fid = args.get("flight_id")
    if fid not in world.get("flights", {}):
        return _missing(f"flight {fid}")
    return ToolResult(f"Booked {fid}: confirmation BK-{fid}",
                      [{"entity_id": fid, "fact_key": "booking", "fact_value": f"BK-{fid}"}])


def cancel_booking(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    fid = args.get("flight_id")
    return ToolResult(f"Cancelled the booking of {fid}",
                      [{"entity_id": fid, "fact_key": "booking", "fact_value": "cancelled"}])


def get_policy(args: dict[str, Any], world: dict[str, Any]) -> ToolResult:
    return _record("policies", "category", args, world, ("refund_window", "return_shipping"))


def pick_hotel(args: dict[str, Any], ctx: Context) -> str:
    """`travel.pick_hotel`: the cheapest visible hotel (by `nightly_price`) that has the
    user's stored amenity preference, if one is stored (`user`.`hotel_amenity`).
    Args: `hotels` (list, or null for every visible hotel)."""
    hotels = args.get("hotels") or ctx.entities_with("nightly_price")
    try:
        need = str(ctx.lookup("user", "hotel_amenity"))
    except Unresolved:
        need = ""
    fitting = [h for h in hotels if need in str(ctx.lookup(h, "amenities"))]
    if not fitting:
        raise Unresolved(f"no visible hotel offers {need!r}")
    priced = [(as_number(ctx.lookup(h, "nightly_price")), i, h) for i, h in enumerate(fitting)]
    return min(priced)[2]


PACKS: dict[str, dict[str, DomainTool]] = {
    "shopping": {"compare_price": compare_price, "get_product": get_product,
                 "check_inventory": check_inventory},
    "travel": {"get_flight": get_flight, "search_flights": search_flights,
               "search_hotels": search_hotels, "book_flight": book_flight,
               "cancel_booking": cancel_booking},
    "customer_support": {"lookup_order": lookup_order, "get_ticket": get_ticket,
                         "get_policy": get_policy},
}
# Each pack tool's side-effect class (what the benchmark domains declare, benchmark/domains)
CLASSES: dict[str, dict[str, tuple[str, str | None]]] = {
    "shopping": {name: ("read_only", None) for name in PACKS["shopping"]},
    "travel": {"get_flight": ("read_only", None), "search_flights": ("read_only", None),
               "search_hotels": ("read_only", None),
               "book_flight": ("compensable", "cancel_booking"),
               "cancel_booking": ("idempotent", None)},
    "customer_support": {name: ("read_only", None) for name in PACKS["customer_support"]},
}


def _pack(domain: str) -> ToolPack:
    return ToolPack(PACKS[domain], [spec_of(name, cls, compensate)
                                    for name, (cls, compensate) in CLASSES[domain].items()])


def shopping_pack() -> ToolPack:
    return _pack("shopping")


def travel_pack() -> ToolPack:
    return _pack("travel")


def customer_support_pack() -> ToolPack:
    return _pack("customer_support")

FUNCTIONS: dict[str, dict[str, DomainFunction]] = {"travel": {"travel.pick_hotel": pick_hotel}}
