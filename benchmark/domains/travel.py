"""Travel booking: flight searches, saved options, a booked return flight, hotels, a cabin
preference and a trip summary.

Session (4 turns): search outbound flights and save each option's fare; book the return
flight the user names, record the booking and search hotels; one option sold out (drop it),
a new cabin preference, the trip summary brought up to date; then answer from the saved
notes: the cheapest saved option, the cabin, the booked airline and the hotel that fits.
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
    argmin,
    call,
    consolidate,
    const_fact,
    delete,
    derived_fact,
    fn,
    lookup,
    sessions_of,
    tool,
    tpl,
    update,
    write,
)
from provrepair.provenance.vocab import MemorySource

AIRPORTS = {"SFO": "San Francisco", "JFK": "New York", "SEA": "Seattle", "BOS": "Boston",
            "ORD": "Chicago", "LAX": "Los Angeles"}
DESTINATIONS = {"HND": "Tokyo", "LHR": "London", "CDG": "Paris", "SYD": "Sydney",
                "FRA": "Frankfurt", "SIN": "Singapore"}
AIRLINES = ["ANA", "Qantas", "Lufthansa", "Delta", "Emirates", "KLM", "United"]
AMENITIES = ["pool", "gym", "breakfast", "airport shuttle", "spa", "parking"]
CABINS = ["economy", "premium economy", "business"]
TOOLS = [tool("search_flights"), tool("get_flight"), tool("search_hotels"),
         tool("book_flight", side_effect=True, compensate="cancel_booking", idempotent=False),
         tool("cancel_booking", side_effect=True, idempotent=True)]


def cheapest_saved() -> Expr:
    return argmin("saved_fare", None)


def _flights(rng: random.Random, home: str, dest: str, dates: tuple[str, str],
             count: int) -> dict[str, Any]:
    """`count` outbound flights, then two return flights on different airlines."""
    numbers = ids(rng, "F0", count + 2, 10, 999, 3)
    date, back = dates
    flights = {f: {"origin": home, "destination": dest, "date": date,
                   "airline": rng.choice(AIRLINES), "price": price(rng, 240, 900),
                   "depart": f"{rng.randint(6, 22):02d}:{rng.choice(['05', '20', '45'])}"}
               for f in numbers[:count]}
    for number, airline in zip(numbers[count:], rng.sample(AIRLINES, 2), strict=True):
        flights[number] = {"origin": dest, "destination": home, "date": back,
                           "airline": airline, "price": price(rng, 240, 900),
                           "depart": f"{rng.randint(6, 22):02d}:15"}
    return flights


def _hotels(rng: random.Random, city: str) -> dict[str, Any]:
    out = {}
    for hid in ids(rng, "H", 4, 100, 999, 3):
        amenities = sorted(rng.sample(AMENITIES, 2))
        out[hid] = {"city": city, "name": f"Hotel {hid[1:]}",
                    "nightly_price": price(rng, 90, 380), "amenities": ", ".join(amenities)}
    return out


def build(rng: random.Random, rich: int) -> Session:
    home, dest = rng.choice(sorted(AIRPORTS)), rng.choice(sorted(DESTINATIONS))
    date, back = f"2025-{rng.randint(3, 9):02d}-{rng.randint(10, 20)}", "2025-10-02"
    flights = _flights(rng, home, dest, (date, back), 3 + (rich >= 1))
    world = {"flights": flights, "hotels": _hotels(rng, DESTINATIONS[dest])}
    outbound = sorted(f for f, v in flights.items() if v["origin"] == home)
    ret, ret2 = [f for f, v in flights.items() if v["origin"] == dest]
    cabin = rng.choice(CABINS)
    cabin2 = rng.choice([c for c in CABINS if c != cabin])
    seeds = _seeds(rng, rich, home, cabin)
    work = [_search(home, dest, date, outbound, rich), _book(world, ret, dest, rich),
            _lifecycle(rng.choice(outbound), cabin2, (ret, ret2), rich)]
    turns = sessions_of(rng, work, _final(rich), early=False)
    other, fare = ids(rng, "F0", 1, 1000, 1999, 3)[0], price(rng, 120, 230)
    strangers = [  # another user's records: a cheaper saved option, a hotel requirement
        Seed("stranger:option", f"Saved option {other}: {fare}", other, "saved_fare", fare,
             MemorySource.TOOL_OBSERVATION),
        Seed("stranger:shuttle", "Insists on a shuttle at the stay", "user", "hotel_amenity",
             "airport shuttle"),
    ]
    return Session("travel", world, TOOLS, seeds, turns, strangers)


def _seeds(rng: random.Random, rich: int, home: str, cabin: str) -> list[Seed]:
    seeds = [Seed("home", f"Home airport: {home}", "user", "home_airport", home),
             Seed("cabin", f"Preferred cabin: {cabin}", "user", "cabin", cabin)]
    if rich >= 1:
        traveler = person(rng)
        seeds += [Seed("profile:name", f"Traveler name: {traveler}", "user", "traveler_name",
                       traveler),
                  Seed("profile:seat", "Seat preference: aisle", "user", "seat", "aisle")]
    if rich >= 2:
        seeds.append(Seed("profile:meal", "Meal request: vegetarian", "user", "meal",
                          "vegetarian"))
    return seeds


def _search(home: str, dest: str, date: str, outbound: list[str], rich: int) -> TurnScript:
    notes: Mutations = [write(f"t1.saved.{f}", f"saved:{f}", "Saved option " + f + ": {v}",
                   derived_fact(f, "saved_fare", lookup(f, "price")), v=lookup(f, "price"))
             for f in outbound]
    calls = [call("search_flights", origin=lookup("user", "home_airport"), destination=dest,
                  date=date)]
    if rich >= 1:
        calls += [call("get_flight", flight_id=f) for f in outbound[:2]]
    return TurnScript(
        content=f"Find flights to {DESTINATIONS[dest]} ({dest}) on {date} and save the fares.",
        claim=tpl("You depart from {h}.", h=lookup("user", "home_airport")),
        plan=tpl("Search flights from {h} to " + dest + " on " + date + ".",
                 h=lookup("user", "home_airport")),
        tool_calls=calls,
        answer=tpl("The cheapest fare is {f} at {v}.", f=argmin("price", outbound),
                   v=lookup(argmin("price", outbound), "price")),
        mutations=notes)


def _book(world: dict[str, Any], ret: str, dest: str, rich: int) -> TurnScript:
    city = DESTINATIONS[dest]
    notes: Mutations = [write("t2.trip", "trip", "Trip: return " + ret + " with {a}",
                   derived_fact("user", "booked_airline", lookup(ret, "airline")),
                   a=lookup(ret, "airline"))]
    calls = [call("get_flight", flight_id=ret), call("book_flight", flight_id=ret)]
    request, answer = f"Book flight {ret} for my return.", tpl("Booked " + ret + " ({b}).",
                                                               b=lookup(ret, "booking"))
    if rich >= 1:
        calls.append(call("search_hotels", city=city))
        request = f"Book flight {ret} for my return and look for accommodation in {city}."
        answer = tpl("Booked " + ret + " ({b}); best stay: {h}.", b=lookup(ret, "booking"),
                     h=fn("travel.pick_hotel"))
        notes += [write("t2.active", "active", "Active booking: " + ret,
                        const_fact("user", "active_flight", ret), source=MemorySource.USER_INPUT),
                  write("t2.depart", "depart", "Return " + ret + " departs {d}",
                        derived_fact(ret, "depart_time", lookup(ret, "depart")),
                        d=lookup(ret, "depart")),
                  write("t2.stay", "stay", "Chosen stay in " + city + ": {h}",
                        derived_fact("user", "stay", fn("travel.pick_hotel")),
                        h=fn("travel.pick_hotel"), source=MemorySource.AGENT_SUMMARY)]
    return TurnScript(
        content=request,
        claim=tpl("You fly home to {h}.", h=lookup("user", "home_airport")),
        plan=tpl("Book " + ret + " back to {h}.", h=lookup("user", "home_airport")),
        tool_calls=calls, answer=answer, mutations=notes)


def _lifecycle(gone: str, cabin2: str, returns: tuple[str, str], rich: int) -> TurnScript:
    ret, ret2 = returns
    summary = tpl("Trip summary: return " + ret2 + " on {a}, departs {d}",
                  a=lookup(ret2, "airline"), d=lookup(ret2, "depart"))
    mutations: Mutations = [
        delete("t3.drop", [f"saved:{gone}"], f"Drop saved option {gone}"),
        update("t3.cabin", "cabin", "cabin", f"Preferred cabin: {cabin2}",
               const_fact("user", "cabin", cabin2)),
        consolidate("t3.trip", ["trip"], "trip2", "{s}",
                    derived_fact("user", "booked_airline", lookup(ret2, "airline")), s=summary)]
    if rich >= 1:
        mutations.append(update("t3.active", "active", "active", "Active booking: " + ret2,
                                const_fact("user", "active_flight", ret2)))
    return TurnScript(
        content=f"{gone} is sold out, please drop it. Switch my cabin preference to "
                f"{cabin2}. I moved my return to {ret2} myself, so bring the trip record up "
                "to date.",
        claim=tpl("Your return was with {a}.", a=lookup(ret, "airline")),
        plan=tpl("Check " + ret2 + " for the trip home to {h}.", h=lookup("user", "home_airport")),
        tool_calls=[call("get_flight", flight_id=ret2)],
        answer=tpl("Done: {g} dropped; your return is now with {a}.", g=gone,
                   a=lookup(ret2, "airline")),
        mutations=mutations)


def _final(rich: int) -> TurnScript:
    hotel = rich >= 1
    return TurnScript(
        content="Looking at my saved trip notes: which saved option is cheapest, what cabin "
                "do I prefer" + (", which airline is my booked return on, and where am I "
                                 "staying?" if hotel else ", and which airline is my booked "
                                 "return on?"),
        claim=tpl("Your booked return flies with {a}.", a=lookup("user", "booked_airline")),
        answer=tpl("Cheapest saved option: {f} at {fv}. Cabin: {c}. Booked airline: {a}." +
                   (" Stay: {h}." if hotel else ""), f=cheapest_saved(),
                   fv=lookup(cheapest_saved(), "saved_fare"), c=lookup("user", "cabin"),
                   a=lookup("user", "booked_airline"),
                   **({"h": lookup("user", "stay")} if hotel else {})))
