"""The checks every Office Open XML package passes before a library opens it: a zip, not an old
OLE file, parts that do not inflate past the limits, XML without entity declarations.
"""

from __future__ import annotations

import codecs
import io
import re
import zipfile

from ...params import CorpusParams
from .base import Stop, error_reason

_XML_PROLOG_MAX = 64 * 1024
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


def check_package(data: bytes, p: CorpusParams) -> None:
    """Vet an Office zip package before any parser inflates or parses it.

    The declared uncompressed sizes bound what Python's zipfile will inflate (it stops reading a
    member at its declared size), so checking them bounds the parsers' memory.
    """
    if not data:
        raise Stop("error", "not a zip archive (file is 0 bytes)")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as e:
        if data.startswith(_OLE_MAGIC):
            # Password-protected OOXML is an OLE compound file holding an "EncryptionInfo" stream.
            if "EncryptionInfo".encode("utf-16-le") in data:
                raise Stop("encrypted", "password-protected Office file (OLE container with EncryptionInfo)") from None
            raise Stop("error", "not a zip archive (an OLE compound file: legacy binary Office format?)") from None
        raise Stop("error", f"not a zip archive ({error_reason(e)}; starts with {data[:8]!r})") from None
    with zf:
        infos = zf.infolist()
        total = sum(i.file_size for i in infos)
        if total > p.max_zip_bytes:
            raise Stop("too_large", f"zip expands to {total:,} bytes, over max_zip_bytes={p.max_zip_bytes:,}")
        ratio = total / len(data)
        if ratio > p.max_zip_ratio:
            raise Stop(
                "too_large",
                f"zip compression ratio {ratio:,.0f}:1 ({total:,} bytes from {len(data):,}), over max_zip_ratio={p.max_zip_ratio:g}",
            )
        names = {i.filename for i in infos}
        if "[Content_Types].xml" not in names:
            raise Stop("error", f"not an Office package: [Content_Types].xml missing from the zip ({len(names)} members)")
        for info in infos:
            if info.filename.lower().endswith((".xml", ".rels")):
                _check_xml_prolog(zf, info)


def _check_xml_prolog(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Refuse DTDs: entity declarations are how "billion laughs" and external-entity attacks start.

    A DTD can only sit in the prolog, before the root element, so only the prolog is read: 2 KiB
    covers every real part; a prolog padded with comments past that is read on up to 64 KiB.
    """
    try:
        with zf.open(info) as fh:
            raw = fh.read(2048)
            while True:
                state = _prolog_state(_xml_head_text(raw))
                if state == "dtd" or re.search(rb"<!(DOCTYPE|ENTITY)", raw, re.I):
                    raise Stop("error", f"XML entity declarations are not allowed ({info.filename})")
                more = fh.read(8192) if state == "more" and len(raw) < _XML_PROLOG_MAX else b""
                if not more:
                    break
                raw += more
    except Stop:
        raise
    except Exception as e:
        raise Stop("error", f"zip member {info.filename} unreadable: {error_reason(e)}") from None
    if state == "more" and len(raw) >= _XML_PROLOG_MAX:
        raise Stop("error", f"XML prolog longer than {_XML_PROLOG_MAX // 1024} KiB ({info.filename})")


def _xml_head_text(raw: bytes) -> str:
    """Decode the start of an XML part well enough to read its markup (UTF-8/16/32)."""
    if raw[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff", b"<\x00\x00\x00", b"\x00\x00\x00<"):
        return raw.decode("utf-32-be" if raw[:1] == b"\x00" else "utf-32-le", errors="ignore")
    if raw[:2] in (codecs.BOM_UTF16_LE, b"<\x00"):
        return raw.decode("utf-16-le", errors="ignore")
    if raw[:2] in (codecs.BOM_UTF16_BE, b"\x00<"):
        return raw.decode("utf-16-be", errors="ignore")
    # UTF-8 (or an ASCII-compatible legacy encoding): markup is ASCII, other bytes do not matter
    return raw.removeprefix(codecs.BOM_UTF8).decode("latin-1")


def _prolog_state(text: str) -> str:
    """'dtd' if a declaration precedes the root element, 'ok' if none does, 'more' if undecided."""
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n\ufeff\ufffe":
            i += 1
        if n - i < 4:
            return "more"
        if text.startswith("<?", i):
            end = text.find("?>", i + 2)
            if end < 0:
                return "more"
            i = end + 2
        elif text.startswith("<!--", i):
            end = text.find("-->", i + 4)
            if end < 0:
                return "more"
            i = end + 3
        elif text.startswith("<!", i):
            return "dtd"
        else:
            return "ok"  # the root element (or junk the XML parser will reject)
