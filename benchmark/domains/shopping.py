"""Shopping assistance: tracked products, store prices, a wishlist and a budget.

Session (4 turns): compare the stores for the tracked product and record each price; add two
products to the wishlist with their lowest prices; bought one (drop it), new budget, merge
the per-store records into one best offer; then answer from what was saved: the best offer,
the cheapest wishlist item and the budget.
"""

from __future__ import annotations

import random
from typing import Any

from provrepair.benchmark.agent import TurnScript
from provrepair.benchmark.domains.common import ids, person, price
from provrepair.benchmark.scripts import (
    Expr,
    Mutation,
    Mutations,
    Seed,
    Session,
    argmin,
    call,
    consolidate,
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

STORES = ["StoreA", "StoreB", "StoreC", "StoreD", "StoreE", "StoreF"]
PRODUCTS = [("wireless headphones", "audio"), ("running shoes", "footwear"),
            ("espresso machine", "kitchen"), ("mechanical keyboard", "computing"),
            ("smart watch", "wearables"), ("yoga mat", "fitness"), ("reading lamp", "lighting"),
            ("hiking backpack", "outdoor"), ("bluetooth speaker", "audio"),
            ("air fryer", "kitchen"), ("e-reader", "electronics"), ("rain jacket", "apparel"),
            ("standing desk", "furniture"), ("coffee grinder", "kitchen"),
            ("trail camera", "outdoor"), ("electric toothbrush", "personal care")]
TOOLS = [tool("compare_price"), tool("get_product"), tool("check_inventory")]


def cheapest(key: str) -> Expr:
    return argmin(key, None)


def price_of_cheapest(key: str) -> Expr:
    return lookup(cheapest(key), key)


def catalog(rng: random.Random, products: list[str], names: list[tuple[str, str]]) -> dict[str, Any]:
    out = {}
    for pid, (name, category) in zip(products, names, strict=True):
        stores = sorted(rng.sample(STORES[:5], rng.choice([3, 4])))
        base = rng.uniform(30, 240)
        out[pid] = {"name": name, "category": category, "rating": f"{rng.uniform(3.6, 4.9):.1f}",
                    "prices": {s: price(rng, base * 0.85, base * 1.2) for s in stores},
                    "stock": {s: rng.choice([0, 2, 5, 11]) for s in stores}}
    return out


def build(rng: random.Random, rich: int) -> Session:
    names = rng.sample(PRODUCTS, 5)
    pids = ids(rng, "P0", 5, 100, 999, 3)
    world = {"catalog": catalog(rng, pids[:4], names[:4])}
    main, q, r, w, stranger = pids
    budget, budget2 = price(rng, 60, 160), price(rng, 170, 320)
    seeds = _seeds(rng, rich, world, main, budget)
    if rich >= 2:
        seeds.append(Seed("wish:old", f"Wishlist: {names[3][0]} ({w}) lowest price "
                          f"{_low(world, w)}", w, "wish_price", _low(world, w),
                          MemorySource.TOOL_OBSERVATION))
    work = [_compare(world, main, rich), _wishlist(world, main, q, r, rich),
            _lifecycle(world, main, r, budget2)]
    turns = sessions_of(rng, work, _final(world, main), early=True)
    cheap_wish, cheap_store = price(rng, 5, 25), price(rng, 10, 25)
    strangers = [  # another user's records: a cheaper wishlist item, a cheaper store price
        Seed("stranger:wish", f"Saved item: {names[4][0]} ({stranger}) for {cheap_wish}",
             stranger, "wish_price", cheap_wish),
        Seed("stranger:price", f"{main} at StoreF: {cheap_store}", "StoreF", f"price_{main}",
             cheap_store),
    ]
    return Session("shopping", world, TOOLS, seeds, turns, strangers)


def _low(world: dict[str, Any], pid: str) -> str:
    prices: dict[str, str] = world["catalog"][pid]["prices"]
    return min(prices.values(), key=lambda v: float(v.strip("$").replace(",", "")))


def _seeds(rng: random.Random, rich: int, world: dict[str, Any], main: str,
           budget: str) -> list[Seed]:
    name = world["catalog"][main]["name"]
    seeds = [Seed("track:main", f"Tracks the {name} ({main})", main, "name", name),
             Seed("budget", f"Shopping budget: {budget}", "user", "budget", budget)]
    customer = person(rng)
    if rich >= 1:
        seeds += [Seed("profile:name", f"Customer name: {customer}", "user", "customer_name",
                       customer),
                  Seed("profile:color", "Prefers black products", "user", "preferred_color",
                       "black")]
    if rich >= 2:
        seeds.append(Seed("profile:shipping", "Default shipping: standard", "user", "shipping",
                          "standard"))
    return seeds


def _compare(world: dict[str, Any], pid: str, rich: int) -> TurnScript:
    product = world["catalog"][pid]
    key = f"price_{pid}"
    notes: Mutations = [
        write(f"t1.price.{s}", f"price:{pid}:{s}", f"{pid} at {s}: {{v}}",
              derived_fact(s, key, lookup(s, key)), v=lookup(s, key))
        for s in product["prices"]]
    if rich >= 1:
        notes.append(write("t1.rating", f"rating:{pid}", "Rating of the {n}: {r}",
                           derived_fact(pid, "rating", lookup(pid, "rating")),
                           n=lookup(pid, "name"), r=lookup(pid, "rating")))
    return TurnScript(
        content=f"Please compare what stores currently charge for my {product['name']} and "
                "keep a record of each.",
        claim=tpl("You track the {n} (" + pid + ").", n=lookup(pid, "name")),
        plan=tpl("Look up " + pid + " and compare store prices for the {n}.",
                 n=lookup(pid, "name")),
        tool_calls=[call("get_product", product_id=pid), call("compare_price", product_id=pid)],
        answer=tpl("Right now the {n} is cheapest at {s} for {v}.", n=lookup(pid, "name"),
                   s=cheapest(key), v=price_of_cheapest(key)),
        mutations=notes)


def _wish(pid: str) -> Mutation:
    key = f"price_{pid}"
    return write(f"t2.wish.{pid}", f"wish:{pid}", "Wishlist: {n} (" + pid + ") lowest price {v}",
                 derived_fact(pid, "wish_price", price_of_cheapest(key)),
                 n=lookup(pid, "name"), v=price_of_cheapest(key))


def _wishlist(world: dict[str, Any], main: str, q: str, r: str, rich: int) -> TurnScript:
    catalog_ = world["catalog"]
    calls = [call("compare_price", product_id=q), call("compare_price", product_id=r),
             call("get_product", product_id=q), call("get_product", product_id=r)]
    notes: Mutations = [_wish(q), _wish(r)]
    if rich >= 1:
        calls.append(call("check_inventory", product_id=q, store=cheapest(f"price_{q}")))
        notes.append(write("t2.stock", f"stock:{q}", "Stock of " + q + " at {s}: {v}",
                           derived_fact(q, "stock", lookup(cheapest(f"price_{q}"), f"stock_{q}")),
                           s=cheapest(f"price_{q}"),
                           v=lookup(cheapest(f"price_{q}"), f"stock_{q}")))
    return TurnScript(
        content=f"Add the {catalog_[q]['name']} and the {catalog_[r]['name']} to my wishlist "
                "along with their lowest current prices.",
        claim=tpl("Besides the {n}, you are adding two wishlist items.", n=lookup(main, "name")),
        plan=tpl("Compare prices for " + q + " and " + r + " next to the {n}.",
                 n=lookup(main, "name")),
        tool_calls=calls,
        answer=tpl("Lowest prices: {qn} {qv}, {rn} {rv}.", qn=lookup(q, "name"),
                   qv=price_of_cheapest(f"price_{q}"), rn=lookup(r, "name"),
                   rv=price_of_cheapest(f"price_{r}")),
        mutations=notes)


def _lifecycle(world: dict[str, Any], main: str, r: str, budget2: str) -> TurnScript:
    catalog_ = world["catalog"]
    key = f"price_{main}"
    offer = tpl("{s} at {v}", s=cheapest(key), v=price_of_cheapest(key))
    return TurnScript(
        content=f"I already bought the {catalog_[r]['name']}, so drop it from my wishlist. "
                f"My budget is now {budget2}. Also merge the per-store records for the "
                f"{catalog_[main]['name']} into a single best-offer entry.",
        claim=tpl("You bought the {n}.", n=lookup(r, "name")),
        answer=tpl("Done: the {n} is off your wishlist and your records are merged.",
                   n=lookup(r, "name")),
        mutations=[
            delete("t3.drop", [f"wish:{r}"], f"Remove {r} from the wishlist"),
            update("t3.budget", "budget", "budget", f"Shopping budget: {budget2}",
                   const_fact("user", "budget", budget2)),
            consolidate("t3.merge", [f"price:{main}:{s}" for s in catalog_[main]["prices"]],
                        f"offer:{main}", "Best offer for " + main + ": {o}",
                        derived_fact(main, "best_offer", offer), o=offer)])


def _final(world: dict[str, Any], main: str) -> TurnScript:
    name = world["catalog"][main]["name"]
    return TurnScript(
        content=f"Based on what you saved, what is the best offer for the {name}, which item "
                "on my wish list is cheapest, and what budget did I set?",
        claim=tpl(f"Your saved best offer for the {name} is {{o}}.",
                  o=lookup(main, "best_offer")),
        answer=tpl(f"Best saved offer for the {name}: {{o}}. Cheapest wish list item: {{w}} at "
                   "{wv}. Budget: {b}.", o=lookup(main, "best_offer"),
                   w=cheapest("wish_price"), wv=price_of_cheapest("wish_price"),
                   b=lookup("user", "budget")))
