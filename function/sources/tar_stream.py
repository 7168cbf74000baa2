"""A repository tarball read as a stream, with every decompressed byte counted.

The compressed size says little: a 0.25 MB gzip with one long-name header unpacks to 555 MiB, which
``tarfile`` reads into memory before it yields the member. So the tarball is unpacked here, a bounded
piece at a time, and refused (``BodyTooLarge``) past ``max_bytes`` unpacked in total; a pax or GNU
header whose data is larger than ``MAX_HEADER_BYTES`` ends the read before that data is read.
"""

from __future__ import annotations

import tarfile
import zlib
from typing import Any, Protocol

from function.errors import BodyTooLarge

# A path is at most 4096 bytes on Linux; pax records for GitHub's tarballs (the commit) are a few dozen.
MAX_HEADER_BYTES = 64 * 1024
_READ_STEP = 64 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
# Members whose data is read into memory as header text, not streamed.
_HEADER_TYPES = frozenset(
    {
        tarfile.GNUTYPE_LONGNAME,
        tarfile.GNUTYPE_LONGLINK,
        tarfile.XHDTYPE,
        tarfile.XGLTYPE,
        tarfile.SOLARIS_XHDTYPE,
    }
)


class Readable(Protocol):
    def read(self, amt: int, /) -> bytes: ...


class UnpackedReader:
    """``read`` of what ``raw`` holds once gunzipped (or as it is, when it is not gzip), raising
    ``BodyTooLarge`` once more than ``max_bytes`` came out. No call unpacks more than it was asked for,
    so a bomb never takes more memory than one read."""

    def __init__(self, raw: Readable, max_bytes: int, what: str) -> None:
        self._raw = raw
        self._left = max_bytes
        self._max = max_bytes
        self._what = what
        self._pending = b""
        self._gzip: Any = None  # a zlib decompressor once the stream is known to be gzip
        self._started = False
        self._done = False

    def read(self, amt: int = -1, /) -> bytes:
        if amt is None or amt < 0:
            amt = _READ_STEP
        if not self._started:
            self._start()
        out = self._plain(amt) if self._gzip is None else self._gunzip(amt)
        self._left -= len(out)
        if self._left < 0:
            raise BodyTooLarge(f"{self._what}: more than {self._max} bytes once unpacked")
        return out

    def _start(self) -> None:
        self._started = True
        self._pending = self._raw.read(_READ_STEP)
        if self._pending.startswith(_GZIP_MAGIC):
            self._gzip = zlib.decompressobj(16 + zlib.MAX_WBITS)

    def _plain(self, amt: int) -> bytes:
        if not self._pending:
            self._pending = self._raw.read(min(amt, _READ_STEP))
        out, self._pending = self._pending[:amt], self._pending[amt:]
        return out

    def _gunzip(self, amt: int) -> bytes:
        out = bytearray()
        while len(out) < amt and not self._done:
            data = self._gzip.unconsumed_tail or self._pending or self._raw.read(_READ_STEP)
            self._pending = b""
            if not data:
                self._done = True
                break
            out += self._gzip.decompress(data, amt - len(out))
            if self._gzip.eof:
                # Another gzip member may follow (gzip allows several in one file).
                rest = self._gzip.unused_data
                self._gzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
                self._pending = rest
                if not rest and not (rest := self._raw.read(_READ_STEP)):
                    self._done = True
                self._pending = rest
        return bytes(out)


class BoundedTarInfo(tarfile.TarInfo):
    """A member header that refuses a pax or GNU extended header larger than ``MAX_HEADER_BYTES``
    before ``tarfile`` reads its data into memory."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> Any:
        if self.type in _HEADER_TYPES and self.size > MAX_HEADER_BYTES:
            raise tarfile.HeaderError(f"an extended header of {self.size} bytes (at most {MAX_HEADER_BYTES})")
        return super()._proc_member(tarfile_)  # type: ignore[misc]


def open_stream(raw: Readable, max_unpacked_bytes: int, what: str) -> tarfile.TarFile:
    """A forward-only ``TarFile`` over ``raw`` (gzip or plain), bounded as the module says."""
    reader = UnpackedReader(raw, max_unpacked_bytes, what)
    archive: tarfile.TarFile = tarfile.open(  # type: ignore[call-overload]
        fileobj=reader, mode="r|", tarinfo=BoundedTarInfo
    )
    return archive
