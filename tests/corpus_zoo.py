"""A zoo of tiny, odd corpora: the folders a new user points `qspace run` at first.

Each kind is a few KB (the one long block is 300 KB) and stresses one degenerate case the
pipeline and every notebook must hold on: no headings, one document, nothing loads, nothing
detected, one prototype, one huge block, one format only, a gold file about missing documents.
`write(kind, folder)` makes one; `python tests/corpus_zoo.py OUT` writes them all to try by hand.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from make_sample_corpus import build_pdf  # noqa: E402  (the sample corpus's own PDF writer)

# Privacy-policy paragraphs: plain text, blank lines between paragraphs, no heading anywhere.
POLICY = [
    "We collect the information you give us when you create an account, such as your name, email address and "
    "phone number. We also collect information about how you use the service.",
    "We keep your personal data for no longer than 24 months after your account is closed. Backups are deleted within 90 days.",
    "You may ask us to delete your data at any time. We will respond to a deletion request within 30 days.",
    "If you have questions about this policy, email privacy@example.org or write to the Data Protection Officer.",
    "This policy is effective as of January 1, 2025. We may update it from time to time and will notify you by email.",
]
# Narrative prose with no cue any detector reads: no amount, date, duration, modal rule or role.
PROSE = [
    "The river bends twice before it reaches the old mill, and in spring the water runs high and brown.",
    "Children from the village walk along the bank after school, counting herons and throwing sticks.",
    "Nobody remembers who planted the willows, though everyone agrees they were there before the bridge.",
]


def _xlsx(sheets: dict[str, list[list[object]]]) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for name, rows in sheets.items():
        ws = wb.create_sheet(name)
        for row in rows:
            ws.append(row)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _pptx(slides: list[tuple[str, str]]) -> bytes:
    from pptx import Presentation

    deck = Presentation()
    for title, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def _put(folder: Path, rel: str, data: bytes | str) -> None:
    path = folder / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)


def flat_text(folder: Path) -> None:
    """Privacy policies as plain text: paragraphs, no headings at all (the commonest corpus)."""
    for i, company in enumerate(["Acme", "Birch", "Cobalt"]):
        paras = [p.replace("We ", f"{company} ", 1) for p in POLICY[i:] + POLICY[:i]]
        _put(folder, f"{company.lower()}_privacy.txt", "\n\n".join(paras) + "\n")


def one_document(folder: Path) -> None:
    """A single Markdown document in which one question is found: one prototype."""
    _put(folder, "handbook.md", "# Incidents\n\n" + PROSE[0] + "\n\n## Ownership\n\nThe Security Lead owns the incident log.\n")


def empty_folder(folder: Path) -> None:
    """No file at all."""


def all_broken(folder: Path) -> None:
    """Every file fails to load: truncated PDF, a docx that is not a zip, binary bytes in a
    .txt, an empty PDF, a format with no loader."""
    pdf = folder / "_tmp.pdf"
    build_pdf(pdf, [["Page one"]], "<< >>")
    data = pdf.read_bytes()
    pdf.unlink()
    _put(folder, "truncated.pdf", data[: len(data) // 2])
    _put(folder, "not_a_zip.docx", "plain words, not an office file")
    _put(folder, "noise.txt", bytes(range(256)) * 40)
    _put(folder, "empty.pdf", b"")
    _put(folder, "drawing.svg", "<svg xmlns='http://www.w3.org/2000/svg'/>")


def no_affordances(folder: Path) -> None:
    """Prose in which no detector finds anything: no questions, so no prototypes, classes,
    evidence, trees or simulations."""
    _put(folder, "river.txt", "\n\n".join(PROSE) + "\n")
    _put(folder, "willows.md", "# The willows\n\n" + " ".join(reversed(PROSE)) + "\n")


def one_block(folder: Path) -> None:
    """A single 300 KB block of text with no line break at all."""
    sentences = [f"Clause {i} applies to the reporting period and the records kept for it." for i in range(4300)]
    text = " ".join(sentences)
    assert len(text) >= 300_000
    _put(folder, "block.txt", text)


def spreadsheets_only(folder: Path) -> None:
    _put(
        folder,
        "limits.xlsx",
        _xlsx(
            {
                "Approvals": [
                    ["Spend band", "Approver", "Turnaround"],
                    ["Up to $5,000", "Team lead", "2 business days"],
                    ["Over $5,000", "Finance Director", "5 business days"],
                ],
                "Empty": [],
            }
        ),
    )


def pdfs_only(folder: Path) -> None:
    build_pdf(
        folder / "policy.pdf",
        [
            ["#1. Purpose", "", "This policy sets the approval limits for purchases."],
            [
                "#2. Approvals",
                "",
                "The Finance Director must approve purchases over $5,000.",
                "Requests are answered within 5 business days.",
            ],
        ],
        "<< /Title (Purchasing policy) >>",
    )
    build_pdf(folder / "notes.pdf", [PROSE], "<< >>")


def slides_only(folder: Path) -> None:
    _put(
        folder,
        "incident.pptx",
        _pptx(
            [
                ("Incident response", "Report every incident to the Security Lead."),
                ("Severity levels", "SEV1 incidents must be contained within 4 hours."),
            ]
        ),
    )


def front_matter(folder: Path) -> None:
    """Markdown with YAML front matter (as in static-site handbooks), one of it malformed."""
    _put(
        folder,
        "leave.md",
        "---\ntitle: Voluntary leave transfer\nkeywords: leave, donation\n---\n\n"
        "## Eligibility\n\nYou must have a negative leave balance of at least 24 hours.\n",
    )
    _put(folder, "broken.md", "---\ntitle: [unclosed\n---\n\nThe Security Lead owns the incident log.\n")


def gold_missing(folder: Path) -> None:
    """A corpus plus `gold.jsonl` (beside it) whose documents are all absent from it."""
    _put(folder, "handbook.md", "# Leave policy\n\n## Annual leave\n\n" + "\n\n".join(POLICY[1:3]) + "\n")
    rows = [
        {"id": "g1", "question": "Who approves purchases?", "document": "missing/contract.txt", "gold_spans": [[0, 10]]},
        {"id": "g2", "question": "When is it effective?", "document": "nowhere.md", "gold_spans": [[5, 20]]},
    ]
    _put(folder.parent, f"{folder.name}.gold.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


KINDS = {
    f.__name__: f
    for f in [
        flat_text,
        one_document,
        all_broken,
        empty_folder,
        no_affordances,
        one_block,
        spreadsheets_only,
        pdfs_only,
        slides_only,
        front_matter,
        gold_missing,
    ]
}


def write(kind: str, folder: Path) -> Path:
    """Write one zoo corpus into `folder` (created); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    KINDS[kind](folder)
    return folder


def gold_file(folder: Path) -> Path | None:
    """The gold file a kind writes beside its folder, if any."""
    g = folder.parent / f"{folder.name}.gold.jsonl"
    return g if g.is_file() else None


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "zoo")
    for k in KINDS:
        print(write(k, out / k))
