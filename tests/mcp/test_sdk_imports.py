"""What a service started for an MCP client imports before it answers (issue 14).

Each check runs in a fresh interpreter: this test process has imported the whole SDK.
"""

from __future__ import annotations

import subprocess
import sys

# The modules the service imports on its way to answering /mcp (bench/boot_timeline.py).
SERVE_PATH = (
    "import browserdeck.master, browserdeck.service, browserdeck.engine,"
    " browserdeck.api.server, browserdeck.api.app, browserdeck.mcpserver.http"
)


def loaded_after(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return set(done.stdout.split())


def test_the_service_imports_the_sdks_server_pieces_only() -> None:
    loaded = loaded_after(SERVE_PATH)
    assert "mcp.server.lowlevel" in loaded  # the server the service runs
    # The SDK's client and its high-level server come with its package __init__s only.
    assert not {"mcp.client", "mcp.server.mcpserver", "mcp.server.stdio"} & loaded


def test_the_service_does_not_import_httpx_to_start() -> None:
    # httpx (and through it click, rich and pygments) only for a remote or relay profile.
    assert "httpx" not in loaded_after(SERVE_PATH)


def test_the_rest_of_the_sdk_still_imports_after_the_server_pieces() -> None:
    code = (
        "import browserdeck.mcpserver.server\n"
        "from mcp import Client, StdioServerParameters, types\n"
        "import mcp, mcp.server\n"
        "assert mcp.server.MCPServer.__name__ == 'MCPServer'\n"
        "assert types.Tool is mcp.types.Tool\n"
        "assert 'ClientSession' in mcp.__all__"
    )
    assert "mcp.client" in loaded_after(code)


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_sdks_models_are_built_on_first_use() -> None:
    code = (
        "import browserdeck.mcpserver.server\n"
        "import mcp_types\n"
        # Deferred: pydantic says which internal changed if this fails (sdk.py).
        "assert mcp_types.Tool.__pydantic_complete__ is False\n"
        "tool = mcp_types.Tool.model_validate(\n"
        "    {'name': 't', 'inputSchema': {'type': 'object'}})\n"
        "assert tool.input_schema == {'type': 'object'}\n"
        "assert mcp_types.Tool.__pydantic_complete__ is True\n"
        "print(tool.model_dump(by_alias=True, exclude_none=True))\n"
        # The unions of every request (the server never uses them) too.
        "adapter = mcp_types.client_request_adapter\n"
        "assert adapter.pydantic_complete is False\n"
        "ping = adapter.validate_python({'method': 'ping'})\n"
        "assert type(ping).__name__ == 'PingRequest' and adapter.pydantic_complete\n"
    )
    assert run(code) == "{'name': 't', 'inputSchema': {'type': 'object'}}"


def test_our_models_and_pydantics_defaults_stay_as_they_were() -> None:
    code = (
        "from browserdeck.mcpserver import sdk\n"
        "from pydantic import BaseModel\n"
        "from browserdeck.results import Answer\n"
        "assert Answer.__pydantic_complete__\n"
        "with sdk._models_built_on_first_use():\n"
        "    class Ours(BaseModel):  # defined meanwhile, outside the SDK's packages\n"
        "        x: int\n"
        "assert Ours.__pydantic_complete__\n"
        # After it: even a model in the SDK's package is built at once again.
        "Later = type(BaseModel)('Later', (BaseModel,), {'__module__': 'mcp_types.later',\n"
        "    '__annotations__': {'x': 'int'}})\n"
        "assert Later.__pydantic_complete__\n"
        "from pydantic import TypeAdapter\n"
        "with sdk._models_built_on_first_use():\n"
        "    ours = TypeAdapter(int | str)\n"
        "assert ours.pydantic_complete\n"
        "assert TypeAdapter(int, module='mcp_types.later').pydantic_complete\n"
        "print('ok')"
    )
    assert run(code) == "ok"


def test_the_sdk_imports_the_ordinary_way_when_pydantic_differs() -> None:
    # A pydantic whose ConfigWrapper.for_model and TypeAdapter._defer_build are not
    # what sdk.py wraps.
    code = (
        "from pydantic._internal._config import ConfigWrapper\n"
        "merge = ConfigWrapper.__dict__['for_model'].__func__\n"
        "ConfigWrapper.for_model = staticmethod(lambda *a: merge(ConfigWrapper, *a))\n"
        "from pydantic import TypeAdapter\n"
        "TypeAdapter._defer_build = False  # an attribute, not the property sdk.py wraps\n"
        "import browserdeck.mcpserver.server\n"
        "import mcp_types\n"
        "assert mcp_types.Tool.__pydantic_complete__ is True\n"
        "assert mcp_types.client_request_adapter.pydantic_complete is True\n"
        "print('ok')"
    )
    assert run(code) == "ok"
