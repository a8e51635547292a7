from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.widgets.server import missing, serve_widgets


@pytest.fixture(scope="session")
def widget_site() -> Iterator[str]:
    """The widget pages with the libraries' dist files; skips (fails in CI) when the
    libraries are not installed (`make widgets`, part of `make test`)."""
    why = missing()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{why} (CI must run the widget suite)")
        pytest.skip(why)
    with serve_widgets() as url:
        yield url
