"""Atomic file writing: a file is either there whole or not at all, even after a crash or kill -9.

Used by the counterexample store (``verifier.store``), the campaign directories (``verifier.campaign``) and
the reports (``verifier.report``).  On Linux the data goes to an unnamed file in the directory
(``O_TMPFILE``), fsync, and is then linked under its name; elsewhere (or on a filesystem without
``O_TMPFILE``) to a named temporary file in the same directory, fsync, ``os.replace``.
"""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any

__all__ = ["atomic_write_text", "atomic_write_bytes", "atomic_write_json"]


def atomic_write_text(path: str, text: str) -> None:
    """Write ``text`` atomically, with ordinary permissions.  On Linux the data goes to an unnamed file in
    the directory (``O_TMPFILE``), fsync, and is then linked under its name: a process killed while
    writing (SIGKILL included) leaves nothing behind.  Elsewhere (or on a filesystem without
    ``O_TMPFILE``): a named temporary file in the same directory, fsync, ``os.replace``."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: str, data: bytes) -> None:
    """:func:`atomic_write_text` of bytes (a PNG figure)."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    if _write_unnamed(directory, path, data):
        return
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=directory)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _write_unnamed(directory: str, path: str, data: bytes) -> bool:
    """:func:`atomic_write_text` through an unnamed file (Linux ``O_TMPFILE``, linked by
    ``/proc/self/fd``); False, with nothing written, where that is not available."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return False
    try:
        fd = os.open(directory, flag | os.O_WRONLY, 0o666)  # the umask applies, as for any new file
    except OSError:
        return False
    dirfd = -1
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
        dirfd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        src, name = f"/proc/self/fd/{fd}", os.path.basename(path)
        # an explicit dst_dir_fd makes os.link call linkat(..., AT_SYMLINK_FOLLOW): plain link() would
        # link /proc's symlink itself (EXDEV)
        try:
            os.link(src, name, dst_dir_fd=dirfd, follow_symlinks=True)  # a new name: whole, at once
        except FileExistsError:  # replacing a file: link under a temporary name, then os.replace
            tmp = f".tmp-{os.getpid()}-{os.urandom(4).hex()}"
            os.link(src, tmp, dst_dir_fd=dirfd, follow_symlinks=True)
            try:
                os.replace(tmp, name, src_dir_fd=dirfd, dst_dir_fd=dirfd)
            except BaseException:
                os.unlink(tmp, dir_fd=dirfd)
                raise
    except OSError:  # no /proc, linking refused, a full disk: the named temporary file's way decides
        return False
    finally:
        os.close(fd)
        if dirfd >= 0:
            os.close(dirfd)
    return True


def atomic_write_json(path: str, data: Any) -> None:
    """:func:`atomic_write_text` of indented JSON."""
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=False) + "\n")


def json_tag(path: str, key: str) -> str:
    """The top-level ``key`` of the JSON file ``path`` as text ("" when the file is not a ``*.json`` file, not
    readable, not JSON, nested too deep or not an object): what a certificate file says it is."""
    if not (os.path.isfile(path) and path.endswith(".json")):
        return ""
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return ""
    return str(d.get(key, "")) if isinstance(d, dict) else ""
