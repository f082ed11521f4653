"""Domain session builders: `BUILDERS[domain](rng, rich) -> Session`."""

from __future__ import annotations

import random
from collections.abc import Callable

from provrepair.benchmark.domains import customer_support, shopping, travel
from provrepair.benchmark.scripts import Session

Builder = Callable[[random.Random, int], Session]
BUILDERS: dict[str, Builder] = {"shopping": shopping.build, "travel": travel.build,
                                 "customer_support": customer_support.build}
