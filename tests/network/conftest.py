"""The network tests' test site, and one BROWSERDECK_HOME per module (its service
outlives single tests)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.network.site import NetSite, start_net_site


@pytest.fixture(scope="module", autouse=True)
def bd_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("bdhome")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BROWSERDECK_HOME", str(home))
        mp.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
        mp.delenv("BROWSERDECK_TOKEN", raising=False)
        mp.delenv("BROWSERDECK_URL", raising=False)
        yield home


@pytest.fixture(scope="session")
def site() -> Iterator[NetSite]:
    s = start_net_site()
    yield s
    s.close()
