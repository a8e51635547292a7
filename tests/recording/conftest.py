from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.recording.site import serve_site


@pytest.fixture(scope="session")
def site() -> Iterator[str]:
    with serve_site() as url:
        yield url
