"""tests/unit needs no server: asking for the embedded store here is a mistake to catch."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def server_home() -> None:
    pytest.fail("tests/unit runs without a server: move this test to tests/integration")
