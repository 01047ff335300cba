"""Opening a file whose size is read before its bytes are trusted: it must be a regular
file. A directory has no bytes, a device such as ``/dev/zero`` has endless ones (reading it
whole exhausts memory), and a FIFO blocks the open until a writer comes; each is refused
here, by the error type of the caller's kind of file."""

from __future__ import annotations

import os
import stat


def open_regular(path: str, error: type[Exception]) -> int:
    """A read-only descriptor on ``path``, which must be a regular file, else ``error``
    naming it. O_NONBLOCK keeps the open of a FIFO from waiting for a writer; it changes
    nothing for a regular file."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise error(f"{path!r} is not a regular file.")
    return fd
