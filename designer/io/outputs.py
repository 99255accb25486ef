"""What the tool may write: the one check every output passes, before any work and again at the
moment of writing.

Only a regular file, or a new name in an existing folder, is ever written. A device, FIFO, socket
or folder is refused, naming what it is (replacing `/dev/null` by a regular file, or blocking for
ever on a FIFO, is what a plain `open(path, "w")` does). A command's outputs are also refused in
the installed examples folder (only the maintainers' `build_examples.py` writes there; the app's
dialogs refuse it too) and when one is one of the command's own inputs (a sweep's `-o` naming its
base design would overwrite it). Writers themselves (`designer.io.files.write_text_atomically`,
`StreamedOutput`) write beside the target and rename into place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from designer.model.errors import InputError
from designer.paths import examples_dir


class OutputError(InputError):
    """An output refused before anything was written: `PATH: problem`."""


class NotWritableError(OSError):
    """Raised by the writers for a target that check_target refuses (an OSError, so the callers that
    word "cannot be written (…)" word this one too)."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def is_example(path: str | os.PathLike) -> bool:
    """Whether `path` lies in the installed examples folder, which the tool never writes to."""
    try:
        return Path(os.path.realpath(path)).is_relative_to(Path(os.path.realpath(examples_dir())))
    except (OSError, ValueError):
        return False


def target_problem(path: str | os.PathLike) -> str | None:
    """Why `path` cannot be written, in words (None if it can): what is there is not a regular file,
    or its folder is missing."""
    text = os.fspath(path)
    if not text or "\0" in text:
        return "is not a usable file name"
    target = Path(os.path.realpath(text))
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc})"
    if mode is not None and not stat.S_ISREG(mode):
        return f"is {_kind(mode)}, not a regular file; only regular files are written"
    folder = target.parent
    if not folder.is_dir():
        return f"cannot be written: the folder {folder} does not exist"
    return None


def check_target(path: str | os.PathLike) -> Path:
    """The real path to write for `path` (a symbolic link's target); raises NotWritableError with the
    reason for a target that is not a regular file or a new name."""
    problem = target_problem(path)
    if problem is not None:
        raise NotWritableError(0, problem, os.fspath(path))
    return Path(os.path.realpath(path))


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_outputs(outputs: Iterable[tuple[str, str | os.PathLike]], inputs: Iterable[str | os.PathLike] = ()) -> None:
    """Refuse, before any work, outputs that cannot be written, that name one of `inputs` (the
    files the command reads) or the same file twice. `outputs` are (option, path) pairs, so the
    message names the option: `-o results.csv: is one of this command's inputs (the sweep file)`."""
    read = [(Path(p), _identity(p)) for p in inputs if p]
    written: list[tuple[str, tuple | str]] = []
    for option, path in outputs:
        problem = target_problem(path)
        if problem is None and is_example(path):
            problem = (f"lies in the built-in examples folder ({examples_dir()}), which Cluster Designer never "
                       "writes; choose another folder")
        if problem is not None:
            raise OutputError(f"{option} {os.fspath(path)}", None, problem)
        identity = _identity(path)
        for source, source_identity in read:
            if identity == source_identity:
                raise OutputError(f"{option} {os.fspath(path)}", None,
                                  f"is one of this command's inputs ({source}); writing it would destroy it, "
                                  "choose another name")
        for other, other_identity in written:
            if identity == other_identity:
                raise OutputError(f"{option} {os.fspath(path)}", None, f"is also the output of {other}")
        written.append((option, identity))


def _identity(path: str | os.PathLike) -> tuple | str:
    """The same file whatever it is called: device and inode where it exists (hard links, symbolic
    links and `a/../a` agree), else its real path."""
    try:
        found = os.stat(path)
        return (found.st_dev, found.st_ino)
    except (OSError, ValueError):
        return os.path.realpath(path)


def move_into_place(temporary: str | os.PathLike, path: str | os.PathLike) -> None:
    """Rename a finished temporary file (made beside the target) over `path`: through a symbolic
    link to its target, with the old file's permissions (a new one gets the usual rw-r--r--, not
    the temporary file's private rw-------), and flush the folder. Raises NotWritableError for a target
    that `check_target` refuses (a device, FIFO or folder now stands there)."""
    target = check_target(path)
    existing = existing_mode(target)
    os.chmod(temporary, existing if existing is not None else 0o644)
    os.replace(temporary, target)
    fsync_folder(target.parent)


def existing_mode(target: Path) -> int | None:
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return None


def fsync_folder(folder: Path) -> None:
    """Flush the folder's entry for the renamed file: without it a power cut can undo the rename.
    Where folders cannot be opened or flushed (Windows, some network file systems) the rename is
    all there is."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class StreamedOutput:
    """A file written over a long run (a sweep's rows): the bytes go to a temporary file beside the
    target as they come, and `finish()` renames it over the target, so an existing file is replaced
    only when the run ends; `abandon()` removes the temporary and leaves the target as it was.
    A process killed midway leaves the target untouched and what was appended in `temporary`."""

    def __init__(self, path: str | os.PathLike, *, suffix: str = ".partial"):
        self.path = os.fspath(path)
        target = check_target(path)
        handle, self.temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
        self.file = os.fdopen(handle, "wb", buffering=0)
        self._whole = 0  # bytes of whole records: what a failed append is cut back to

    def append(self, data: bytes) -> None:
        """Write one whole record; if the disk refuses part of it (full, quota), the part written
        is cut off again, so the file never ends in half a row, and the OSError is raised."""
        try:
            view = memoryview(data)
            while view:
                written = self.file.write(view)
                if not written:
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), self.temporary)
                view = view[written:]
        except OSError:
            try:
                os.ftruncate(self.file.fileno(), self._whole)
                os.lseek(self.file.fileno(), self._whole, os.SEEK_SET)
            except OSError:
                pass
            raise
        self._whole += len(data)

    def finish(self) -> None:
        """Flush to disk and rename into place (through a symbolic link to its target, with the old
        file's permissions). Raises OSError with the temporary file left in place: it holds the
        rows, and the caller names it."""
        if not self.file.closed:
            os.fsync(self.file.fileno())
            self.file.close()
        move_into_place(self.temporary, self.path)

    def abandon(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
        with contextlib.suppress(OSError):
            os.unlink(self.temporary)
