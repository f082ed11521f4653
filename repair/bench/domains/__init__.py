"""Domain session builders: `BUILDERS[domain](rng, rich) -> Session`."""

from __future__ import annotations

import random
from collections.abc import Callable

from repair.bench.domains import customer_support, shopping, travel
from repair.bench.scripts import Session

Builder = Callable[[random.Random, int], Session]
BUILDERS: dict[str, Builder] = {"shopping": shopping.build, "travel": travel.build,
                                 "customer_support": customer_support.build}
