"""PDF through pypdf: one page of text per page; encrypted and image-only files say so."""

from __future__ import annotations

import io

from ...params import CorpusParams
from .base import Page, Stop, Text, error_reason, join_notes
from .pdf_layout import Line, PageStyles, layout_headings


def load_pdf(data: bytes, p: CorpusParams) -> Text:
    from pypdf import PasswordType, PdfReader
    from pypdf.errors import DependencyError

    if not data:
        raise Stop("error", "not a PDF: file is 0 bytes")
    if b"%PDF-" not in data[:1024]:  # readers accept junk before the header, but not 1 KiB of it
        raise Stop("error", f"not a PDF: no %PDF- header in the first 1 KiB (starts with {data[:12]!r})")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)  # tries the empty password itself
        encrypted = reader.is_encrypted
    except DependencyError as e:
        raise Stop("error", f"pdf decryption needs a missing package: {error_reason(e)}") from None
    except Exception as e:
        raise Stop("error", f"pdf parse failed: {error_reason(e)}") from None
    note = ""
    if encrypted:
        try:
            opened = reader.decrypt("")
        except DependencyError as e:
            raise Stop("error", f"pdf decryption needs a missing package: {error_reason(e)}") from None
        except NotImplementedError as e:
            raise Stop("error", f"pdf encryption algorithm not supported: {error_reason(e)}") from None
        except Exception as e:
            raise Stop("error", f"pdf decryption failed: {error_reason(e)}") from None
        if opened == PasswordType.NOT_DECRYPTED:
            raise Stop("encrypted", "password required (the empty password does not open it)")
        note = "encrypted; opened with the empty password"
        if opened == PasswordType.OWNER_PASSWORD:  # pypdf tries the owner password first
            user_empty = _empty_is_user_password(reader)
            if user_empty is False:
                # Only the owner (permissions) password is empty; the author set a user password
                # to keep readers out, and reading through that gap would ignore it.
                raise Stop("encrypted", "user password required (only the owner password is empty)")
            if user_empty is None:
                note = "encrypted; opened with the empty owner password (user password not checked)"
    try:
        n = len(reader.pages)
    except Exception as e:
        raise Stop("error", f"pdf page tree unreadable: {error_reason(e)}") from None
    if n > p.max_pages:
        raise Stop("too_large", f"{n:,} pages, over max_pages={p.max_pages:,}", n_pages=n)
    pages: list[Page] = []
    lines: list[Line] = []  # every page's lines with their font, for the headings
    failed: list[str] = []
    size = 0
    for i in range(n):
        styles = PageStyles()
        try:
            text = reader.pages[i].extract_text(visitor_text=styles) or ""
        except DependencyError as e:  # AES streams are decrypted lazily, page by page
            raise Stop("error", f"pdf decryption needs a missing package: {error_reason(e)}", n_pages=n) from None
        except Exception as e:  # one damaged page should not cost the others
            failed.append(f"page {i + 1}: {error_reason(e)}")
            text = ""
        pages.append((i + 1, text.strip()))
        lines.extend(styles.lines(i, text, len(text) - len(text.lstrip())))
        size += len(pages[-1][1])
        if size > p.max_doc_chars:
            limit = f"max_doc_chars={p.max_doc_chars:,}"
            raise Stop("too_large", f"text is over {limit} by page {i + 1} of {n}", n_pages=n)
    if failed and len(failed) == n:
        raise Stop("error", f"pdf text extraction failed on all {n} pages (first: {failed[0]})", n_pages=n)
    if failed:
        note = join_notes(note, f"text extraction failed on {len(failed)} of {n} pages (first: {failed[0]})")
    empty = "" if any(text for _, text in pages) else _pdf_empty_reason(reader, n)
    return Text(pages, n, note, empty, headings=layout_headings(reader, lines))


def _empty_is_user_password(reader) -> bool | None:
    """Whether "" is the user password (None if this pypdf's internals cannot tell us).

    pypdf's public decrypt() accepts the owner password too and tries it first, so an empty
    owner password hides whether a user password is set; this asks the user-password check alone.
    """
    try:
        from pypdf._encryption import AlgV4, AlgV5

        e = reader._encryption
        if e.V <= 4:
            key = AlgV4.verify_user_password(b"", e.R, e.Length, e.values.O, e.values.U, e.P, e.id1_entry, e.EncryptMetadata)
        else:
            key = AlgV5.verify_user_password(e.R, b"", e.values.U, e.values.UE)
        return bool(key)
    except Exception:
        return None


def _pdf_empty_reason(reader, n: int) -> str:
    if n == 0:
        return "PDF has 0 pages"
    try:
        with_images = sum(1 for page in reader.pages if len(page.images) > 0)
    except Exception:
        with_images = -1
    if with_images == 0:
        return f"no text on any of {n} pages, and no images either (blank or vector-drawn pages)"
    return f"no text layer on any of {n} pages (image-only PDF?)"
