#!/usr/bin/env python3
"""Regenerate the generated part of the embedded sample corpus.

The sample corpus under ``sample_corpus/`` describes a fictional company, Northwind Meridian.
All text is original and invented for testing. Three files are hand-written and committed as
they are (``policy/procurement_policy.md``, ``policy/data_classification_policy.html`` and
``finance/budget_guidelines_fy2026.txt``). This script writes the other seven:

* ``finance/quarterly_performance_q2_2025.pdf`` - a small PDF 1.4 file written by hand
  (no PDF library needed), Helvetica text, one content stream per page
* ``policy/travel_expense_policy.docx`` - python-docx, ``Heading 1``/``Heading 2`` styles
* ``finance/approval_matrix.xlsx`` - openpyxl
* ``sop/security_incident_response.pptx`` - python-pptx
* ``finance/metric_catalog.csv``, ``sop/employee_onboarding.json``,
  ``sop/vendor_onboarding.jsonl`` - standard library

The output is deterministic: Office core properties carry fixed dates and every zip member
gets a fixed timestamp, so running the script twice gives byte-identical files (for the same
library versions). Usage::

    python scripts/make_sample_corpus.py [--out sample_corpus]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import io
import json
import re
import zipfile
from pathlib import Path

FIXED_DT = dt.datetime(2025, 7, 1, 9, 0, 0)
FIXED_ZIP_DT = (2025, 7, 1, 9, 0, 0)
FIXED_W3CDTF = "2025-07-01T09:00:00Z"
AUTHOR = "Northwind Meridian"


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def _normalize_zip(path: Path) -> None:
    """Rewrite an OOXML zip with fixed timestamps and fixed core-property dates."""
    with zipfile.ZipFile(path) as zin:
        members = [(info.filename, zin.read(info.filename)) for info in zin.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for name, data in members:
            if name == "docProps/core.xml":
                text = data.decode("utf-8")
                for tag in ("created", "modified"):
                    text = re.sub(
                        rf"(<dcterms:{tag}\b[^>]*>)[^<]*(</dcterms:{tag}>)",
                        rf"\g<1>{FIXED_W3CDTF}\g<2>",
                        text,
                    )
                data = text.encode("utf-8")
            info = zipfile.ZipInfo(name, date_time=FIXED_ZIP_DT)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            zout.writestr(info, data)
    path.write_bytes(out.getvalue())


# --------------------------------------------------------------------------------------------
# PDF: quarterly performance summary
# --------------------------------------------------------------------------------------------

# Each page is a list of lines. A line starting with "#" is drawn in Helvetica-Bold as a
# heading; an empty string is a blank line. Lines are kept short enough to fit a Letter page
# with one-inch margins at 11 pt.
PDF_PAGES: list[list[str]] = [
    [
        "# NORTHWIND MERIDIAN",
        "# Quarterly Performance Summary - Q2 2025",
        "Prepared by Financial Planning and Analysis, 18 July 2025",
        "Document ID: FIN-RPT-2025Q2. Classification: Confidential.",
        "",
        "# 1. Headline Results",
        "Revenue reached $48.6 million in Q2 2025, up 11.2% year over year.",
        "Gross margin was 42.5%, compared with 40.1% in Q2 2024.",
        "EBITDA was $7.9 million, an EBITDA margin of 16.3%.",
        "Customer churn: 3.1% (Q1 2025: 3.6%).",
        "Net revenue retention was 108%.",
        "Operating cash flow was $6.2 million, and closing cash was $31.5 million.",
        "",
        "This was the strongest second quarter in the company's history. Demand for",
        "the fleet analytics product line stayed high, and the price increase that",
        "took effect in February held without a visible effect on renewals. The",
        "integration of the route planning acquisition is now complete.",
        "",
        "# 2. Regional Performance",
        "# 2.1 North America",
        "North America revenue was $29.4 million, 2% above forecast.",
        "Growth came mainly from mid-market logistics customers in the Midwest and",
        "from expansion orders placed by three existing retail accounts.",
        "",
        "# 2.2 EMEA",
        "EMEA revenue was EUR 11.8 million ($12.9 million), 4% below forecast.",
        "Renewals in the United Kingdom and the Nordics were on plan. New business",
        "was weaker than expected, as explained in section 3.2.",
        "",
        "# 2.3 APAC",
        "APAC revenue was $6.3 million, in line with forecast.",
        "APAC added 14 new customers, the most in any quarter since the Singapore",
        "office opened.",
    ],
    [
        "# 3. Variance Analysis",
        "# 3.1 Operating Expenses",
        "Operating expenses were 8% above forecast, driven by accelerated hiring.",
        "Total operating expenses were $13.2 million against a forecast of $12.2 million.",
        "Platform engineering hired 19 people in the quarter against a plan of 11.",
        "Higher cloud hosting costs added a further $0.3 million to the variance.",
        "Operating expenses include $0.4 million of depreciation and amortisation.",
        "",
        "# 3.2 Revenue Variance",
        "The EMEA revenue variance was caused by delayed contract signatures in Germany.",
        "Two of the three delayed contracts were signed in the first week of July, so",
        "most of the shortfall is a timing difference rather than lost business.",
        "",
        "# 3.3 Cost of Sales",
        "Freight costs were $1.1 million below budget due to renegotiated carrier rates.",
        "Sales commissions were $0.4 million above forecast, reflecting strong bookings.",
        "",
        "# 3.4 Summary of Variances",
        "Revenue: actual $48.6 million, forecast $48.5 million, variance +0.2%.",
        "Gross profit: actual $20.7 million, forecast $20.1 million, variance +3.0%.",
        "Operating expenses: actual $13.2 million, forecast $12.2 million, variance +8.2%.",
        "EBITDA: actual $7.9 million, forecast $8.3 million, variance -4.8%.",
        "",
        "# 4. Operating Metrics",
        "Active customers: 1,284 at quarter end.",
        "Average contract value: $38,400.",
        "Days sales outstanding: 47 days (target: 45 days).",
        "Headcount: 612 full-time employees at June 30, 2025.",
        "Support tickets resolved within SLA: 94.8%.",
        "",
        "The increase in days sales outstanding reflects two large public sector",
        "customers in North America whose payment cycles run longer than average.",
        "Both accounts are current, and no provision has been booked against them.",
    ],
    [
        "# 5. Outlook",
        "Full-year revenue is forecast at $197 million to $201 million.",
        "Gross margin is expected to stay between 42% and 43% for the rest of the year.",
        "The forecast assumes an exchange rate of 1.09 US dollars per euro.",
        "",
        "# 6. Actions and Owners",
        "The Financial Planning and Analysis team owns this report.",
        "Hiring in platform engineering is paused until September, except for backfills.",
        "Reforecasts that move full-year revenue by over 3% need approval from the CFO.",
        "Overdue EMEA invoices above EUR 500,000 are escalated to the Treasurer.",
        "The Revenue Operations team will report on the German pipeline every two weeks.",
        "",
        "# 7. Notes",
        "Figures in this summary are unaudited and rounded to one decimal place. The",
        "Audit Committee reviewed an earlier draft on 15 July 2025; the approved minutes",
        "of that meeting are kept by the Company Secretary. Comparisons with Q2 2024",
        "use restated figures that include the route planning business for both years.",
        "The next step in the close calendar is the July flash report, which will be",
        "circulated to the Executive Committee in the second week of August.",
    ],
]


def _pdf_escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _pdf_content(lines: list[str]) -> bytes:
    ops = ["BT", "/F1 11 Tf", "14 TL", "72 720 Td"]
    current = "F1"
    for line in lines:
        if line.startswith("#"):
            text, font = line.lstrip("#").strip(), "F2"
        else:
            text, font = line, "F1"
        if text:
            if font != current:
                ops.append(f"/{font} 11 Tf")
                current = font
            ops.append(f"({_pdf_escape(text)}) Tj")
        ops.append("T*")
    ops.append("ET")
    data = "\n".join(ops) + "\n"
    data.encode("ascii")  # the page text must stay plain ASCII (WinAnsi-safe)
    return data.encode("latin-1")


PDF_INFO = (
    "<< /Title (Quarterly Performance Summary - Q2 2025) "
    "/Author (Northwind Meridian Financial Planning and Analysis) "
    "/Producer (make_sample_corpus.py) "
    "/CreationDate (D:20250718090000Z) /ModDate (D:20250718090000Z) >>"
)


def build_pdf(path: Path, pages: list[list[str]] = PDF_PAGES, info: str = PDF_INFO) -> None:
    """A PDF 1.4 file with one Helvetica content stream per page (lines as in PDF_PAGES);
    the tests' corpus zoo writes its PDFs with it too."""
    n_pages = len(pages)
    # object numbers: 1 catalog, 2 pages, 3 F1, 4 F2, 5 info, then page/content pairs
    first = 6
    page_ids = [first + 2 * i for i in range(n_pages)]
    objs: dict[int, bytes] = {}
    objs[1] = b"<< /Type /Catalog /Pages 2 0 R >>"
    kids = " ".join(f"{p} 0 R" for p in page_ids)
    objs[2] = f"<< /Type /Pages /Kids [{kids}] /Count {n_pages} >>".encode()
    objs[3] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    objs[4] = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"
    objs[5] = info.encode("latin-1")
    for i, lines in enumerate(pages):
        pid, cid = page_ids[i], page_ids[i] + 1
        objs[pid] = (
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents {cid} 0 R >>"
        ).encode()
        stream = _pdf_content(lines)
        objs[cid] = f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"endstream"
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for num in sorted(objs):
        offsets[num] = len(out)
        out += f"{num} 0 obj\n".encode() + objs[num] + b"\nendobj\n"
    size = max(objs) + 1
    xref_at = len(out)
    out += f"xref\n0 {size}\n".encode()
    out += b"0000000000 65535 f \n"
    for num in range(1, size):
        out += f"{offsets[num]:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {size} /Root 1 0 R /Info 5 0 R >>\nstartxref\n{xref_at}\n%%EOF\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(bytes(out))


# --------------------------------------------------------------------------------------------
# DOCX: travel and expense policy
# --------------------------------------------------------------------------------------------

# ("title"|"h1"|"h2"|"p"|"bullet", text)
TRAVEL_POLICY: list[tuple[str, str]] = [
    ("title", "Northwind Meridian Travel and Expense Policy"),
    ("p", "Document ID: POL-FIN-002. Version 5.0. Classification: Internal."),
    ("h1", "1. Purpose"),
    (
        "p",
        "This policy explains what the company pays for when employees travel or incur "
        "business expenses, and how those expenses are approved and reimbursed. It aims to "
        "keep travellers safe and reasonably comfortable while spending the company's money "
        "as carefully as their own.",
    ),
    ("h1", "2. Scope"),
    ("p", "This policy applies to all employees in North America, EMEA and APAC who travel or incur expenses on company business."),
    ("p", "Contractors may not claim travel expenses unless their statement of work expressly allows it."),
    ("h1", "3. Ownership and Effective Date"),
    ("p", "The Finance Operations Team owns this policy."),
    ("p", "Effective date: 2025-03-01"),
    (
        "p",
        "This version replaces the edition published on 1 September 2022. The main changes "
        "are new hotel caps for EMEA and APAC, a lower receipt threshold and a clearer rule "
        "on business class travel.",
    ),
    ("h1", "4. Approvals"),
    ("h2", "4.1 Pre-Trip Approval"),
    ("p", "International travel requires approval from the VP of the traveller's business unit before any booking is made."),
    ("p", "Domestic travel can be booked without pre-trip approval, provided the trip follows the limits in this policy."),
    ("h2", "4.2 Expense Report Approval"),
    ("p", "Expense reports up to $500 may be approved by the employee's direct manager."),
    ("p", "Expense reports over $500 and up to $5,000 require approval from the Department Head."),
    ("p", "Expense reports exceeding $5,000 must be approved by the Corporate Controller."),
    ("p", "Nobody may approve their own expenses or the expenses of their own manager."),
    ("h1", "5. Air and Rail Travel"),
    ("p", "Economy class is required for flights under 6 hours."),
    ("p", "Business class is permitted for flights over 6 hours with approval from the Chief Operating Officer."),
    ("p", "First class air travel is prohibited."),
    (
        "p",
        "Rail travel in EMEA should be booked in standard class, except for journeys over 4 "
        "hours, where first class may be booked if it costs less than EUR 60 more than "
        "standard class.",
    ),
    ("p", "Flights must be booked at least 14 days before departure unless the trip was not known in advance."),
    ("h1", "6. Lodging"),
    ("p", "Hotel rates may not exceed $275 per night in North America."),
    ("p", "In EMEA, hotel rates may not exceed EUR 220 per night, except in London, Paris and Zurich, where the cap is EUR 320 per night."),
    ("p", "In APAC, hotel rates may not exceed SGD 380 per night."),
    ("p", "The regional limits are summarised in the table below."),
    ("table", ""),
    ("h1", "7. Meals and Entertainment"),
    ("p", "Employees may claim meal costs up to $85 per day when travelling in North America."),
    ("p", "Alcohol is not reimbursable unless it is part of a client entertainment event agreed in advance with the Department Head."),
    ("p", "Client entertainment above $250 per person requires approval from the VP of Sales."),
    ("h1", "8. Submission and Reimbursement"),
    ("p", "Expense reports must be submitted within 30 days of the end of the trip."),
    ("p", "Receipts are required for every expense above $25."),
    ("p", "Finance Operations shall reimburse approved expenses within 10 business days of final approval."),
    (
        "p",
        "Reports submitted more than 90 days after the expense date will not be reimbursed, "
        "unless the delay was caused by an outage of a company system.",
    ),
    ("h1", "9. Corporate Cards and Cash Advances"),
    ("p", "Employees who travel more than four times a year must use a corporate card."),
    ("p", "Cash advances are prohibited except for travel to countries where card acceptance is limited."),
    ("p", "The corporate card balance must be paid in full each month; the company does not pay late fees or interest."),
    ("h1", "10. Non-Compliance"),
    ("p", "Claims that break this policy are returned to the employee for correction."),
    ("p", "Repeated violations of this policy are escalated to the Chief Financial Officer."),
    ("p", "Deliberately false claims are treated as misconduct and may lead to dismissal."),
    ("h1", "11. Background"),
    (
        "p",
        "Northwind Meridian moved to a single online booking tool in 2022. Before then, each "
        "region used its own travel agency, and nobody could see total travel spend until "
        "months after the fact. The approved booking tool now shows negotiated hotel rates "
        "first, which has brought average hotel costs down by about nine percent. Most "
        "travellers say the tool is easy to use, although the step of attaching receipts "
        "from a phone still confuses some people.",
    ),
    (
        "p",
        "Travellers who need help while on the road can call the travel desk at any hour. "
        "The desk can rebook flights, change hotels and arrange ground transport, and it "
        "keeps a record of where travellers are in case of an emergency.",
    ),
]

TRAVEL_TABLE = [
    ("Region", "Daily meal allowance", "Hotel cap per night"),
    ("North America", "$85", "$275"),
    ("EMEA", "EUR 75", "EUR 220 (EUR 320 in London, Paris and Zurich)"),
    ("APAC", "SGD 110", "SGD 380"),
]


def build_docx(path: Path) -> None:
    import docx

    d = docx.Document()
    cp = d.core_properties
    cp.author = AUTHOR
    cp.last_modified_by = AUTHOR
    cp.title = "Travel and Expense Policy"
    cp.subject = "POL-FIN-002"
    cp.comments = "Fictional sample document for the qspace-frames test corpus."
    cp.created = FIXED_DT
    cp.modified = FIXED_DT
    cp.last_printed = FIXED_DT
    cp.revision = 1
    for kind, text in TRAVEL_POLICY:
        if kind == "title":
            d.add_heading(text, level=0)
        elif kind == "h1":
            d.add_heading(text, level=1)
        elif kind == "h2":
            d.add_heading(text, level=2)
        elif kind == "p":
            d.add_paragraph(text)
        elif kind == "table":
            t = d.add_table(rows=len(TRAVEL_TABLE), cols=len(TRAVEL_TABLE[0]))
            t.style = "Table Grid"
            for r, row in enumerate(TRAVEL_TABLE):
                for c, val in enumerate(row):
                    t.cell(r, c).text = val
        else:  # pragma: no cover
            raise ValueError(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    d.save(str(path))
    _normalize_zip(path)


# --------------------------------------------------------------------------------------------
# XLSX: approval matrix
# --------------------------------------------------------------------------------------------

MATRIX_HEADER = ("Ref", "Transaction type", "Threshold", "Approver", "Approval SLA", "Rule")
MATRIX_ROWS = [
    (
        "AM-01",
        "Customer contract",
        "up to $250,000",
        "VP of Sales",
        "2 business days",
        "Customer contracts up to $250,000 may be signed by the VP of Sales.",
    ),
    (
        "AM-02",
        "Customer contract",
        "over $250,000 and up to $1,000,000",
        "Chief Revenue Officer",
        "3 business days",
        "Customer contracts over $250,000 and up to $1,000,000 require approval from the Chief Revenue Officer.",
    ),
    (
        "AM-03",
        "Customer contract",
        "over $1,000,000",
        "Chief Executive Officer",
        "5 business days",
        "Customer contracts exceeding $1,000,000 must be approved by the Chief Executive Officer.",
    ),
    (
        "AM-04",
        "Price discount",
        "up to 15% off list price",
        "Regional Sales Director",
        "1 business day",
        "Discounts up to 15% off list price may be approved by the Regional Sales Director.",
    ),
    (
        "AM-05",
        "Price discount",
        "above 15% and up to 30%",
        "VP of Sales",
        "2 business days",
        "Discounts above 15% and up to 30% require approval from the VP of Sales.",
    ),
    (
        "AM-06",
        "Price discount",
        "above 30%",
        "Chief Financial Officer",
        "3 business days",
        "Discounts above 30% require approval from the Chief Financial Officer.",
    ),
    (
        "AM-07",
        "Capital expenditure",
        "up to $100,000",
        "VP of Operations",
        "3 business days",
        "Capital expenditure up to $100,000 requires approval from the VP of Operations.",
    ),
    (
        "AM-08",
        "Capital expenditure",
        "over $100,000 and up to $1,000,000",
        "Chief Financial Officer",
        "5 business days",
        "Capital expenditure over $100,000 and up to $1,000,000 must be approved by the Chief Financial Officer.",
    ),
    (
        "AM-09",
        "Capital expenditure",
        "over $1,000,000",
        "Board of Directors",
        "Next board meeting",
        "Capital expenditure exceeding $1,000,000 requires approval from the Board of Directors.",
    ),
    (
        "AM-10",
        "Bad debt write-off",
        "up to $10,000",
        "Corporate Controller",
        "2 business days",
        "Bad debt write-offs up to $10,000 may be approved by the Corporate Controller.",
    ),
    (
        "AM-11",
        "Bad debt write-off",
        "over $10,000",
        "Chief Financial Officer",
        "5 business days",
        "Bad debt write-offs over $10,000 require approval from the Chief Financial Officer.",
    ),
    (
        "AM-12",
        "Customer refund or credit note",
        "up to $5,000",
        "Customer Success Manager",
        "1 business day",
        "Customer refunds and credit notes up to $5,000 may be approved by the Customer Success Manager.",
    ),
    (
        "AM-13",
        "Customer refund or credit note",
        "over $5,000",
        "Corporate Controller",
        "2 business days",
        "Customer refunds and credit notes over $5,000 require approval from the Corporate Controller.",
    ),
    (
        "AM-14",
        "Manual journal entry",
        "over $50,000",
        "Corporate Controller",
        "Before posting",
        "Manual journal entries over $50,000 must be reviewed by the Corporate Controller before posting.",
    ),
    (
        "AM-15",
        "Customer credit limit",
        "above $500,000",
        "Treasurer",
        "2 business days",
        "Customer credit limits above $500,000 require approval from the Treasurer.",
    ),
    (
        "AM-16",
        "Sponsorship or charitable donation",
        "any amount",
        "Chief Marketing Officer",
        "5 business days",
        "Sponsorships and charitable donations require approval from the Chief Marketing Officer; political donations are prohibited.",
    ),
    (
        "AM-17",
        "Legal settlement",
        "up to $100,000",
        "General Counsel",
        "5 business days",
        "Legal settlements up to $100,000 may be approved by the General Counsel.",
    ),
    (
        "AM-18",
        "Legal settlement",
        "over $100,000",
        "Chief Executive Officer",
        "10 business days",
        "Legal settlements over $100,000 require approval from the Chief Executive Officer.",
    ),
    (
        "AM-19",
        "Bank account opening or closure",
        "any",
        "Treasurer and Chief Financial Officer",
        "5 business days",
        "Opening or closing a bank account requires approval from both the Treasurer and the Chief Financial Officer.",
    ),
    (
        "AM-20",
        "Foreign exchange hedge",
        "above EUR 2,000,000 notional",
        "Chief Financial Officer",
        "2 business days",
        "Foreign exchange hedges above EUR 2,000,000 notional require approval from the Chief Financial Officer.",
    ),
    (
        "AM-21",
        "Intercompany loan",
        "any amount",
        "Chief Financial Officer",
        "5 business days",
        "Intercompany loans of any amount must be approved by the Chief Financial Officer and documented by Legal.",
    ),
    (
        "AM-22",
        "Off-cycle payroll payment",
        "above $15,000",
        "VP of Finance",
        "1 business day",
        "Off-cycle payroll payments above $15,000 require approval from the VP of Finance.",
    ),
]
MATRIX_ABOUT = [
    "Corporate Approval Matrix (FIN-MTX-001)",
    "The Corporate Controller owns this matrix.",
    "Effective date: 2025-02-01",
    "This matrix applies to all Northwind Meridian legal entities in North America, EMEA and APAC.",
    "Purchases of goods and services follow the Procurement Policy (POL-PRC-004) and are not listed here.",
    "Approvals in this matrix may not be delegated below the listed role, except during documented leave, when the approver's own manager may act.",
    "Requests that are not decided within the approval SLA are escalated to the Corporate Controller.",
    "Amounts in other currencies are converted to US dollars at the planning rate before the threshold is applied.",
    "The matrix was first drawn up in 2021 after the external auditors recommended a single reference for signing authority. It is reviewed every year in January.",
]


def build_xlsx(path: Path) -> None:
    import openpyxl
    from openpyxl.styles import Alignment, Font

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Approval Matrix"
    ws.append(MATRIX_HEADER)
    for row in MATRIX_ROWS:
        ws.append(row)
    for cell in ws[1]:
        cell.font = Font(bold=True)
    widths = {"A": 8, "B": 32, "C": 34, "D": 36, "E": 20, "F": 100}
    for col, w in widths.items():
        ws.column_dimensions[col].width = w
    for row in ws.iter_rows(min_row=2):
        row[5].alignment = Alignment(wrap_text=True, vertical="top")
    ws.freeze_panes = "A2"

    about = wb.create_sheet("About")
    for i, line in enumerate(MATRIX_ABOUT, start=1):
        about.cell(row=i, column=1, value=line)
    about["A1"].font = Font(bold=True)
    about.column_dimensions["A"].width = 120

    p = wb.properties
    p.creator = AUTHOR
    p.lastModifiedBy = AUTHOR
    p.title = "Corporate Approval Matrix"
    p.created = FIXED_DT
    p.modified = FIXED_DT
    path.parent.mkdir(parents=True, exist_ok=True)
    wb.save(str(path))
    _normalize_zip(path)


# --------------------------------------------------------------------------------------------
# PPTX: security incident response SOP
# --------------------------------------------------------------------------------------------

PPTX_TITLE = ("Security Incident Response Procedure", "SOP-SEC-001. Version 2.3. Prepared by IT Security.")
PPTX_SLIDES: list[tuple[str, list[str]]] = [
    (
        "1. Purpose and Scope",
        [
            "This procedure defines how Northwind Meridian detects, contains and recovers from security incidents.",
            "This procedure applies to all employees, contractors and systems in North America, EMEA and APAC.",
            "IT Security is responsible for maintaining this procedure.",
            "Effective date: 2025-05-01",
        ],
    ),
    (
        "2. Roles",
        [
            "Incident Commander: leads the response and makes the operational decisions during a SEV1 or SEV2 incident.",
            "Security Operations Center (SOC): monitors alerts around the clock and performs first triage.",
            "Chief Information Security Officer (CISO): accountable for the security program and for external notifications.",
            "General Counsel: advises on regulatory and contractual notification duties.",
            "Communications Lead: prepares internal updates and customer messages.",
        ],
    ),
    (
        "3. Severity Levels",
        [
            "SEV1: confirmed exposure of Restricted data, or a complete outage of a customer-facing service.",
            "SEV2: a compromised account or host with no confirmed data exposure.",
            "SEV3: malware blocked on a single device, or a policy violation with limited impact.",
            "SEV4: suspicious activity that needs investigation but shows no sign of compromise.",
        ],
    ),
    (
        "4. Response Steps (1 of 2)",
        [
            "Step 1: The SOC logs the alert in the incident tracker and opens a case.",
            "Step 2: The SOC assigns a severity within 30 minutes of detection.",
            "Step 3: For SEV1 and SEV2 incidents, the on-call Incident Commander opens a bridge call and takes ownership.",
            "Step 4: The response team contains the incident by isolating affected hosts, disabling compromised accounts and blocking malicious indicators.",
        ],
    ),
    (
        "4. Response Steps (2 of 2)",
        [
            "Step 5: Engineers remove the root cause and any attacker persistence.",
            "Step 6: Services are restored from known-good backups and monitored for recurrence for 14 days.",
            "Step 7: The Incident Commander schedules the post-incident review and records actions in the tracker.",
        ],
    ),
    (
        "5. Escalation",
        [
            "SEV1 incidents must be escalated to the Incident Commander within 15 minutes of classification.",
            "If a SEV1 incident involves customer personal data, escalate to the CISO immediately.",
            "SEV2 incidents are escalated to the Incident Commander within 1 hour.",
            "The Incident Commander escalates to the General Counsel when regulatory notification may be required.",
            "SEV3 and SEV4 incidents are handled by the SOC and are not escalated unless they recur.",
        ],
    ),
    (
        "6. Service Levels (SLA)",
        [
            "SLA: SEV1 incidents must be contained within 4 hours.",
            "SEV2 incidents must be contained within 24 hours.",
            "SEV3 incidents must be resolved within 5 business days.",
            "In EMEA, the supervisory authority must be notified within 72 hours of confirming a personal data breach.",
            "Customers affected by a SEV1 incident must receive a first notice within 48 hours.",
        ],
    ),
    (
        "7. Rules and Spending Authority",
        [
            "Paying a ransom is prohibited.",
            "Forensic support spend up to $50,000 per incident may be approved by the CISO.",
            "Forensic support spend exceeding $50,000 requires approval from the Chief Financial Officer.",
            "Evidence must be preserved for 12 months unless Legal places it on hold for longer.",
            "Staff may not discuss an active incident on social media or with the press.",
        ],
    ),
    (
        "8. Post-Incident Review",
        [
            "A post-incident review must be completed within 5 business days for SEV1 and SEV2 incidents.",
            "The review is blameless and looks for contributing factors rather than individual fault.",
            "Each action item is given an owner and a due date in the tracker.",
        ],
    ),
    (
        "9. Background",
        [
            "Last year the SOC handled 1,940 alerts, of which 37 became incidents and 2 were rated SEV1.",
            "The tabletop exercise in March walked through a ransomware scenario step by step. The approved playbooks held up well, although several contact lists were out of date.",
        ],
    ),
]
PPTX_SEVERITY_TABLE = [
    ("Severity", "Containment target", "Escalation"),
    ("SEV1", "4 hours", "Incident Commander within 15 minutes"),
    ("SEV2", "24 hours", "Incident Commander within 1 hour"),
    ("SEV3", "5 business days", "SOC only"),
    ("SEV4", "Best effort", "SOC only"),
]


def build_pptx(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches, Pt

    prs = Presentation()
    cp = prs.core_properties
    cp.author = AUTHOR
    cp.last_modified_by = AUTHOR
    cp.title = PPTX_TITLE[0]
    cp.subject = "SOP-SEC-001"
    cp.comments = "Fictional sample document for the qspace-frames test corpus."
    cp.created = FIXED_DT
    cp.modified = FIXED_DT
    cp.last_printed = FIXED_DT
    cp.revision = 1

    s = prs.slides.add_slide(prs.slide_layouts[0])
    s.shapes.title.text = PPTX_TITLE[0]
    s.placeholders[1].text = PPTX_TITLE[1]

    for title, bullets in PPTX_SLIDES:
        s = prs.slides.add_slide(prs.slide_layouts[1])
        s.shapes.title.text = title
        tf = s.placeholders[1].text_frame
        tf.text = bullets[0]
        for b in bullets[1:]:
            tf.add_paragraph().text = b
        for para in tf.paragraphs:
            for run in para.runs:
                run.font.size = Pt(18)
        if title.startswith("3. Severity"):
            # severity summary table on its own slide, after the definitions
            t = prs.slides.add_slide(prs.slide_layouts[5])
            t.shapes.title.text = "3.1 Severity Summary"
            rows, cols = len(PPTX_SEVERITY_TABLE), len(PPTX_SEVERITY_TABLE[0])
            shape = t.shapes.add_table(rows, cols, Inches(0.5), Inches(1.8), Inches(9), Inches(3))
            for r, row in enumerate(PPTX_SEVERITY_TABLE):
                for c, val in enumerate(row):
                    shape.table.cell(r, c).text = val
    path.parent.mkdir(parents=True, exist_ok=True)
    prs.save(str(path))
    _normalize_zip(path)


# --------------------------------------------------------------------------------------------
# CSV: metric catalog
# --------------------------------------------------------------------------------------------

METRIC_HEADER = (
    "metric_id",
    "metric_name",
    "category",
    "definition",
    "unit",
    "frequency",
    "owner",
    "target",
    "alert_rule",
    "last_reviewed",
)
METRIC_ROWS = [
    (
        "MET-001",
        "Revenue",
        "Finance",
        "Revenue recognised in the period under the company's revenue recognition policy.",
        "USD",
        "Monthly",
        "Revenue Accounting",
        "Annual operating plan",
        "Revenue more than 3% below plan in any month is escalated to the VP of Finance.",
        "2025-01-20",
    ),
    (
        "MET-002",
        "Gross margin",
        "Finance",
        "Revenue minus cost of sales, divided by revenue.",
        "Percent",
        "Monthly",
        "Financial Planning and Analysis",
        "At least 42%",
        "Gross margin below 40% for two consecutive months must be escalated to the Chief Financial Officer.",
        "2025-01-20",
    ),
    (
        "MET-003",
        "EBITDA margin",
        "Finance",
        "Earnings before interest, taxes, depreciation and amortisation, divided by revenue.",
        "Percent",
        "Quarterly",
        "Financial Planning and Analysis",
        "At least 15%",
        "",
        "2025-01-20",
    ),
    (
        "MET-004",
        "Operating expenses",
        "Finance",
        "Total operating expenses including depreciation and amortisation.",
        "USD",
        "Monthly",
        "Financial Planning and Analysis",
        "Within budget",
        "A variance above 5% requires a written explanation from the cost center owner.",
        "2025-01-20",
    ),
    (
        "MET-005",
        "Forecast accuracy",
        "Finance",
        "Absolute difference between forecast and actual revenue, divided by actual revenue.",
        "Percent",
        "Quarterly",
        "Financial Planning and Analysis",
        "Within 2%",
        "",
        "2025-02-03",
    ),
    (
        "MET-006",
        "Customer churn",
        "Customer",
        "Customers lost in the period divided by customers at the start of the period.",
        "Percent",
        "Quarterly",
        "Customer Success",
        "Below 3.5%",
        "Churn above 4% in any region triggers a retention review led by the VP of Customer Success.",
        "2025-02-03",
    ),
    (
        "MET-007",
        "Net revenue retention",
        "Customer",
        "Recurring revenue from the customers of a year ago, including expansion and churn, divided by their recurring revenue a year ago.",
        "Percent",
        "Quarterly",
        "Customer Success",
        "At least 105%",
        "",
        "2025-02-03",
    ),
    (
        "MET-008",
        "Active customers",
        "Customer",
        "Customers with at least one live subscription at the end of the period.",
        "Count",
        "Monthly",
        "Revenue Operations",
        "",
        "",
        "2025-02-03",
    ),
    (
        "MET-009",
        "Average contract value",
        "Customer",
        "Annual contract value of new contracts divided by the number of new contracts.",
        "USD",
        "Quarterly",
        "Revenue Operations",
        "",
        "",
        "2025-02-03",
    ),
    (
        "MET-010",
        "Customer acquisition cost",
        "Customer",
        "Sales and marketing expense divided by the number of new customers.",
        "USD",
        "Quarterly",
        "Marketing Operations",
        "",
        "",
        "2025-02-03",
    ),
    (
        "MET-011",
        "CAC payback period",
        "Customer",
        "Months of gross profit needed to recover the customer acquisition cost.",
        "Months",
        "Quarterly",
        "Marketing Operations",
        "Under 15 months",
        "A payback period over 18 months is reported to the Chief Revenue Officer.",
        "2025-02-03",
    ),
    (
        "MET-012",
        "Days sales outstanding",
        "Working capital",
        "Average trade receivables divided by revenue, multiplied by the number of days in the period.",
        "Days",
        "Monthly",
        "Treasury",
        "45 days",
        "DSO above 55 days is escalated to the Treasurer.",
        "2025-02-10",
    ),
    (
        "MET-013",
        "Days payable outstanding",
        "Working capital",
        "Average trade payables divided by cost of sales, multiplied by the number of days in the period.",
        "Days",
        "Monthly",
        "Treasury",
        "45 days",
        "",
        "2025-02-10",
    ),
    (
        "MET-014",
        "Invoice processing time",
        "Working capital",
        "Business days from receipt of a supplier invoice to its approval for payment.",
        "Business days",
        "Monthly",
        "Accounts Payable",
        "Within 5 business days of receipt",
        "",
        "2025-02-10",
    ),
    (
        "MET-015",
        "Purchase order compliance",
        "Procurement",
        "Share of supplier spend with a purchase order raised before the invoice date.",
        "Percent",
        "Monthly",
        "Procurement Team",
        "At least 98%",
        "Compliance below 95% is reported to the Director of Procurement.",
        "2025-02-10",
    ),
    (
        "MET-016",
        "Vendor onboarding cycle time",
        "Procurement",
        "Business days from a complete vendor request to activation in the vendor master file.",
        "Business days",
        "Monthly",
        "Vendor Management Office",
        "10 business days",
        "",
        "2025-02-10",
    ),
    (
        "MET-017",
        "Support SLA attainment",
        "Operations",
        "Share of support tickets resolved within their service level agreement.",
        "Percent",
        "Monthly",
        "Customer Support",
        "At least 95%",
        "",
        "2025-03-03",
    ),
    (
        "MET-018",
        "Priority 1 first response time",
        "Operations",
        "Minutes from creation of a priority 1 ticket to the first response from an engineer.",
        "Minutes",
        "Weekly",
        "Customer Support",
        "Within 30 minutes",
        "Priority 1 tickets without a response after 60 minutes are escalated to the Support Duty Manager.",
        "2025-03-03",
    ),
    (
        "MET-019",
        "SEV1 security incidents",
        "Security",
        "Number of incidents classified as SEV1 under the incident response procedure.",
        "Count",
        "Monthly",
        "IT Security",
        "0",
        "",
        "2025-03-03",
    ),
    (
        "MET-020",
        "Mean time to contain SEV1",
        "Security",
        "Average hours from classification of a SEV1 incident to containment.",
        "Hours",
        "Quarterly",
        "IT Security",
        "Within 4 hours",
        "",
        "2025-03-03",
    ),
    (
        "MET-021",
        "Headcount",
        "People",
        "Full-time equivalent employees on payroll at the end of the period.",
        "FTE",
        "Monthly",
        "People Operations",
        "Budgeted headcount",
        "",
        "2025-03-17",
    ),
    (
        "MET-022",
        "Voluntary attrition",
        "People",
        "Voluntary leavers in the last twelve months divided by average headcount.",
        "Percent",
        "Monthly",
        "People Operations",
        "Below 12%",
        "",
        "2025-03-17",
    ),
    (
        "MET-023",
        "Cloud hosting cost per customer",
        "Operations",
        "Cloud hosting invoices for the period divided by active customers.",
        "USD",
        "Monthly",
        "Platform Engineering",
        "",
        "",
        "2025-03-17",
    ),
    (
        "MET-024",
        "Budget variance by department",
        "Finance",
        "Actual spend minus budget, divided by budget, for each department.",
        "Percent",
        "Monthly",
        "Financial Planning and Analysis",
        "Within 5%",
        "",
        "2025-03-17",
    ),
]


def build_csv(path: Path) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(METRIC_HEADER)
    w.writerows(METRIC_ROWS)
    _write_text(path, buf.getvalue())


# --------------------------------------------------------------------------------------------
# JSON: employee onboarding SOP
# --------------------------------------------------------------------------------------------

ONBOARDING = {
    "document_id": "SOP-HR-007",
    "title": "Employee Onboarding Procedure",
    "version": "4.2",
    "owner": "People Operations owns this procedure.",
    "effective": "Effective date: 2025-01-15",
    "scope": "This procedure applies to all new employees in North America, EMEA and APAC. Contractors follow a shorter checklist kept by the hiring manager.",
    "purpose": "A good first month makes a lasting difference. This procedure lists who does what between the signed offer and the end of probation, so that new colleagues have a working laptop, the right access and a clear set of objectives from their first day.",
    "steps": [
        {
            "step": 1,
            "phase": "Pre-boarding",
            "responsible": "Hiring manager",
            "text": "Step 1: The hiring manager sends the signed offer letter to People Operations within 1 business day of acceptance.",
        },
        {
            "step": 2,
            "phase": "Pre-boarding",
            "responsible": "People Operations",
            "text": "Step 2: People Operations creates the employee record in the HR system within 2 business days of receiving the signed offer.",
        },
        {
            "step": 3,
            "phase": "Pre-boarding",
            "responsible": "People Operations",
            "text": "Step 3: People Operations starts the background check. Background checks must be completed before the start date, unless local law in the employee's country prohibits checks before employment begins.",
        },
        {
            "step": 4,
            "phase": "Pre-boarding",
            "responsible": "Hiring manager",
            "text": "Step 4: The hiring manager selects a standard equipment bundle. Non-standard equipment requires approval from the IT Director.",
        },
        {
            "step": 5,
            "phase": "Pre-boarding",
            "responsible": "IT Service Desk",
            "text": "Step 5: The IT Service Desk ships the laptop so that it arrives at least 3 business days before the start date.",
        },
        {
            "step": 6,
            "phase": "Pre-boarding",
            "responsible": "IT Service Desk",
            "text": "Step 6: The IT Service Desk creates the network account and email address. Access to Restricted systems requires approval from the system owner.",
        },
        {
            "step": 7,
            "phase": "Pre-boarding",
            "responsible": "Payroll",
            "text": "Step 7: Payroll enrols the employee in the next payroll run. In EMEA, bank details must be collected on the local payroll form and may not be sent by email.",
        },
        {
            "step": 8,
            "phase": "Day one",
            "responsible": "Hiring manager",
            "text": "Step 8: The hiring manager welcomes the employee and introduces an onboarding buddy from the same team.",
        },
        {
            "step": 9,
            "phase": "Day one",
            "responsible": "Employee",
            "text": "Step 9: The employee completes the security awareness course on the first day. Access to systems other than email is withheld until the course is complete.",
        },
        {
            "step": 10,
            "phase": "First week",
            "responsible": "Employee",
            "text": "Step 10: The employee signs the code of conduct and the acceptable use policy within 5 business days of starting.",
        },
        {
            "step": 11,
            "phase": "First week",
            "responsible": "People Operations",
            "text": "Step 11: People Operations runs benefits enrolment. Employees in North America must choose a health plan within 30 days of their start date.",
        },
        {
            "step": 12,
            "phase": "First week",
            "responsible": "Hiring manager",
            "text": "Step 12: The hiring manager agrees 30, 60 and 90 day objectives with the employee by the end of the first week.",
        },
        {
            "step": 13,
            "phase": "First month",
            "responsible": "Employee",
            "text": "Step 13: The employee completes the role-specific training assigned in the learning portal.",
        },
        {
            "step": 14,
            "phase": "First month",
            "responsible": "Facilities",
            "text": "Step 14: Facilities issues a building badge. Badges that open data center areas require approval from the Data Center Operations Manager.",
        },
        {
            "step": 15,
            "phase": "First month",
            "responsible": "Onboarding buddy",
            "text": "Step 15: The onboarding buddy holds a check-in at the end of the second week and reports any open issues to the hiring manager.",
        },
        {
            "step": 16,
            "phase": "Probation",
            "responsible": "Hiring manager",
            "text": "Step 16: The hiring manager must complete the probation review within 90 days of the start date.",
        },
        {
            "step": 17,
            "phase": "Probation",
            "responsible": "People Operations",
            "text": "Step 17: People Operations closes the onboarding case in the HR system after the probation review.",
        },
    ],
    "approvals": [
        "Signing bonuses over $20,000 require approval from the Chief People Officer.",
        "Relocation allowances up to $15,000 may be approved by the hiring manager's VP.",
        "Relocation allowances exceeding $15,000 require approval from the VP of Total Rewards.",
    ],
    "escalations": [
        "If the laptop has not shipped 5 business days before the start date, the hiring manager escalates to the IT Service Desk Manager.",
        "If the background check is not complete 2 business days before the start date, People Operations escalates to the HR Business Partner, who decides whether to postpone the start.",
        "A missing network account on the first day is escalated to the IT Director.",
    ],
    "rules": [
        "Start dates may not be moved earlier than the date the background check is completed.",
        "Sharing another employee's login during onboarding is prohibited.",
    ],
    "notes": "People Operations reviewed the procedure in late 2024 after a survey of recent hires. The most common complaint was waiting for access in the first week. Moving the security course to the first morning, rather than the end of the first week, made the biggest difference. Hiring managers also asked for a single page they could print, and that page is now attached to every onboarding case.",
}


def build_json(path: Path) -> None:
    _write_text(path, json.dumps(ONBOARDING, indent=2, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------------------------
# JSONL: vendor onboarding SOP
# --------------------------------------------------------------------------------------------

VENDOR_RECORDS = [
    {
        "id": "VON-001",
        "section": "1. Purpose",
        "kind": "context",
        "text": "The Vendor Onboarding Procedure (SOP-PRC-002) describes how new suppliers are checked and added to the vendor master file.",
    },
    {"id": "VON-002", "section": "2. Ownership", "kind": "owner", "text": "The Vendor Management Office owns this procedure."},
    {"id": "VON-003", "section": "2. Ownership", "kind": "effective", "text": "Effective date: 2025-06-01"},
    {
        "id": "VON-004",
        "section": "3. Scope",
        "kind": "scope",
        "text": "This procedure applies to all new suppliers in North America, EMEA and APAC, except one-time payees receiving less than $1,000, who are paid through the petty cash process.",
    },
    {
        "id": "VON-005",
        "section": "4. Procedure",
        "kind": "step",
        "text": "Step 1: The requester submits a vendor request form in the procurement portal with the supplier's legal name, tax identifier and expected annual spend.",
    },
    {
        "id": "VON-006",
        "section": "4. Procedure",
        "kind": "step",
        "text": "Step 2: The Vendor Management Office screens the supplier against sanctions and denied-party lists. Sanctions screening must be completed within 1 business day.",
    },
    {
        "id": "VON-007",
        "section": "4. Procedure",
        "kind": "step",
        "text": "Step 3: The supplier completes the risk questionnaire. Suppliers that will process Restricted data must pass a security assessment by IT Security before onboarding continues.",
    },
    {
        "id": "VON-008",
        "section": "4. Procedure",
        "kind": "step",
        "text": "Step 4: Treasury reviews the financial stability of suppliers with expected annual spend above $100,000.",
    },
    {
        "id": "VON-009",
        "section": "4. Procedure",
        "kind": "step",
        "text": "Step 5: Accounts Payable verifies the supplier's bank details by calling a phone number taken from an independent source.",
    },
    {
        "id": "VON-010",
        "section": "4. Procedure",
        "kind": "step",
        "text": "Step 6: Legal reviews the supplier contract. Contracts that cap supplier liability below $1,000,000 must be reviewed by the General Counsel.",
    },
    {
        "id": "VON-011",
        "section": "4. Procedure",
        "kind": "step",
        "text": "Step 7: The Vendor Management Office creates the supplier in the vendor master file and sends a welcome pack with invoicing instructions.",
    },
    {
        "id": "VON-012",
        "section": "5. Rules",
        "kind": "rule",
        "text": "Bank detail changes requested only by email are prohibited until they have been confirmed by a call-back.",
    },
    {
        "id": "VON-013",
        "section": "5. Rules",
        "kind": "rule",
        "text": "Suppliers based in EMEA must provide a valid VAT number, and their invoices above EUR 10,000 must show the purchase order number.",
    },
    {
        "id": "VON-014",
        "section": "5. Rules",
        "kind": "rule",
        "text": "Suppliers may not be paid before their record is active in the vendor master file.",
    },
    {
        "id": "VON-015",
        "section": "5. Rules",
        "kind": "rule",
        "text": "Suppliers located in countries on the restricted-country list are prohibited unless the General Counsel grants a written exception.",
    },
    {
        "id": "VON-016",
        "section": "6. Approvals",
        "kind": "approval",
        "text": "High-risk suppliers require approval from the Chief Risk Officer before the vendor record is activated.",
    },
    {
        "id": "VON-017",
        "section": "6. Approvals",
        "kind": "approval",
        "text": "Suppliers with expected annual spend over $500,000 must be approved by the Director of Procurement before activation.",
    },
    {
        "id": "VON-018",
        "section": "7. Service Levels",
        "kind": "sla",
        "text": "The Vendor Management Office shall complete onboarding within 10 business days of receiving a complete request.",
    },
    {
        "id": "VON-019",
        "section": "7. Service Levels",
        "kind": "sla",
        "text": "Urgent requests flagged by a vice president are completed within 3 business days.",
    },
    {
        "id": "VON-020",
        "section": "8. Escalation",
        "kind": "escalation",
        "text": "If onboarding takes longer than 15 business days, the request is escalated to the Director of Procurement.",
    },
    {
        "id": "VON-021",
        "section": "8. Escalation",
        "kind": "escalation",
        "text": "A failed sanctions screening is escalated to the Compliance Officer immediately, and no payment may be made to the supplier.",
    },
    {
        "id": "VON-022",
        "section": "9. Maintenance",
        "kind": "rule",
        "text": "Supplier records with no activity for 18 months are deactivated during the annual clean-up in November.",
    },
    {
        "id": "VON-023",
        "section": "10. Background",
        "kind": "context",
        "text": "In 2024 the team onboarded 587 new suppliers. The average request took nine business days from submission to activation, and the most common cause of delay was a missing tax form. Requesters often said the bank verification step felt slow, but it stopped two attempted payment frauds during the year.",
    },
    {
        "id": "VON-024",
        "section": "11. Related Documents",
        "kind": "reference",
        "text": "See also the Procurement Policy (POL-PRC-004) and the Data Classification Policy (POL-SEC-003).",
    },
]


def build_jsonl(path: Path) -> None:
    lines = [json.dumps(r, ensure_ascii=False) for r in VENDOR_RECORDS]
    _write_text(path, "\n".join(lines) + "\n")


# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "sample_corpus"))
    args = ap.parse_args(argv)
    out = Path(args.out)
    build_pdf(out / "finance" / "quarterly_performance_q2_2025.pdf")
    build_docx(out / "policy" / "travel_expense_policy.docx")
    build_xlsx(out / "finance" / "approval_matrix.xlsx")
    build_pptx(out / "sop" / "security_incident_response.pptx")
    build_csv(out / "finance" / "metric_catalog.csv")
    build_json(out / "sop" / "employee_onboarding.json")
    build_jsonl(out / "sop" / "vendor_onboarding.jsonl")
    for p in sorted(out.rglob("*")):
        if p.is_file():
            print(f"{p.stat().st_size:>8}  {p.relative_to(out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
