"""Which local files an agent may hand to a page or read, and where its outputs go.

An agent's tool arguments are hostile input (a page can talk the model into anything),
and browserdeck may run as root. So:

* **Reading** (uploads, ``browser_read_image``): only regular files inside *allowed
  roots*: the roots the MCP client declares (else, for stdio, its working directory)
  plus the ``uploadRoots`` setting. A root is never ``/``, the home directory itself, a
  dot-directory or inside one, browserdeck's own config/data/state/cache directories,
  or under ``/proc``, ``/sys``, ``/dev``. Inside a root, no path component may start
  with ``.`` (``.ssh``, ``.env``, ``.git``). Symlinks are resolved first, so a link
  inside a root that points outside it is refused; a file with more than one hard link
  is refused too (a hard link inside a root to a file outside it has no path that says
  so). Every refusal says the same thing, so an error never tells whether a path exists.
* **Writing** (a tool's ``filename``): a plain file name (directories dropped), never a
  dot-file, into a dedicated ``browserdeck-output`` folder, created exclusively so an
  existing file is never overwritten (``page.png`` becomes ``page-1.png``), readable by
  this user only (0600: what a page held is nobody else's to read).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from browserdeck.errors import WORKSPACE, Forbidden, Hint, InvalidInput
from browserdeck.util import paths

OUTPUT_FOLDER = "browserdeck-output"
MAX_NAME_BYTES = 255  # NAME_MAX on Linux and macOS
MAX_PATH_CHARS = 4096
# What browserdeck saves for an agent (outputs, screenshots, PDFs, downloads) is page
# content and may be private: this user only.
PRIVATE_FILE_MODE = 0o600
_SYSTEM = (Path("/proc"), Path("/sys"), Path("/dev"))


def _check_text(value: str, what: str) -> None:
    """A clear 400 for what the OS would refuse with a bare ValueError/OSError."""
    if "\0" in value:
        raise InvalidInput(
            f"the {what} contains a NUL byte", hint="give a plain path", code="invalid_path"
        )
    if len(value) > MAX_PATH_CHARS:
        raise InvalidInput(
            f"the {what} is {len(value):,} characters long; the limit is {MAX_PATH_CHARS:,}",
            hint="give a shorter path",
            code="invalid_path",
        )


def _own_dirs() -> list[Path]:
    return [
        d.resolve()
        for d in (paths.config_dir(), paths.data_dir(), paths.state_dir(), paths.cache_dir())
    ]


def _has_dot_part(path: Path) -> bool:
    return any(part.startswith(".") for part in path.parts if part not in ("/", ""))


def _under(path: Path, places: Iterable[Path]) -> bool:
    return any(path == p or path.is_relative_to(p) for p in places)


def usable_root(raw: str | Path) -> Path | None:
    """``raw`` resolved, if it may be an allowed root; else None (see the module docstring)."""
    text = str(raw)
    if not text or "\0" in text or len(text) > MAX_PATH_CHARS:
        return None
    if text.startswith("file://"):
        from urllib.parse import unquote, urlsplit

        text = unquote(urlsplit(text).path)
    try:
        root = Path(text).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    if not root.is_absolute() or root == Path(root.anchor):
        return None
    if root == Path.home().resolve() or _has_dot_part(root):
        return None
    if _under(root, _SYSTEM) or _under(root, _own_dirs()):
        return None
    # A root that contains browserdeck's own folders would expose the tokens in them.
    if any(own.is_relative_to(root) for own in _own_dirs()):
        return None
    return root


def allowed_roots(declared: Iterable[str | Path], settings_roots: Iterable[str]) -> list[Path]:
    """The usable roots among a client's declared roots and the ``uploadRoots`` setting."""
    out: list[Path] = []
    for raw in [*declared, *settings_roots]:
        root = usable_root(raw)
        if root is not None and root not in out:
            out.append(root)
    return out


def _single_regular_file(path: Path) -> bool:
    """A regular file with one name only. A hard link is a second name for the same file
    (inode), and nothing in the path says where the other one is: a link made inside a
    root to ``/etc/shadow`` resolves to itself. So a file with more than one link is
    refused, whichever of its names is inside the root."""
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


def readable_file(raw: str, roots: Iterable[Path], *, what: str = "upload") -> Path:
    """The resolved file ``raw`` names, if an agent may read it; else one uniform refusal."""
    _check_text(raw, f"{what} path")
    roots = list(roots)
    shown = ", ".join(str(r) for r in roots) or "none"
    refusal = Forbidden(
        f"cannot {what} {raw[:200]!r}: only existing files inside the allowed folders "
        f"({shown}) can be used, and never dot-files or dot-folders",
        hint=Hint(
            'put the file in {workspace}, or add its folder to "uploadRoots" in Settings',
            workspace=WORKSPACE,
        ),
        code="path_not_allowed",
    )
    try:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            if not roots:
                raise refusal
            path = roots[0] / path
        real = path.resolve()
    except (OSError, RuntimeError, ValueError):
        raise refusal from None
    for root in roots:
        if real.is_relative_to(root):
            inside = real.relative_to(root)
            if _has_dot_part(inside) or _under(real, _SYSTEM) or _under(real, _own_dirs()):
                raise refusal
            if _single_regular_file(real):
                return real
            raise refusal
    raise refusal


def cdp_upload_file(raw: str, settings_roots: Iterable[str]) -> Path:
    """A file a CDP client of a managed browser hands to a page by path
    (``DOM.setFileInputFiles``, a drag's files): one inside the ``uploadRoots`` setting,
    as ``readable_file`` judges it (no client roots there: the endpoint cannot know a
    client's workspace). Else its one refusal. Our engine's uploads are not paths there:
    Playwright hands the page the file's bytes it read after the front door's check."""
    return readable_file(raw, allowed_roots((), settings_roots))


def download_folder(raw: str, settings_roots: Iterable[str]) -> Path:
    """Where a CDP client of a managed browser may have downloads written: a folder inside
    the system's temporary folder (Playwright's own downloads folder is one) or inside an
    ``uploadRoots`` folder, never a dot-folder, browserdeck's own folders or the system's.
    Else a refusal: a page's download must not land in ``~/.ssh`` or an autostart folder."""
    import tempfile

    _check_text(raw, "download folder")
    refusal = Forbidden(
        f"downloads cannot go to {raw[:200]!r}: only a folder inside the temporary folder "
        f"({tempfile.gettempdir()}) or an uploadRoots folder may take them, never a "
        "dot-folder",
        hint='pick a folder there, or add its parent to "uploadRoots" in Settings',
        code="path_not_allowed",
    )
    try:
        given = Path(raw).expanduser()
        real = given.resolve()
        temp = Path(tempfile.gettempdir()).resolve()
    except (OSError, RuntimeError, ValueError):
        raise refusal from None
    # A relative path (an empty one too) would be the service's own working folder, which
    # the client neither chose nor knows.
    if not given.is_absolute() or _under(real, _SYSTEM) or _under(real, _own_dirs()):
        raise refusal
    if real != temp and real.is_relative_to(temp) and not _has_dot_part(real.relative_to(temp)):
        return real
    for root in allowed_roots((), settings_roots):
        if real.is_relative_to(root) and not _has_dot_part(real.relative_to(root)):
            return real
    raise refusal


def output_name(filename: str) -> str:
    """The plain file name an output may take from ``filename``, or a clear 400."""
    _check_text(filename, "filename")
    name = Path(filename.replace("\\", "/")).name
    if not name or name in (".", ".."):
        raise InvalidInput(
            f"filename {filename[:200]!r} has no file name",
            hint="give a plain name like 'page.png'",
            code="invalid_filename",
        )
    if name.startswith("."):
        raise InvalidInput(
            f"filename {name[:200]!r} starts with '.': dot-files are not written",
            hint="give a plain name like 'page.png'",
            code="invalid_filename",
        )
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise InvalidInput(
            f"filename is {len(name.encode('utf-8', 'surrogatepass'))} bytes long; the "
            f"limit is {MAX_NAME_BYTES}",
            hint="give a shorter name",
            code="invalid_filename",
        )
    return name


def output_folder(workspace: Path | None) -> Path:
    """``<workspace>/browserdeck-output`` when there is a usable workspace, else browserdeck's
    own ``mcp-files`` folder."""
    if workspace is not None and usable_root(workspace) is not None:
        return workspace / OUTPUT_FOLDER
    return paths.artifacts_dir("mcp-files")


def write_new(folder: Path, name: str, data: bytes) -> Path:
    """Write ``data`` to a new file ``folder/name`` (``name-1``, ``name-2`` … if taken)."""
    folder.mkdir(parents=True, exist_ok=True)
    if folder.is_symlink() or not folder.is_dir():
        raise Forbidden(
            f"{folder} is not a plain folder", hint="remove it", code="path_not_allowed"
        )
    stem, dot, suffix = name.partition(".") if not name.startswith(".") else (name, "", "")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    for n in range(1000):
        candidate = folder / (name if n == 0 else f"{stem}-{n}{dot}{suffix}")
        try:
            fd = os.open(candidate, flags, PRIVATE_FILE_MODE)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return candidate
    raise Forbidden(
        f"{folder} already has 1000 files named like {name!r}",
        hint="pick another name",
        code="path_not_allowed",
    )


__all__ = [
    "OUTPUT_FOLDER",
    "PRIVATE_FILE_MODE",
    "allowed_roots",
    "cdp_upload_file",
    "download_folder",
    "output_folder",
    "output_name",
    "readable_file",
    "usable_root",
    "write_new",
]
