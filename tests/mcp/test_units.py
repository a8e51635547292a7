"""Output caps, argument checking, tab claims and tool selection (no browser needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from browserdeck.chrome.procs import pid_alive
from browserdeck.errors import InvalidInput
from browserdeck.mcpserver import client_config_snippet, output
from browserdeck.mcpserver.claims import Owner, TabClaims
from browserdeck.mcpserver.context import Reply
from browserdeck.mcpserver.schema import validate_object
from browserdeck.mcpserver.server import _save_reply, select_tools
from browserdeck.mcpserver.tools import REGISTRY
from browserdeck.policy import confine


def test_cap_offloads_the_full_text_and_says_where(bd_home: Path) -> None:
    text = "\n".join(f"line {i} " + "x" * 50 for i in range(2000))
    out = output.cap(text, tool="browser_snapshot", max_chars=2000, narrow="Narrow it: find")
    assert len(out) <= 2000
    assert "[output cut:" in out and "Narrow it: find" in out
    path = Path(out.split("full text is in ")[1].split(". Narrow")[0])
    assert path.read_text(encoding="utf-8") == text
    assert bd_home in path.parents
    assert output.cap("short", tool="x", max_chars=2000) == "short"


def test_offload_lists_its_folder_only_when_it_must(
    bd_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each listing stats every file the day's offloads left: the folder is listed again
    only when a write could go over the size limit, or a minute on (old files go then)."""
    from browserdeck import artifacts

    listings: list[Path] = []
    real = artifacts.prune

    def counted(folder: Path, keep: Path | None = None) -> list[Path]:
        listings.append(folder)
        return real(folder, keep)

    monkeypatch.setattr(artifacts, "prune", counted)
    monkeypatch.setattr(artifacts.LIMITS, "max_bytes", 2**20)
    monkeypatch.setattr(output, "_listed", {})
    first = output.offload("a" * 400_000, "browser_snapshot")
    old = first.parent / "old.txt"
    old.write_text("from the day before")
    two_days_ago = time.time() - 2 * 86400
    os.utime(old, (two_days_ago, two_days_ago))
    output.offload("b" * 400_000, "browser_snapshot")
    assert len(listings) == 1 and old.exists()  # 800,000 bytes fit: not listed
    output.offload("c" * 400_000, "browser_snapshot")  # could go over: listed
    assert len(listings) == 2 and not old.exists() and first.exists()
    output.offload("d", "browser_snapshot")  # over since the last write: the oldest goes
    assert len(listings) == 3 and not first.exists()
    output.offload("e", "browser_snapshot")
    assert len(listings) == 3
    monkeypatch.setattr(output, "PRUNE_EVERY", 0.0)  # a minute on
    output.offload("f", "browser_snapshot")
    assert len(listings) == 4


def test_arguments_are_checked_once_and_worded_for_an_llm() -> None:
    """The validator checks names (aliases, ignored ones, unknown and missing ones) and the
    tool's own arguments; an argument that fills a request field is left to the request
    model, which checks it once when the tool builds the request."""
    from browserdeck.engine import options as o

    schema = REGISTRY["browser_click"].schema
    # Playwright MCP's spellings: target is the ref; the description is kept for the
    # element check (mcpserver/element_guard.py), an option that changes nothing dropped.
    assert validate_object(
        {"target": "e5", "element": "Save button", "boxes": True}, schema, "browser_click"
    ) == {"ref": "e5", "element": "Save button"}
    with pytest.raises(InvalidInput, match="missing required argument"):
        validate_object({}, schema, "browser_click")
    with pytest.raises(InvalidInput, match="unknown argument 'colour'"):
        validate_object({"ref": "e1", "colour": 1}, schema, "browser_click")
    with pytest.raises(InvalidInput, match="snapshot must be a boolean"):
        validate_object({"ref": "e1", "snapshot": "yes"}, schema, "browser_click")
    # A model field passes the validator as it came, and its model refuses it, naming it.
    assert validate_object({"ref": "e1", "button": "top"}, schema, "browser_click")["button"] == "top"
    with pytest.raises(InvalidInput, match=r"browser_click: .*button: Input should be 'left'"):
        o.act_of({"kind": "click", "ref": "e1", "button": "top"}, where="browser_click")
    fill = REGISTRY["browser_fill_form"].schema
    args = validate_object({"fields": [{"ref": 3, "value": "x"}]}, fill, "browser_fill_form")
    with pytest.raises(InvalidInput, match=r"fields\.0\.ref"):
        o.act_of({"kind": "fill", **args}, where="browser_fill_form")
    # An agent's 800.0 is the integer 800 (a whole float is read as the integer it is).
    resize = validate_object({"width": 800.0, "height": 600}, REGISTRY["browser_resize"].schema, "r")
    act = o.act_of({"kind": "resize", **resize})
    assert isinstance(act, o.ResizeAct) and (act.width, act.height) == (800, 600)


def test_claims_refuse_other_live_owners_until_released(tmp_path: Path) -> None:
    claims = TabClaims(tmp_path / "claims.json")
    a = Owner("a", "agent A", os.getpid())
    b = Owner("b", "agent B", os.getpid())
    assert claims.claim("agent", "T1", a) is None
    holder = claims.claim("agent", "T1", b)
    assert holder is not None and holder.label == "agent A"
    assert claims.claim("agent", "T1", b, force=True) is None
    assert claims.owner_of("agent", "T1").owner == "b"  # type: ignore[union-attr]
    claims.release(b)
    assert claims.owner_of("agent", "T1") is None
    claims.claim("agent", "T2", a)
    claims.prune("agent", {"T3"})
    assert claims.owners("agent") == {}


def test_claims_of_dead_processes_and_lapsed_sessions_are_ignored(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead = int(proc.stdout)
    assert not pid_alive(dead)
    claims = TabClaims(tmp_path / "claims.json")
    claims.claim("agent", "T1", Owner("gone", "old agent", dead))
    claims.claim("agent", "T2", Owner("http", "http agent", os.getpid(), ttl=-1.0))
    fresh = Owner("new", "new agent", os.getpid())
    assert claims.claim("agent", "T1", fresh) is None
    assert claims.claim("agent", "T2", fresh) is None


def test_tool_selection() -> None:
    core = select_tools("core", run_code=False)
    everything = select_tools("all", run_code=False)
    assert "browser_click" in core and "browser_query_dom" not in core
    assert set(core) < set(everything) and "browser_run_code" not in everything
    assert "browser_run_code" in select_tools("all", run_code=True)
    assert list(select_tools("browser_click, browser_snapshot", run_code=False)) == [
        "browser_click",
        "browser_snapshot",
    ]
    with pytest.raises(InvalidInput, match="unknown tool 'browser_fly'"):
        select_tools("browser_fly", run_code=False)
    with pytest.raises(InvalidInput, match="mcpRunCode"):
        select_tools("browser_run_code", run_code=False)


def test_client_config_snippets() -> None:
    stdio = client_config_snippet(tools="all", profile="work")["mcpServers"]["browserdeck"]
    assert stdio["args"][-5:] == ["mcp", "--tools", "all", "--profile", "work"]
    http = client_config_snippet(transport="http", url="http://127.0.0.1:5555", token="tok")[
        "mcpServers"
    ]["browserdeck"]
    assert http == {
        "type": "http",
        "url": "http://127.0.0.1:5555/mcp",
        "headers": {"Authorization": "Bearer tok"},
    }


def test_docs_list_every_tool() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text(encoding="utf-8")
    for name in REGISTRY:
        short = name.replace("browser_navigate_forward", "_forward")
        assert f"`{name}`" in doc or f"`{short}`" in doc, name


def test_offloaded_and_saved_text_no_utf8_carries_is_written_as_u_fffd(
    bd_home: Path, tmp_path: Path
) -> None:
    """run_code's output (or a page's text) may hold a lone surrogate: written as U+FFFD,
    as the wire carries it (before: UnicodeEncodeError, a -32603 "browserdeck bug")."""
    text = "a\ud800b " * 400
    out = output.cap(text, tool="browser_run_code", max_chars=1000)
    path = Path(out.split("full text is in ")[1].split(". ")[0].split("]")[0])
    assert path.read_text(encoding="utf-8") == "a\ufffdb " * 400
    saved = _save_reply(Reply("x\udc00y"), tmp_path, "out.txt")
    assert (tmp_path / "out.txt").read_text(encoding="utf-8") == "x\ufffdy", saved.text


def test_filename_is_a_plain_name_in_the_output_folder(bd_home: Path, tmp_path: Path) -> None:
    # A model (or a page talking to it) must not get /etc/passwd or ~/.bashrc written.
    for name in ("/etc/passwd", "../escape.txt", "~/x/page.png", "d/page.png"):
        assert confine.output_name(name) == Path(name).name
    for bad in (".bashrc", "~/.bashrc", "x/.git", "..", "", "a\0b", "x" * 300):
        with pytest.raises(InvalidInput):
            confine.output_name(bad)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    folder = confine.output_folder(workspace)
    assert folder == workspace / confine.OUTPUT_FOLDER
    assert confine.output_folder(None) == output.saved_dir()
    first = confine.write_new(folder, "page.png", b"1")
    second = confine.write_new(folder, "page.png", b"2")
    assert first.read_bytes() == b"1" and second.name == "page-1.png"


def test_claims_from_several_processes_at_once_are_all_kept(tmp_path: Path) -> None:
    """The claims file is a read-modify-write shared by every `browserdeck mcp` process:
    without the inter-process lock, concurrent claims overwrite each other."""
    path = tmp_path / "claims.json"
    script = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from browserdeck.mcpserver.claims import Owner, TabClaims\n"
        "claims = TabClaims(Path(sys.argv[1]))\n"
        "me = Owner(sys.argv[2], sys.argv[2], int(sys.argv[3]))\n"
        "for i in range(25):\n"
        "    assert claims.claim('agent', f'{sys.argv[2]}-{i}', me) is None\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(path), f"w{n}", str(os.getpid())])
        for n in range(4)
    ]
    assert [p.wait(60) for p in procs] == [0, 0, 0, 0]
    held = TabClaims(path).owners("agent")
    assert len(held) == 100, sorted(held)
