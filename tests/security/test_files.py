"""Issue 10 items 5, 6 and 8 (files): what an agent's tool arguments can read and write.

The official MCP client drives `browserdeck mcp` over stdio, started in a workspace
folder (its working directory, the client's root), with real Chromium:

* item 5: uploads only from allowed roots; /etc/shadow, browserdeck's own api-token,
  /proc/self/environ, dot-files and a symlink out of the workspace are refused with
  one message that does not say whether the path exists;
* item 6: `filename` outputs land in <workspace>/browserdeck-output as a plain name,
  never a dot-file, never overwriting (a page-supplied ".git/config" cannot reach git);
* item 8: browser_read_image follows the same rule; a NUL byte or an over-long
  filename is a clear error, not "internal … bug".

Issue 31 item 6: a hard link inside the workspace to a file outside it is refused like a
symlink (nothing in its path says where the file lives), and what is saved for the
agent (outputs, offloaded snapshots, screenshots) is 0600.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from PIL import Image

from mcp import Client, StdioServerParameters
from tests.mcp.harness import call, call_error, mcp_config, ref_of

PAGE = "data:text/html,<title>up</title><input type=file aria-label=Attach>"


def _params(home: Path, chromium: str, cwd: Path) -> StdioServerParameters:
    env = {
        "BROWSERDECK_HOME": str(home),
        "BROWSERDECK_CHROME": chromium,
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
    }
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "browserdeck", "mcp", "--tools", "all"],
        env=env,
        cwd=str(cwd),
    )


async def test_uploads_outputs_and_images_stay_in_the_workspace(
    bd_home: Path, chromium_path: str, tmp_path: Path
) -> None:
    mcp_config(bd_home)
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / ".git" / "config").write_text("[core]\n")
    (work / ".env").write_text("SECRET=1")
    (work / "ok.txt").write_text("fine")
    Image.new("RGB", (20, 20), "blue").save(work / "pic.png")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("OUTSIDE-SECRET")
    Image.new("RGB", (20, 20), "red").save(outside / "secret.png")
    (work / "link.txt").symlink_to(outside / "secret.txt")
    os.link(outside / "secret.txt", work / "hard.txt")
    os.link(outside / "secret.png", work / "hard.png")
    token_file = bd_home / "config" / "api-token"

    async with Client(_params(bd_home, chromium_path, work), read_timeout_seconds=90) as client:
        await call(client, "browser_navigate", {"url": PAGE})
        snap = await call(client, "browser_snapshot")
        attach = ref_of(snap, "button", "Attach")
        assert token_file.is_file()  # the service made its token: it is really there

        # Item 5: one uniform refusal, whether the file exists or not.
        refusals = {}
        for path in (
            "/etc/shadow",
            str(token_file),
            "/proc/self/environ",
            str(work / ".env"),
            str(work / ".git" / "config"),
            str(work / "link.txt"),
            str(work / "hard.txt"),
            str(outside / "secret.txt"),
            str(work / "missing.txt"),
            "/no/such/file",
        ):
            error = await call_error(
                client, "browser_file_upload", {"paths": [path], "ref": attach}
            )
            assert "only existing files inside the allowed folders" in error, error
            refusals[path] = error.replace(repr(path), "<path>")
        assert len(set(refusals.values())) == 1, refusals
        files = await call(
            client,
            "browser_evaluate",
            {"function": "() => document.querySelector('input').files.length"},
        )
        assert files.strip() == "0"
        done = await call(
            client, "browser_file_upload", {"paths": [str(work / "ok.txt")], "ref": attach}
        )
        assert "uploaded 1 file" in done
        name = await call(
            client,
            "browser_evaluate",
            {"function": "() => document.querySelector('input').files[0].name"},
        )
        assert "ok.txt" in name

        # Item 8: browser_read_image under the same rule.
        image = await client.call_tool("browser_read_image", {"path": str(work / "pic.png")})
        assert not image.is_error
        for path in (
            str(outside / "secret.png"),
            str(work / "hard.png"),
            str(token_file),
            "/etc/shadow",
        ):
            error = await call_error(client, "browser_read_image", {"path": path})
            assert "only existing files inside the allowed folders" in error, error

        # Item 6: outputs in <workspace>/browserdeck-output, plain names, no overwriting.
        saved = await call(client, "browser_snapshot", {"filename": ".git/config"})
        assert (work / ".git" / "config").read_text() == "[core]\n", saved
        assert (work / "browserdeck-output" / "config").is_file()
        for bad in (".bashrc", "../.profile", "a\u0000b.txt", "x" * 300 + ".txt"):
            error = await call_error(client, "browser_snapshot", {"filename": bad})
            assert "internal" not in error and "bug" not in error, error
        assert not (work / ".bashrc").exists() and not (tmp_path / ".profile").exists()
        first = await call(client, "browser_snapshot", {"filename": str(outside / "s.txt")})
        second = await call(client, "browser_snapshot", {"filename": "s.txt"})
        assert not (outside / "s.txt").exists()
        out = work / "browserdeck-output"
        assert (out / "s.txt").is_file() and (out / "s-1.txt").is_file(), (first, second)
        # Saved for this user only, as the PDFs and screenshots the engine keeps.
        pdf = await call(client, "browser_pdf_save")
        kept = Path(pdf.rsplit(" to ", 1)[1].strip())
        for path in (out / "s.txt", out / "config", kept):
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, (path, pdf)
