"""Writing in place of what is there: only what the service itself wrote, and atomically.

Every command and setting that writes (prepare, a cache directory, index files) goes through
here. The rule: a path that exists is replaced only when it is the service's own output of the
same kind (a prepared folder, an index file with its sidecar), or an empty directory; anything
else is refused before any work is done, naming the path. A folder is written under a fresh
hidden name beside its target and swapped in with one rename, so a reader sees the old folder
or the new one, never a mix; afterwards only the files the old folder's manifest names are
removed, so a file someone put there survives (and keeps the old folder in place, renamed).

What is written follows the umask, as any tool's output does (tempfile's 0700 folders and
0600 files would not): a folder prepared on the host is readable by the container's user.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
from collections.abc import Callable, Iterable
from contextlib import suppress
from pathlib import Path

from service.engine.errors import TableLoadError

# renameat2(2): swap two paths in one step (Linux 3.15+, glibc 2.28+).
AT_FDCWD = -100
RENAME_EXCHANGE = 2


class RefusedOverwrite(TableLoadError):
    """The path to write exists and is not the service's own output: it is left untouched.
    `found` says what is there ("exists and is ...")."""

    def __init__(self, path: object, found: str) -> None:
        super().__init__(
            path,
            f"{found}; refusing to replace it (nothing was written): give a new path or an "
            "empty directory",
        )


def check_folder_target(out: Path, what: str, owned: Callable[[Path], set[str] | None]) -> None:
    """Refuse `out` unless it is missing, an empty directory, or `what` holding only the files
    `owned(out)` names (None: it is not `what` at all)."""
    if not out.exists() and not out.is_symlink():
        return
    if out.is_symlink() or not out.is_dir():
        raise RefusedOverwrite(out, f"exists and is a file, not {what}")
    names = {child.name for child in out.iterdir()}
    if not names:
        return
    mine = owned(out)
    if mine is None:
        held = _entries(sorted(names))
        raise RefusedOverwrite(out, f"exists and is a directory of {held}, not {what}")
    foreign = sorted(names - mine)
    if foreign:
        held = _entries(foreign)
        raise RefusedOverwrite(out, f"is {what}, but also holds {held} the service did not write")


def _entries(names: list[str]) -> str:
    """`3 entries (a, b, c)`: how many, and the first five names."""
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    return f"{len(names)} {'entry' if len(names) == 1 else 'entries'} ({shown})"


def check_file_target(path: Path, what: str, owned: Callable[[Path], bool]) -> None:
    """Refuse `path` unless it is missing or `owned(path)` says the service wrote it."""
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise RefusedOverwrite(path, f"exists and is not a plain file, as {what} is")
    if path.exists() and not owned(path):
        raise RefusedOverwrite(path, f"exists and is a file the service did not write, not {what}")


def staging_folder(out: Path) -> Path:
    """A new, empty, hidden folder beside `out` to write it in (its mode as the umask says)."""
    return _fresh(out, "tmp", lambda path: path.mkdir(0o777))


def staging_file(path: Path) -> Path:
    """A new, empty, hidden file beside `path` to write it in (its mode as the umask says)."""
    return _fresh(path, "tmp", _create_file)


def _fresh(target: Path, kind: str, create: Callable[[Path], object]) -> Path:
    """A new hidden path beside `target`, named `.NAME.KIND-RANDOM`, made by `create`."""
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        path = target.parent / f".{target.name}.{kind}-{secrets.token_hex(4)}"
        try:
            create(path)
        except FileExistsError:
            continue
        return path


def _create_file(path: Path) -> None:
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))


def swap_in(staging: Path, out: Path, old_files: Iterable[str] = ()) -> None:
    """Put the folder `staging` at `out`. An existing `out` (already checked) is exchanged in
    one step where the kernel can, then only `old_files` of it are removed, and the folder if
    that empties it."""
    if not out.exists():
        staging.rename(out)
        return
    if not any(out.iterdir()):
        out.rmdir()
        staging.rename(out)
        return
    if _exchange(staging, out):
        old = staging  # the old folder now lives at the staging name
    else:
        # rename(2) replaces an empty directory: a fresh one reserves the old folder's name.
        old = _fresh(out, "old", lambda path: path.mkdir(0o700))
        out.rename(old)
        staging.rename(out)
    remove_owned(old, old_files)


def remove_owned(folder: Path, names: Iterable[str]) -> None:
    """Delete the named files of `folder`, then the folder if nothing else is in it."""
    for name in names:
        with suppress(FileNotFoundError):
            (folder / name).unlink()
    with suppress(OSError):  # not empty: something the service did not write stays
        folder.rmdir()


def remove_staging(staging: Path) -> None:
    """Delete a staging folder this process created, file by file."""
    if staging.is_dir():
        remove_owned(staging, [child.name for child in staging.iterdir() if child.is_file()])


def _exchange(first: Path, second: Path) -> bool:
    """Swap two paths atomically; False where the system cannot (then nothing happened)."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except AttributeError:
        return False
    result = renameat2(AT_FDCWD, os.fsencode(first), AT_FDCWD, os.fsencode(second), RENAME_EXCHANGE)
    if result == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(second))
