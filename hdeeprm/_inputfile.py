"""Check a path a user gave as an input file before anything opens it.

``open`` on a FIFO waits for a writer forever, ``Path.resolve`` raises ``RuntimeError`` on a
symlink loop, and a dangling symlink reads as a plain "not found": each becomes one
:class:`~hdeeprm.errors.InputError` naming the path, the option it came from and the fix.
"""

from __future__ import annotations

import errno
import os
import stat

from hdeeprm.errors import InputError


def check_input_file(
    path: str | os.PathLike[str], what: str = "file", given_by: str | None = None
) -> None:
    """Raise :class:`InputError` unless ``path`` is a regular file (after symlinks).

    Args:
        path: the path as the user gave it.
        what: the kind of file, for the message (``"workload file"``).
        given_by: the option or key it came from (``"-cw"``), named after ``what``.
    """
    if given_by:
        what = f"{what} ({given_by})"
    try:
        info = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(
                f"{what} is a symbolic link loop; point it at a regular file", path
            ) from None
        if exc.errno == errno.ENOENT and os.path.islink(path):
            target = os.readlink(path)
            raise InputError(
                f"{what} is a dangling symbolic link (to {target}, which does not exist)",
                path,
            ) from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise InputError(f"{what} not found", path) from None
        raise InputError(f"cannot read {what}: {exc.strerror or exc}", path) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError(f"{what} is a folder; expected a file", path)
    if not stat.S_ISREG(info.st_mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(info.st_mode) else "a special file"
        raise InputError(
            f"{what} is {kind}, which hdeeprm does not read (it could wait forever); "
            "expected a regular file",
            path,
        )
