"""Pieces every domain builder uses: money, people, and unrelated background records.

Background ("filler") records are real profile facts that no turn of the session asks
about; they share no word with the requests, so retrieval never returns them. They set the
store size (the paper bins cases by benign active records) without touching the task.
"""

from __future__ import annotations

import random

from provrepair.benchmark.scripts import Seed

FIRST = ["Dana", "Ravi", "Mei", "Jonas", "Amara", "Lucia", "Kenji", "Noor", "Tomas", "Ines",
         "Omar", "Freya", "Hana", "Mateo", "Priya", "Sven"]
LAST = ["Kim", "Patel", "Chen", "Berg", "Okafor", "Rossi", "Sato", "Haddad", "Novak", "Silva"]

FILLERS = [
    ("newsletter_frequency", "monthly", "Newsletter frequency: monthly"),
    ("interface_language", "Portuguese", "Interface language: Portuguese"),
    ("timezone", "UTC+9", "Timezone: UTC+9"),
    ("loyalty_tier", "Gold", "Loyalty tier: Gold"),
    ("receipt_format", "PDF", "Receipts formatted as PDF"),
    ("birthday_month", "October", "Birthday month: October"),
    ("accessibility", "large text", "Accessibility setting: large text"),
    ("two_factor", "authenticator app", "Two-factor login via authenticator app"),
    ("marketing_consent", "declined", "Marketing consent: declined"),
    ("pet", "beagle", "Mentioned owning a beagle"),
    ("hobby", "bouldering", "Weekend hobby: bouldering"),
    ("diet", "vegetarian", "Diet: vegetarian"),
    ("gift_wrap", "never", "Gift wrapping: never"),
    ("invoice_name", "Studio Lumen", "Invoices addressed to Studio Lumen"),
    ("calendar_blocks", "mornings", "Calendar blocks: mornings"),
    ("units", "metric", "Measurement units: metric"),
    ("currency_display", "EUR", "Currency display: EUR"),
    ("handset", "Pixel", "Handset model: Pixel"),
    ("next_of_kin", "sibling", "Next of kin: sibling"),
    ("preferred_pronoun", "they", "Pronoun: they"),
]


def money(amount: float) -> str:
    return f"${amount:,.2f}"


def price(rng: random.Random, low: float, high: float) -> str:
    return money(round(rng.uniform(low, high), 0) - 0.01)


def person(rng: random.Random) -> str:
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def fillers(rng: random.Random, count: int) -> list[Seed]:
    chosen = rng.sample(FILLERS, min(count, len(FILLERS)))
    return [Seed(f"filler:{key}", text, "user", key, value) for key, value, text in chosen]


def ids(rng: random.Random, prefix: str, count: int, low: int, high: int, width: int = 4) -> list[str]:
    return [f"{prefix}{n:0{width}d}" for n in rng.sample(range(low, high), count)]
