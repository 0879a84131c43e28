"""Answering (issue 5, in progress): cited verbatim quotes, no guessing, clarifications."""

from __future__ import annotations

import io
import json
import re

import jsonschema
import polars as pl
import pytest

from qspace_frames.ask import answer as answer_mod
from qspace_frames.ask import compare
from qspace_frames.ask.answer import ANSWER_JSON_SCHEMA, contract_context, to_json, to_text
from qspace_frames.ask.dictionary import load_dictionary
from qspace_frames.ask.parse import ORDINAL, parse_questions
from qspace_frames.ask.sequence import inline_items
from qspace_frames.ask.spelling import weight
from qspace_frames.corpus.pages import document_text
from qspace_frames.evaluation.gold_sets import policyqa_to_gold
from qspace_frames.pipeline import Workbench


@pytest.fixture(scope="module")
def wb(tmp_path_factory, root):
    d = tmp_path_factory.mktemp("ask")
    (d / "p.yaml").write_text(f"store:\n  root: {d / 'store'}\n")
    return Workbench(params_file=str(d / "p.yaml"), corpus_arg="sample_corpus", run_name="ask", project_root=root, reports_dir=d / "r")


def test_known_answers_are_quoted_verbatim_and_cited(wb, root):
    qa = pl.read_csv(root / "tests" / "data" / "sample_answers.tsv", separator="\t")
    got = wb.ask(qa["question"].to_list())
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    answered = got.filter(pl.col("status") == "answered")
    for r in answered.iter_rows(named=True):  # every quote is the document text at its offsets
        assert docs[r["doc_id"]][r["char_start"] : r["char_end"]] == r["quote"], r
        assert r["answer"] and r["answer"] in r["quote"]
    right = got.with_columns(qa["answer"].alias("expected"), qa["document"].alias("exp_doc")).filter(
        pl.col("quote").str.contains(pl.col("expected"), literal=True) & (pl.col("document") == pl.col("exp_doc"))
    )
    assert right.height == qa.height, qa.join(right.select("question"), on="question", how="anti")["question"].to_list()


def test_a_pinned_slide_stands_in_for_a_topic_and_free_text_answers_are_the_line(wb):
    got = wb.ask(["What does slide 4 say about severity levels?"]).row(0, named=True)
    assert got["status"] == "answered" and got["page"] == 4 and got["document"] == "sop/security_incident_response.pptx"
    assert got["quote"].startswith("SEV") and got["answer"] == got["quote"]


def test_absent_answers_are_not_guessed_and_vague_questions_get_a_clarification(wb):
    got = wb.ask(
        [
            "Who approves submarine purchases over $9,000,000 on Mars?",
            "What is the cap?",
            "What is the parental leave policy for astronauts?",
        ]
    )
    assert got["status"].to_list() == ["no_answer", "clarification", "no_answer"]
    assert got["quote"].null_count() == 3
    assert "cap" in got["clarification"][1]


def test_a_pronoun_after_a_who_question_stands_for_the_person_not_the_question_words(wb):
    """ "Who approves purchases over $25,000, and how can I contact them?": "them" is the approver,
    so a sentence is not preferred for saying "approved" (the playbooks "approved" in the incident
    procedure, beside "contact lists")."""
    (got,) = wb.ask(["Who approves purchases over $25,000, and how can I contact them?"]).iter_rows(named=True)
    approver, contact = got["sub_answers"]
    assert "Chief Financial Officer" in approver["quote"], approver
    assert "approved" not in (contact["quote"] or ""), contact


def test_json_output_validates_against_the_schema(wb):
    got = wb.ask(
        [
            "Who must approve purchases over $25,000?",
            "What is the cap?",
            "Who must approve purchases over $25,000 and when is the procurement policy effective?",
        ]
    )
    data = to_json(got)
    jsonschema.validate(data, ANSWER_JSON_SCHEMA)
    assert data[0]["citation"]["document"] == "policy/procurement_policy.md"
    assert data[2]["status"] == "compound" and data[2]["citation"] is None
    # each part is an object of its own: its question, answer, quote and the quote's citation
    texts = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    paths = dict(wb.read("corpus", "inventory").select("path", "doc_id").rows())
    parts = data[2]["sub_answers"]
    assert [p["question"] for p in parts] == ["Who must approve purchases over $25,000?", "When is the procurement policy effective?"]
    assert [p["answer"] for p in parts] == ["Chief Financial Officer", "January 1, 2025"]
    for p in parts:
        c = p["citation"]
        assert p["status"] == "answered" and texts[paths[c["document"]]][c["char_start"] : c["char_end"]] == p["quote"], p


def test_an_amount_the_question_bounds_is_answered_by_the_sentence_bounding_it_the_same_way(wb):
    """Purchases "over $25,000" are the CFO's, whatever the language and the number's format; both
    tiers state $25,000, the Department Head's as its upper bound ("over $5,000 and up to $25,000"),
    which answers a question about purchases up to $25,000."""
    got = wb.ask(
        [
            "Qui doit approuver les achats de plus de 25 000 $ ?",
            "Wer genehmigt Einkäufe über 25.000 $?",
            "Who must approve purchases over $25,000?",
            "Who approves purchases up to $25,000?",
        ]
    )
    cfo = "Purchases over $25,000 must be approved by the Chief Financial Officer."
    head = "Purchases over $5,000 and up to $25,000 require approval from the Department Head."
    assert got["quote"].to_list() == [cfo, cfo, cfo, head]


def test_spanish_questions_are_answered_from_an_english_corpus(wb):
    """Spanish is read as French and German are: its function words, answer-type cues, bounds
    ("más de", "hasta") and the dictionary's Spanish variants, which bring the English head words
    to the search; a Spanish word the English corpus lacks ("compras", "hasta") is not taken for a
    misspelt English one ("compare", "data")."""
    got = wb.ask(
        [
            "¿Quién debe aprobar las compras de más de 25 000 $?",
            "¿Quién aprueba las compras de hasta 5 000 $?",
            "¿Cuándo entra en vigor la política de compras?",
            "¿Quién es el responsable de la política de compras?",
        ]
    )
    assert got["answer_type"].to_list() == ["role", "role", "date", "role"]
    assert got["quote"].to_list() == [
        "Purchases over $25,000 must be approved by the Chief Financial Officer.",
        "Purchases up to $5,000 may be approved by the requester's direct manager.",
        "This policy is effective January 1, 2025.",
        "The Procurement Team owns this policy.",
    ]


def test_no_answer_shows_the_nearest_passages_unconfirmed_with_exact_citations(wb):
    """A question nothing confirms is still declined (no quote, no citation), and shows the first
    ranked passages, not labels, each quoted verbatim at its citation's offsets: where the
    question's words are, for the reader to judge. An answered question shows none."""
    got = wb.ask(["What is the budget for the Mars office?", "Who must approve purchases over $25,000?"])
    data = to_json(got)
    jsonschema.validate(data, ANSWER_JSON_SCHEMA)
    declined, answered = data
    assert declined["status"] == "no_answer" and declined["quote"] is None and declined["citation"] is None
    assert 1 <= len(declined["nearest"]) <= 3 and answered["nearest"] == []
    texts = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    paths = dict(wb.read("corpus", "inventory").select("path", "doc_id").rows())
    for n in declined["nearest"]:
        c = n["citation"]
        assert texts[paths[c["document"]]][c["char_start"] : c["char_end"]] == n["quote"], n
        assert len(n["quote"].split()) > 4  # a label is not shown
    shown = to_text(got)
    assert "No answer found" in shown and "Nearest passages, not confirmed:" in shown
    assert f'"{declined["nearest"][0]["quote"]}"' in shown


def test_ask_command_help_and_json(root):
    import json
    import subprocess
    import sys

    helped = subprocess.run([sys.executable, "-m", "qspace_frames.cli", "ask", "--help"], capture_output=True, text=True, cwd=root)
    assert helped.returncode == 0 and "--json" in helped.stdout and "--run" in helped.stdout
    out = subprocess.run(
        [sys.executable, "-m", "qspace_frames.cli", "ask", "--json", "Who must approve purchases over $25,000?"],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    jsonschema.validate(data, ANSWER_JSON_SCHEMA)
    assert data[0]["answer"] == "Chief Financial Officer"


def test_ranking_only_the_candidates_that_can_reach_the_top_changes_no_rank(wb, root):
    """`rank_candidates(top=K)` drops candidates whose score could not reach the K-th even with
    every boost: its first K rows are those of the full ranking, for every question."""
    from qspace_frames.ask.answer import TOP_K, rank_candidates

    questions = pl.read_csv(root / "tests" / "data" / "sample_answers.tsv", separator="\t")["question"].to_list()
    questions += ["Who approves purchases in EMEA over EUR 20,000?", "What is on slide 4 about severity levels?"]
    dictionary = load_dictionary(wb.source("dictionary")[1])
    parsed = parse_questions(questions, dictionary)
    units, leaves = wb.ask_corpus()
    full = rank_candidates(parsed, units, leaves, wb.params.evaluation, dictionary=dictionary)
    pruned = rank_candidates(parsed, units, leaves, wb.params.evaluation, dictionary=dictionary, top=TOP_K)
    cols = ["query_id", "_rank", "doc_id", "char_start", "score"]
    head = lambda f: f.filter(pl.col("_rank") < TOP_K).select(cols).sort("query_id", "_rank")  # noqa: E731
    assert pruned.height < full.height
    assert head(pruned).equals(head(full))


def test_a_sentence_wrapped_over_lines_is_quoted_whole_with_exact_offsets(tmp_path, root):
    """Hard-wrapped prose (plain text at 60 columns) is quoted as the whole sentence, not the line
    that confirmed it; the offsets still give the document's own text, line breaks included."""
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "leave.txt").write_text(
        "Annual leave\n\nEmployees who wish to carry over unused annual leave must submit\n"
        "a request to their manager no later than 15 December 2026, so\nthat the new year's plans can be agreed.\n",
        encoding="utf-8",
    )
    (tmp_path / "p.yaml").write_text(f"store:\n  root: {tmp_path / 'store'}\n")
    wb = Workbench(
        params_file=str(tmp_path / "p.yaml"), corpus_arg=str(corpus), run_name="wrap", project_root=root, reports_dir=tmp_path / "r"
    )
    got = wb.ask(["By when must employees request to carry over unused annual leave?"]).row(0, named=True)
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    assert got["status"] == "answered" and "15 December" in got["answer"]
    assert got["quote"].startswith("Employees who wish") and got["quote"].endswith("can be agreed.") and "\n" in got["quote"]
    assert docs[got["doc_id"]][got["char_start"] : got["char_end"]] == got["quote"]


def test_a_wrapped_sentence_of_a_long_paragraph_is_quoted_whole(tmp_path, root):
    """A paragraph too long for one fragment is cut into sentence windows; their sentences are prose
    all the same, quoted whole across the line breaks, not by the line showing the value."""
    notices = (
        "12. Notices. All notices under this Agreement shall be in writing and shall be deemed given when delivered\n"
        "personally, one business day after being sent by a recognised overnight courier, or three business days\n"
        "after being mailed by certified mail, return receipt requested, to the addresses the parties give below.\n"
        "Notices to the Supplier shall be sent to its legal department at the address above, with a copy by e-mail to\n"
        "legal@supplier.example, and notices to the Buyer shall be sent to its general counsel. Either party may\n"
        "change its address for notices by giving notice of the change to the other party in the same manner.\n"
    )
    wb = _small_corpus(tmp_path, root, {"supply_agreement.txt": "SUPPLY AGREEMENT\n\n" + notices})
    got = wb.ask(["What email address gets a copy of notices to the Supplier?"]).row(0, named=True)
    assert "legal@supplier.example" in got["quote"] and got["quote"].startswith("Notices to the Supplier shall be sent"), got
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    assert docs[got["doc_id"]][got["char_start"] : got["char_end"]] == got["quote"]


def _small_corpus(tmp_path, root, files: dict[str, str]) -> Workbench:
    corpus = tmp_path / "docs"
    corpus.mkdir()
    for name, content in files.items():  # text, or the bytes of a binary file
        (corpus / name).write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    (tmp_path / "p.yaml").write_text(f"store:\n  root: {tmp_path / 'store'}\n")
    params = tmp_path / "p.yaml"
    return Workbench(params_file=str(params), corpus_arg=str(corpus), run_name="small", project_root=root, reports_dir=tmp_path / "r")


def _asked(tmp_path, root, name: str, doc: str, questions: list[str]) -> pl.DataFrame:
    """The answers to the questions over a corpus of one document."""
    return _small_corpus(tmp_path, root, {name: doc}).ask(questions)


MANUAL = (
    "# History\n\nThis manual was initially written after the first Debian conference by Ian Jackson. "
    "It was revised by the policy team in later years. The manual has twelve chapters.\n"
)


def test_a_sentence_held_twice_takes_one_candidate_place_and_a_plain_answer_needs_every_keyword(tmp_path, root):
    """The same manual as Markdown and as text: its sentences are ranked once each. A "when"
    answered by an event (no date pattern confirms it) is still answered, as the sentence that
    holds every keyword of the question; a question with a keyword no sentence holds is declined."""
    from qspace_frames.ask.answer import distinct_texts, rank_candidates

    wb = _small_corpus(tmp_path, root, {"manual.md": MANUAL, "manual.txt": MANUAL.replace("# History", "HISTORY")})
    question = "When was the manual initially written?"
    units, leaves = wb.ask_corpus()
    dictionary = load_dictionary(wb.source("dictionary")[1])
    parsed = parse_questions(pl.DataFrame({"id": ["q"], "question": [question]}), dictionary)
    ranked = rank_candidates(parsed, units, leaves, wb.params.evaluation, dictionary=dictionary)
    texts = ranked["text"].str.strip_chars().to_list()
    assert len(texts) > len(set(texts))  # both renditions rank
    kept = distinct_texts(ranked)
    assert sorted(kept["text"].str.strip_chars().to_list()) == sorted(set(texts))
    assert kept["_rank"].to_list() == list(range(kept.height))
    assert kept["score"].to_list() == sorted(kept["score"].to_list(), reverse=True)

    got = wb.ask([question, "When was the manual translated into Welsh?"])
    first = got.row(0, named=True)
    assert (
        first["status"] == "answered"
        and first["quote"] == "This manual was initially written after the first Debian conference by Ian Jackson."
    )
    assert first["answer"] == first["quote"]
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    assert docs[first["doc_id"]][first["char_start"] : first["char_end"]] == first["quote"]
    assert got["status"][1] == "no_answer"


def test_a_text_held_several_times_is_quoted_from_its_most_faithful_rendition(tmp_path, root):
    """A PDF's text layer drops quotes and spaces that the HTML or Markdown keeps: the renditions
    share one candidate place (compared by letters and digits), in the place of the best ranked,
    and the one quoted is the one that kept most characters."""
    from qspace_frames.ask.answer import distinct_texts

    faithful = 'Orphaned packages should have their "Maintainer" control field set to "Debian QA Group".'
    lossy = "Orphaned packages should have their Maintainer control fieldsetto Debian QA Group."
    other = "Orphaned packages are adopted by the QA team."
    ranked = pl.DataFrame(
        {"query_id": ["q"] * 3, "_rank": [0, 1, 2], "text": [lossy, other, faithful], "document": ["a.pdf", "a.pdf", "a.html"]}
    )
    kept = distinct_texts(ranked)  # the lossy rendition ranked first: the faithful one takes its place
    assert kept.select("_rank", "text", "document").rows() == [(0, faithful, "a.html"), (1, other, "a.pdf")]

    wb = _small_corpus(tmp_path, root, {"policy.md": f"# Notes\n\n{faithful}\n", "policy.txt": f"NOTES\n\n{lossy}\n"})
    question = "What Maintainer control field should orphaned packages have?"
    got = wb.ask([question]).row(0, named=True)
    assert got["status"] == "answered" and got["quote"] == faithful and got["document"] == "policy.md"


def test_a_first_candidate_that_stands_out_answers_without_a_confirming_pattern(tmp_path, root):
    """No role pattern knows "any developer", and the sentence lacks one of the question's words,
    yet it holds most of them and scores far above the next one: it is the answer. A question most of
    whose words no sentence holds is still declined."""
    rule = "Any developer can second proposed wording changes."
    doc = f"# Process\n\n{rule} The delegates merge a patch after review. Bugs are closed once resolved.\n"
    wb = _small_corpus(tmp_path, root, {"process.md": doc})
    got = wb.ask(["Who is allowed to second proposed wording changes to Policy?", "Who pays the annual membership fee of the committee?"])
    assert got["status"].to_list() == ["answered", "no_answer"]
    assert got["quote"][0] == rule


STEPS = """# Travel

## Booking a trip

To book a business trip, do the following:

1. Ask your manager to approve the trip in the travel portal.
2. Book the flights and the hotel through the travel desk.
   The desk answers within one business day.
3. Add the booking reference to the expense report.

Trips abroad also need a security briefing from the risk office.

## Expenses

Receipts are kept for seven years by the finance team.
"""


def test_steps_are_read_from_the_list_in_document_order(tmp_path, root):
    """The Nth, the last and the next item of a numbered list, quoted whole with exact offsets;
    an item's continuation line and the paragraph after the list are not items of it."""
    wb = _small_corpus(tmp_path, root, {"travel.md": STEPS})
    got = wb.ask(
        [
            "What is the first step to book a business trip?",
            "What is the third step to book a business trip?",
            "What is the last step to book a business trip?",
            "What comes after the manager approves the trip in the travel portal?",
            "What do I do after booking the flights and the hotel through the travel desk?",
        ]
    )
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    starts = ["Ask your manager", "Add the booking reference", "Add the booking reference", "Book the flights", "Add the booking reference"]
    for r, start in zip(got.iter_rows(named=True), starts):
        assert r["status"] == "answered" and r["quote"].startswith(start), (r["question"], r["quote"])
        assert docs[r["doc_id"]][r["char_start"] : r["char_end"]] == r["quote"]


JOINT_VENTURE = (
    "JOINT VENTURE AGREEMENT between Northwind Labs Inc. and Southfield Research S.r.l.\n\n"
    "5. Committees. The Steering Committee shall appoint a Technical Committee within 30 days of signature. "
    "Northwind Labs and Southfield Research each name one member of it.\n\n"
    "The tasks assigned to the Technical Committee are to: a. propose new projects to the Steering Committee; "
    "b. define the guidelines for each project; c. check the progress of the clinical programmes at least quarterly; "
    "d. report every six months to the Steering Committee on the results achieved.\n\n"
    "6. Termination. This Agreement may be terminated by Northwind Labs for cause upon any of the following events: "
    "(i) if Southfield Research ceases to do business; (ii) if Southfield Research breaches this Agreement and fails "
    "to cure the breach within fifteen (15) days of notice; or (iii) if Southfield Research becomes insolvent.   b.\n"
)


def test_the_nth_item_of_a_list_written_inside_one_sentence_is_quoted_alone(tmp_path, root):
    """A list enumerated inside one sentence ("a. ...; b. ...", "(i) ...; (ii) ...") is answered
    by the item at the position asked, without its marker and separator, offsets exact."""
    wb = _small_corpus(tmp_path, root, {"Northwind_Labs-Southfield_Research-Joint_Venture_Agreement.txt": JOINT_VENTURE})
    got = wb.ask(
        [
            "In the Northwind Labs joint venture with Southfield Research, what is the fourth task assigned to the Technical Committee?",
            "What is the second event that lets Northwind Labs terminate the agreement for cause?",
            "What is the last event that lets Northwind Labs terminate for cause?",
        ]
    )
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    want = [
        "report every six months to the Steering Committee on the results achieved",
        "if Southfield Research breaches this Agreement and fails to cure the breach within fifteen (15) days of notice",
        "if Southfield Research becomes insolvent",
    ]
    for r, quote in zip(got.iter_rows(named=True), want):
        assert r["status"] == "answered" and r["quote"] == quote, (r["question"], r["quote"])
        assert docs[r["doc_id"]][r["char_start"] : r["char_end"]] == r["quote"]


INTRODUCED = (
    "# Reboot during a test\n\n"
    "Some testbeds support rebooting the machine; for those, the testbed has a reboot command that a test can call. "
    "Never call the system's own reboot command directly, as it restarts the whole host.\n\n"
    "The particular steps of a rebooting test are:\n\n"
    "- The test calls the reboot command with a mark that names where it stopped.\n"
    "- The runner saves the state of the test's source tree and restarts the machine.\n"
    "- The test is run again with the mark in its environment.\n\n"
    "# Restricting the use of your records\n\n"
    "You have the right to request that the hospital restrict how it uses your medical records. "
    "It does not have to agree to every request. "
    "To ask, write to the privacy officer of the hospital. "
    "Your letter should include (1) which records you want to restrict; (2) whether you want to limit their use, "
    "their disclosure or both; and (3) who the restriction should apply to.\n"
)


def test_a_procedure_named_in_prose_is_read_from_the_list_that_follows_it(tmp_path, root):
    """The sentence holding most of an ordinal question's words often names the procedure a few
    sentences before its list: the Nth item is read from the list that follows it in its section
    (a lead-in and its items, or an enumeration inside a later sentence), not quoted as prose."""
    wb = _small_corpus(tmp_path, root, {"rules.md": INTRODUCED})
    got = wb.ask(
        [
            "What is the first step when a test needs to reboot the testbed?",
            "What is the last item a request to restrict the use of my medical records should include?",
        ]
    )
    want = ["The test calls the reboot command", "who the restriction should apply to"]
    for r, start in zip(got.iter_rows(named=True), want):
        assert r["status"] == "answered" and r["quote"].startswith(start), (r["question"], r["quote"])


@pytest.mark.parametrize(
    "text, items",
    [
        ("Pay (1) the fee, (2) the tax and (3) the deposit.", ["the fee", "the tax", "the deposit"]),
        ("See e.g. the note in (b) below.", []),  # no run counting up from 1
        (
            "Less: (a) fees; (b) taxes; (c) freight; (d) duties; (e) levies; (f) rebates; (g) credits; (h) insurance; (i) others.",
            ["fees", "taxes", "freight", "duties", "levies", "rebates", "credits", "insurance", "others"],  # (i) is the ninth
        ),
    ],
)
def test_an_inline_enumeration_is_told_by_markers_counting_up_from_one(text, items):
    assert [text[s:e] for s, e in inline_items(text)] == items


NOTICES = """SUPPLY AGREEMENT

This Supply Agreement is made between Acme Widgets Inc. and Beta Tools LLC.

12. Notices. All notices under this Agreement shall be in writing and sent to the addresses below.

If to Acme:
Acme Widgets Inc.
Attention: Jane Roe
E-mail: jane.roe@acmewidgets.com
Telephone: (555) 010-2000

If to Beta:
Beta Tools LLC
Attention: John Doe
E-mail: j.doe@betatools.example
Facsimile: (555) 010-3999
"""


def test_a_contact_question_gets_the_address_or_number_of_the_party_it_names(tmp_path, root):
    """A notices clause lists each party's address on lines of its own, without the words of the
    question: the party's block showing an address of the asked type, in the best ranked document,
    is the answer (quoted whole, with exact offsets), not the other party's; a question whose
    document shows no such value is declined."""
    wb = _small_corpus(tmp_path, root, {"supply_agreement.txt": NOTICES, "other.txt": "Beta Tools LLC makes hammers in Ohio.\n"})
    got = wb.ask(
        [
            "What email address is given for notices to Beta Tools?",
            "What is the fax number for notices to Beta Tools?",
            "Who do I email at Acme Widgets to give notice under the supply agreement?",
            "What is the IBAN of Beta Tools?",
        ]
    )
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    want = [
        ("j.doe@betatools.example", "acmewidgets"),
        ("Facsimile: (555) 010-3999", "acmewidgets"),
        ("jane.roe@acmewidgets.com", "betatools"),
    ]
    for r, (value, other) in zip(got.iter_rows(named=True), want):
        assert r["status"] == "answered" and value in r["quote"] and other not in r["quote"], (r["question"], r["quote"])
        assert docs[r["doc_id"]][r["char_start"] : r["char_end"]] == r["quote"]
    assert got["status"][3] == "no_answer"


DEFINITIONS = """1. Definitions.

1.1 "Trigger Date" shall mean the date upon which the Buyer ceases to own more than half of the Seller's shares.

1.2 The Trigger Date is recorded in the register kept by the Seller.

2. Notices after the Trigger Date are sent by registered mail.
"""


def test_a_term_asked_to_be_defined_is_answered_by_its_definition(tmp_path, root):
    """'What is the "Trigger Date"?' is answered by the sentence defining it, not by the sentences
    that use the term more often; a short definition question is not sent back as vague."""
    wb = _small_corpus(tmp_path, root, {"agreement.txt": DEFINITIONS})
    got = wb.ask(['What is the "Trigger Date" under the agreement?', "What does Trigger Date mean?"])
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    for r in got.iter_rows(named=True):
        assert r["status"] == "answered" and "shall mean the date upon which" in r["quote"], (r["question"], r["quote"])
        assert docs[r["doc_id"]][r["char_start"] : r["char_end"]] == r["quote"]


GRID_TABLE = (
    "5. Capabilities\n\n   The frontend tells which capabilities it supports.\n\n"
    "       +--------------------------------------------------------------------+\n"
    "       | Capability  | Description                                          |\n"
    "       |-------------+------------------------------------------------------|\n"
    "       | backup      | The frontend can back up to the previous question.   |\n"
    "       |             | The multiselect data type is supported. You do not   |\n"
    "       | multiselect | need to check this capability if you depend on any   |\n"
    "       |             | modern version of frobconf.                          |\n"
    "       +--------------------------------------------------------------------+\n"
)


def test_the_text_after_a_label_is_past_the_rules_of_a_table_drawn_in_text(tmp_path, root):
    """A short cell chosen as the answer ('modern version of frobconf.') gives way to the text after
    it, which is not the rule of the drawn table that follows ('|' alone on its line): 'What is
    frobconf?' over a document named after it was answered '|' (the Debian debconf specification)."""
    got = _asked(tmp_path, root, "frobconf_specification.txt", GRID_TABLE, ["What is frobconf?"]).row(0, named=True)
    assert got["status"] != "answered" or re.search(r"\w", got["quote"]), got


def test_each_part_of_a_compound_question_is_searched_with_the_names_the_whole_gives(tmp_path, root):
    """The second part of "Under the Zenith agreement, what is X, and on which day are invoices
    paid?" says no name: it is searched with the whole question's names, so it is answered from
    the Zenith agreement, not from the other agreement, whose sentence matches its own words better."""
    files = {
        "acme_agreement.txt": "Acme Supply Agreement.\n\nInvoices are paid on Fridays.\n\nThe monthly minimum order is 500 units.\n",
        "zenith_agreement.txt": "Zenith Supply Agreement.\n\nInvoices are paid on first Mondays.\n\n"
        "The monthly minimum order is 900 units.\n",
    }
    wb = _small_corpus(tmp_path, root, files)
    alone, whole = wb.ask(
        [
            "On which day are invoices paid?",
            "Under the Zenith supply agreement, what is the monthly minimum order, and on which day are invoices paid?",
        ]
    ).iter_rows(named=True)
    assert alone["status"] == "answered" and "Fridays" in alone["quote"]  # the words alone choose the other agreement
    assert whole["status"] == "compound", whole
    minimum, day = whole["sub_answers"]
    assert minimum["status"] == "answered" and "900 units" in minimum["quote"], minimum
    assert day["question"] == "On which day are invoices paid?" and day["document"] == "zenith_agreement.txt", day
    assert "first Mondays" in day["quote"]


def test_a_part_that_points_back_is_answered_from_what_the_part_before_it_names(tmp_path, root):
    """ "..., and how often is it reviewed?": the part is not sent back for clarification (its "it"
    is the approval matrix the first part names) and is searched with that part, so it is answered
    from the matrix's document; "how often" is the question's measure, not a word the answer must hold."""
    files = {
        "approval_matrix.txt": "Approval Matrix.\n\nThe approval matrix took effect on 1 February 2025.\n\n"
        "It is reviewed every year in January.\n",
        "travel_handbook.txt": "Travel Handbook.\n\nThe travel handbook took effect on 1 March 2024.\n\nIt is reviewed every two years.\n",
    }
    wb = _small_corpus(tmp_path, root, files)
    (got,) = wb.ask(["When did the approval matrix take effect, and how often is it reviewed?"]).iter_rows(named=True)
    assert got["status"] == "compound", got
    when, how_often = got["sub_answers"]
    assert "1 February 2025" in when["quote"], when
    assert how_often["status"] == "answered" and how_often["quote"] == "It is reviewed every year in January.", how_often


def test_a_later_parts_pronoun_is_covered_by_what_the_part_before_it_names(tmp_path, root):
    """ "..., and should I put the package name in it?": "it" is the synopsis the first part asks
    about, so the sentence about the synopsis answers, not the one holding the part's own words
    best ("put", "package", "name") and ranked first, about something else."""
    files = {
        "descriptions.md": "# Package descriptions\n\nThe synopsis line should be kept brief, certainly under 80 characters.\n\n"
        "Do not include the package name in the synopsis line.\n\n"
        "Shared libraries whose interface changes with each upstream release should put the package name and version in their "
        "sonames, so that two versions can be installed together.\n",
    }
    wb = _small_corpus(tmp_path, root, files)
    (got,) = wb.ask(["How long can a package's synopsis be, and should I put the package name in it?"]).iter_rows(named=True)
    assert got["status"] == "compound", got
    length, name = got["sub_answers"]
    assert "under 80 characters" in length["quote"], length
    assert name["quote"] == "Do not include the package name in the synopsis line.", name


# (question, deciding sentence, verdict): the quote denies exactly when the question does -> yes
VERDICTS = [
    ("May I fly first class on a long trip?", "First class air travel is prohibited.", "no"),
    ("Can I book a domestic trip without pre-trip approval?", "Domestic travel can be booked without pre-trip approval.", "yes"),
    ("Is it prohibited to smoke in the lab?", "Smoking is prohibited in every lab.", "yes"),
    ("Am I required to use the machine-readable format?", "Use of this format is optional.", "no"),
    ("May I skip the intake form?", "The intake form is optional.", "yes"),
    ("Does Style.com honour my browser's Do Not Track setting?", "We do not currently support any Do Not Track (DNT) settings.", "no"),
    ("Does the site honour Do Not Track?", "The site honours Do Not Track signals.", "yes"),
    ("Must invoices be paid within 30 days?", "Invoices must be paid no later than 30 days after receipt.", "yes"),
    ("Is it OK to put a License field without a Copyright field?", "It is valid to do so, but Copyright alone is not sufficient.", "yes"),
    ("Is Flotek restricted from buying from other suppliers?", "Flotek shall not be restricted from purchasing any product.", "no"),
    ("Is it ever fine for errors to pass silently?", "Errors should never pass silently.", "no"),
    ("Are tests allowed to modify the source tree?", "Tests may not modify the source tree.", "no"),
    ("No person may enter, right?", "No person may enter the vault alone.", None),  # not a yes/no question: no verdict
    ("When is the report due?", "The report is due on March 1.", None),
    (
        "Under the Accuray agreement, does Siemens have to meet minimum purchases?",
        "Distributor shall not be subject to any minimum purchase requirements.",
        "no",
    ),
    ("If I subscribe, can they sell my postal address?", "If you subscribe, we may sell lists containing your postal address.", "yes"),
    # a relative clause's "not" says what the rule is about, it denies nothing
    (
        "Can the Distributor cancel a late order?",
        "Distributor may cancel any Order for Products that are not delivered within 60 days.",
        "yes",
    ),
    ("When I leave, what happens to my laptop?", "Laptops must be returned on the last day.", None),
    # a question's leading condition and a clause about the asker's own doing deny nothing of its own
    ("If I leave GSA, do I get paid for the comp time I haven't used?", "If you leave GSA, your comp time will be paid out.", "yes"),
    ("If I don't use my leave, do I lose it?", "Unused annual leave is forfeited at the end of the year.", "yes"),
    ("Do I have to repay the advance that I didn't spend?", "You must repay any unused travel advance.", "yes"),
    ("Is it OK if I don't attend the training?", "Annual security training is mandatory for every employee.", "no"),
]


@pytest.mark.parametrize("question,quote,expected", VERDICTS)
def test_a_yes_no_verdict_follows_the_denials_of_question_and_quote(question, quote, expected):
    from qspace_frames.ask.answer import verdict

    got = pl.DataFrame({"question": [question], "quote": [quote]}).select(verdict())["verdict"][0]
    assert got == expected


def test_a_yes_no_question_is_answered_yes_or_no_with_the_sentence_that_decides_it(tmp_path, root):
    """Through `ask` on a small corpus: the verdict comes with the quote and its citation, in the
    JSON output and in a compound question's parts; a question that is not yes/no has none."""
    doc = (
        "# Travel\n\nFirst class air travel is prohibited on every trip.\n\n"
        "Domestic travel can be booked without pre-trip approval.\n\n"
        "Receipts are kept for seven years by the finance team.\n"
    )
    wb = _small_corpus(tmp_path, root, {"travel.md": doc})
    got = wb.ask(
        [
            "May I fly first class on a long trip?",
            "Can I book domestic travel without pre-trip approval?",
            "How long are receipts kept by the finance team?",
            "Is first class air travel prohibited, and how long are receipts kept by the finance team?",
        ]
    )
    assert got["status"].to_list() == ["answered", "answered", "answered", "compound"]
    assert got["verdict"].to_list()[:3] == ["no", "yes", None]
    data = to_json(got)
    jsonschema.validate(data, ANSWER_JSON_SCHEMA)
    assert data[0]["quote"] == "First class air travel is prohibited on every trip." and data[0]["verdict"] == "no"
    assert [(p["status"], p["verdict"]) for p in data[3]["sub_answers"]] == [("answered", "yes"), ("answered", None)]
    from qspace_frames.ask.answer import to_text

    # the quote is the answer: shown once, in quotes, after the verdict
    shown = to_text(got)
    assert 'A: No. "First class air travel is prohibited on every trip."\n   [' in shown
    assert shown.split("\n\n")[0].count("First class air travel is prohibited on every trip.") == 1


def test_a_question_naming_a_party_is_answered_from_the_documents_naming_it(tmp_path, root):
    """Three sites' privacy policies: a question naming one is answered from it, and declined when the
    named one says nothing about it although another states it in the question's own words (its
    sentence is no answer about the named site): the rarer name, "Bolt Media", outweighs "Safe Harbor"."""
    acme = (
        "# Acme Widgets privacy policy\n\nAcme Widgets keeps order records for seven years.\n\n"
        "Acme Widgets participates in the EU Safe Harbor program and is certified under it.\n"
    )
    bolt = "# Bolt Media privacy policy\n\nBolt Media stores your data for as long as your account is open.\n"
    cobalt = "# Cobalt Games privacy policy\n\nCobalt Games follows the EU Safe Harbor principles for transfers.\n"
    wb = _small_corpus(tmp_path, root, {"acme.md": acme, "bolt.md": bolt, "cobalt.md": cobalt})
    got = wb.ask(["How long does Bolt Media keep my data?", "Is Bolt Media certified under the EU Safe Harbor program?"])
    assert got["status"].to_list() == ["answered", "no_answer"]
    assert got["document"][0] == "bolt.md" and got["quote"][0].startswith("Bolt Media stores your data")
    from qspace_frames.ask.answer import named_documents

    units, _ = wb.ask_corpus()
    docs = dict(wb.read("corpus", "inventory").select("doc_id", "path").rows())
    scope = named_documents(
        parse_questions(["Is Bolt Media certified?", "Who keeps order records?", "Do Bolt Media or Acme Widgets sell data?"]), units
    )
    by_q = {q: sorted(docs[d] for d in g["doc_id"]) for (q,), g in scope.group_by(["query_id"])}
    # a name held by one document scopes to it; no name, or names held alike, leaves every document
    assert by_q == {"q1": ["bolt.md"], "q2": ["acme.md", "bolt.md", "cobalt.md"], "q3": ["acme.md", "bolt.md"]}


def test_the_first_word_of_each_sentence_of_a_question_is_no_name(tmp_path, root):
    """A question "I'd rather not post my patch to the list. Who can I email it to privately?" names no one: its
    second sentence's "Who" once scoped it to the documents holding "who" (the tracker's page), and
    the address was never searched. A period after an initial ends no sentence: "e.l.f. Beauty" is named."""
    tracker = "# Bug tracker\n\nAnyone who finds a regression should report it to the regressions@tracker.example.org list.\n"
    patches = (
        "# Submitting patches\n\nPatches should be sent to the development mailing list.\n\n"
        "If you prefer sending them by private email, you may email them to maintainer@patches.example.org.\n"
    )
    beauty = "# e.l.f. Beauty\n\ne.l.f. Beauty stores loyalty points for two years.\n"
    wb = _small_corpus(tmp_path, root, {"tracker.md": tracker, "patches.md": patches, "beauty.md": beauty})
    got = wb.ask(["I'd rather not post my patch to the list. Who can I email it to privately?"])
    assert got["document"][0] == "patches.md" and "maintainer@patches.example.org" in got["quote"][0]
    from qspace_frames.ask.answer import named_documents

    units, _ = wb.ask_corpus()
    docs = dict(wb.read("corpus", "inventory").select("doc_id", "path").rows())
    asked = ["I'd rather not post my patch to the list. Who can I email it to privately?", "How long does e.l.f. Beauty keep points?"]
    scope = named_documents(parse_questions(asked), units)
    by_q = {q: sorted(docs[d] for d in g["doc_id"]) for (q,), g in scope.group_by(["query_id"])}
    assert by_q == {"q1": ["beauty.md", "patches.md", "tracker.md"], "q2": ["beauty.md"]}


def test_a_questions_answer_does_not_depend_on_the_questions_asked_with_it(tmp_path, root):
    """One question names "Oaktree Capital Management", another only "Oaktree": asked together, the
    first is still answered from the document naming its whole name, and with the same quote as
    alone (the names were once matched leftmost-first, so "oaktree" hid the longer name)."""
    manager = (
        "# Services agreement\n\nNotices to Oaktree Capital Management, L.P. go to 333 South Grand Avenue, Los Angeles.\n\n"
        "Oaktree Capital Management, L.P. may be reached by facsimile at +1 (213) 830-8545.\n"
    )
    fund = "# Fund letter\n\nOaktree funds report each quarter. Reach the fund by facsimile at +44 20 7201 4601.\n"
    wb = _small_corpus(tmp_path, root, {"services.md": manager, "fund.md": fund})
    ask = "What is the facsimile number of Oaktree Capital Management?"
    alone, together = wb.ask([ask]), wb.ask([ask, "How often do Oaktree funds report?"])
    assert alone["document"][0] == "services.md" and "830-8545" in alone["quote"][0]
    assert together.head(1).equals(alone)
    from qspace_frames.ask.answer import named_documents

    units, _ = wb.ask_corpus()
    one = named_documents(parse_questions([ask]), units)
    two = named_documents(parse_questions([ask, "How often do Oaktree funds report?"]), units).filter(pl.col("query_id") == "q1")
    assert one.sort("doc_id").equals(two.sort("doc_id")) and one.height == 1


def test_a_number_asked_for_is_answered_only_by_a_line_showing_one(tmp_path, root):
    """A "Fax: 04-22373388" line is a fax number (a label before the digits, in no international format),
    found under the party's name in the paragraph before it; a fax number asked of a party whose
    document gives none is not answered with a sentence naming it, and "who can I call" may still be
    answered by whom to call."""
    chang = (
        "# Outsourcing Contract on Development of Miaoli Royal Resort Hotel\n\n"
        "Planning Unit: Chang Chen-Bin Architects Office, October 29, 2015.\n\n"
        "The Covenanter is Chang Chen-Bin Architects Office.\n\n"
        "575, Jinhwa Road, Bei District, Taichung City Tel: 04-22373588 Fax: 04-22373388\n"
    )
    lin = (
        "# Consulting agreement of Lin Hsu Architects\n\nLin Hsu Architects advises on the Harbor Tower design.\n\n"
        "Travellers who need help while on the road can call the travel desk at any hour.\n"
    )
    wb = _small_corpus(tmp_path, root, {"chang.md": chang, "lin.md": lin})
    got = wb.ask(
        [
            "What is the fax number for Chang Chen-Bin Architects Office?",
            "What is the fax number of Lin Hsu Architects?",
            "Who can I call if I need help on the road?",
        ]
    )
    assert got["status"].to_list() == ["answered", "no_answer", "answered"]
    assert "Fax: 04-22373388" in got["quote"][0] and got["document"][0] == "chang.md"
    assert got["quote"][2].startswith("Travellers who need help")


def test_a_named_or_numbered_sheet_restricts_the_answer_to_that_sheet(tmp_path, root):
    """Two sheets hold a limit for the same role, the second in more of the question's words: the
    sheet the question names or numbers is the one quoted."""
    from openpyxl import Workbook

    book = Workbook()
    book.active.title = "Domestic"
    book.active.append(["Role", "Limit"])
    book.active.append(["Team lead", "EUR 5,000"])
    abroad = book.create_sheet("International")
    abroad.append(["Role", "Limit"])
    abroad.append(["Team lead spending limit for team lead purchases", "EUR 7,500"])
    saved = io.BytesIO()
    book.save(saved)
    wb = _small_corpus(tmp_path, root, {"limits.xlsx": saved.getvalue()})
    got = wb.ask(
        [
            "What is the team lead spending limit on the Domestic sheet?",
            "What is the team lead spending limit on sheet 1?",
            "What is the team lead spending limit on sheet 2?",
        ]
    )
    assert got["status"].to_list() == ["answered"] * 3
    assert ["5,000" in q for q in got["quote"]] == [True, True, False]
    assert got["page"].to_list() == [1, 1, 2]


def test_a_question_about_a_period_prefers_the_text_of_that_period(tmp_path, root):
    """Three budgets state the same line for different years: the year of the question's period ("FY26",
    which no word of the documents is) in the text, its headings or the document's name decides."""
    files = {
        f"budget_fy{y}.md": f"# Budget guidelines FY{y}\n\nThe travel budget per team is EUR {amount} for the year.\n"
        for y, amount in ((2025, "40,000"), (2026, "55,000"), (2027, "61,000"))
    }
    wb = _small_corpus(tmp_path, root, files)
    got = wb.ask(["What is the travel budget per team for FY26?", "What was the travel budget per team in FY25?"])
    assert got["document"].to_list() == ["budget_fy2026.md", "budget_fy2025.md"]
    # an open-ended period ("after 2026", "before 2026") bounds one side only
    got = wb.ask(["What is the travel budget per team after FY26?", "What was the travel budget per team before FY26?"])
    assert got["document"].to_list() == ["budget_fy2027.md", "budget_fy2025.md"]


def test_a_question_about_a_quarter_is_answered_only_by_a_sentence_of_that_quarter(tmp_path, root):
    """A quarterly report states its quarter in its name; a sentence about another quarter, or one
    stating none (a metric's definition), does not answer a question about a quarter: the Q1
    question is declined, not answered with Q2's revenue."""
    files = {
        "quarterly_report_q2_2025.md": "# Quarterly report Q2 2025\n\nRevenue reached $48.6 million in Q2 2025.\n\n"
        "Customer churn was 3.1% (Q1 2025: 3.6%).\n",
        "metrics.md": "# Metric catalogue\n\nRevenue is the amount recognised in the period under the revenue recognition policy.\n",
    }
    wb = _small_corpus(tmp_path, root, files)
    got = wb.ask(["What was revenue in Q2 2025?", "What was customer churn in Q1 2025?", "What was revenue in Q1 2025?"])
    assert got["quote"].to_list()[:2] == ["Revenue reached $48.6 million in Q2 2025.", "Customer churn was 3.1% (Q1 2025: 3.6%)."]
    assert got["status"][2] == "no_answer", got["quote"][2]


def test_a_sentence_standing_out_answers_a_question_for_a_value_only_when_it_shows_one(tmp_path, root):
    """'How much does a licence cost?' is not answered by the one sentence naming the product, however
    far it stands out, when it states no amount; 'how much notice' asks for a duration."""
    files = {
        "colophon.md": "# Colophon\n\nProduced with a trial version of Annotex Studio - www.annotex.example\n",
        "services.md": "# Services agreement\n\nEither party may terminate this agreement for any reason upon 30 days' written notice.\n",
    }
    wb = _small_corpus(tmp_path, root, files)
    got = wb.ask(
        ["How much does a full licence of Annotex Studio cost?", "How much notice must a party give to terminate the services agreement?"]
    )
    assert got["status"][0] == "no_answer", got["quote"][0]
    assert got["answer_type"][1] == "duration" and "upon 30 days' written notice" in got["quote"][1]


def test_a_question_for_a_value_is_answered_deeper_by_the_sentence_holding_all_its_words_and_a_number(tmp_path, root):
    """'What is the monthly Continuing Fee?' is asked of a franchise agreement whose shorter
    sentences about the fee, ranked first, state no number: the sentence holding every word of the
    question and a percentage answers it, from further down; a fee no sentence states is declined."""
    shorter = "".join(
        f"The monthly Continuing Fee is {w}.\n\n"
        for w in ("due", "owed", "binding", "reported", "audited", "withdrawn", "reviewed", "invoiced", "recorded", "confirmed")
    )
    agreement = (
        "# Continuing fee\n\n" + shorter + "Each month you will pay us, without offset or deduction of any nature, a monthly "
        "Continuing Fee equal to five percent (5%) of the Gross Sales of the restaurant.\n\n"
        "# Training\n\nThe initial training program is provided to the general manager.\n"
    )
    wb = _small_corpus(tmp_path, root, {"franchise_agreement.md": agreement})
    got = wb.ask(["What is the monthly Continuing Fee?", "What is the monthly training fee?"])
    assert got["quote"][0].endswith("five percent (5%) of the Gross Sales of the restaurant."), got.row(0, named=True)
    assert got["status"][1] == "no_answer", got["quote"][1]


def test_a_word_of_a_concept_the_question_names_is_not_asked_for_again(tmp_path, root):
    """ "fly" is a form of "flying", a word of the travel concept the question's "trip" names: the
    concept stands for it, so "First class air travel is prohibited." holds enough of the question."""
    travel = (
        "# Travel policy\n\nEconomy class is the standard for domestic and international flights.\n\n"
        "First class air travel is prohibited.\n\nTravellers book trips through the travel desk.\n\n"
        "Long-haul flights over six hours may be booked in premium economy.\n"
    )
    wb = _small_corpus(tmp_path, root, {"travel_policy.md": travel})
    got = wb.ask(["May I fly first class on a long international trip?"])
    assert got["quote"][0] == "First class air travel is prohibited." and got["verdict"][0] == "no", got.row(0, named=True)


def test_a_label_chosen_as_the_answer_gives_way_to_the_text_it_introduces(tmp_path, root):
    """A run-in label holding the question's words ("- **rw-build-tree**"), or a heading asking the
    question, is not the answer: the sentence after it is, quoted whole with exact offsets."""
    restrictions = (
        "# Test restrictions\n\nThe restrictions of a test are declared in its stanza.\n\n"
        "- **rw-build-tree**\n\n  The test needs write access to the built source tree, so it may need to be copied first.\n\n"
        "- **needs-root**\n\n  The test script must be run as root.\n"
    )
    faq = "Privacy FAQ\n\nHow do we secure your personal information?\n\nIt is stored encrypted on servers in our own data centre.\n"
    wb = _small_corpus(tmp_path, root, {"restrictions.md": restrictions, "faq.txt": faq})
    got = wb.ask(["What does the rw-build-tree restriction mean?", "How do they secure my personal information?"])
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    starts = ["The test needs write access to the built source tree", "It is stored encrypted"]
    for r, start in zip(got.iter_rows(named=True), starts):
        assert r["status"] == "answered" and r["quote"].startswith(start), r
        assert docs[r["doc_id"]][r["char_start"] : r["char_end"]] == r["quote"]


def test_a_short_line_stating_a_value_is_an_answer_not_a_label(tmp_path, root):
    """ "protocol version 2.1" is as short as a label, but its number is what the question asks: it
    answers, not the author's name after it."""
    spec = "# Configuration protocol\n\nProtocol version 2.1\n\nWichert Akkerman\n\nThe frontend speaks this protocol to the confmodule.\n"
    wb = _small_corpus(tmp_path, root, {"spec.md": spec})
    (got,) = wb.ask(["What is the current protocol version?"]).iter_rows(named=True)
    assert got["status"] == "answered" and got["quote"] == "Protocol version 2.1", got


def test_a_question_asking_for_a_number_is_not_answered_by_a_sentence_without_one(tmp_path, root):
    """ "How long can a package's synopsis be?" asks for a count: the sentence holding all its words
    but no number does not answer it, whether it stands out or holds every keyword; one stating
    the number does, whatever kind of number it is ("up to 2% of its budget" for "how much")."""
    files = {
        "descriptions.txt": "Package descriptions\n\nThe synopsis line should be kept brief, certainly under 80 characters.\n\n"
        "Do not include the package name in the synopsis line.\n",
        "budget.txt": "Budget guidelines\n\nEach division may hold a contingency reserve of up to 2% of its operating budget.\n",
    }
    wb = _small_corpus(tmp_path, root, files)
    synopsis, reserve = wb.ask(["How long can a package's synopsis be?", "How much contingency can a division hold?"]).iter_rows(named=True)
    assert synopsis["answer_type"] == "count" and synopsis["status"] == "no_answer", synopsis
    assert reserve["answer_type"] == "amount" and reserve["status"] == "answered" and "up to 2%" in reserve["quote"], reserve


def test_the_askers_my_is_a_function_word_not_a_rare_term(tmp_path, root):
    """Policies speak to "you": "my" is rare in them, and searched as a word it ranks the sentence
    about "My Fool" first for "Who do you share my information with?". It is a function word like
    "your", and the sentence about sharing answers."""
    doc = (
        "# Privacy policy\n\nPersonalized areas of our sites, such as My Fool and My Portfolio, are password-protected.\n\n"
        "We share information about you with the payment processors that handle your orders.\n\n"
        "Cookies help us remember the pages you visited and the settings you chose.\n"
    )
    wb = _small_corpus(tmp_path, root, {"privacy.md": doc})
    (got,) = wb.ask(["Who do you share my information with?"]).iter_rows(named=True)
    assert got["status"] == "answered" and got["quote"].startswith("We share information about you"), got


def test_a_postal_address_asked_for_is_the_line_showing_one_in_the_document_named(tmp_path, root):
    """ "Where do I send the letter?" asks for a postal address: the line showing one, not the phone
    number beside it; a possessive name ("Bolt Media's") scopes to the document naming it, whose
    want of an address declines the question rather than taking another site's."""
    acme = (
        "# Acme Health privacy notice\n\nTo revoke an authorization by phone, call our Privacy Officer at 716-555-0199.\n\n"
        "To revoke a written authorization, write to the Acme Health Privacy Officer, 726 Exchange Street Suite 200, "
        "Buffalo, NY 14210.\n"
    )
    bolt = "# Bolt Media privacy policy\n\nBolt Media answers privacy questions at privacy@boltmedia.example.\n"
    wb = _small_corpus(tmp_path, root, {"acme.md": acme, "bolt.md": bolt})
    got = wb.ask(
        [
            "I signed a written authorization at Acme Health and want to cancel it - where do I send the letter?",
            "What is Bolt Media's mailing address for privacy questions?",
        ]
    )
    assert got["answer_type"].to_list() == ["address", "address"]
    assert "726 Exchange Street Suite 200" in got["quote"][0], got["quote"][0]
    assert got["status"][1] == "no_answer", got["quote"][1]


def test_the_nth_step_of_a_procedure_that_numbers_its_steps_is_the_step_labelled_so(tmp_path, root):
    """A procedure kept as JSON records, its title outside the list of steps: the second and the
    final step are the records labelled "Step 2" and the last "Step N"."""
    import json

    steps = [
        "Step 1: The employee books a slot with the IT help desk.",
        "Step 2: The IT help desk wipes the device and records its serial number.",
        "Step 3: Asset Management closes the asset record in the inventory system.",
    ]
    procedure = {
        "document_id": "SOP-IT-014",
        "title": "Laptop return procedure",
        "version": "2.0",
        "owner": "IT operations owns this procedure.",
        "scope": "This procedure applies to every employee who leaves the company or replaces a device.",
        "steps": [{"step": i + 1, "text": t} for i, t in enumerate(steps)],
    }
    wb = _small_corpus(tmp_path, root, {"it_sop_014.json": json.dumps(procedure, indent=2)})
    got = wb.ask(["What is the second step of the laptop return procedure?", "What is the final step of the laptop return procedure?"])
    for r, want in zip(got.iter_rows(named=True), steps[1:]):
        assert r["status"] == "answered" and want in r["quote"], (r["question"], r["quote"])


def test_the_answer_denies_when_the_question_does_and_states_the_condition_asked_for(tmp_path, root):
    """Of sentences holding the question's words alike, a question that denies ("don't need to be
    copied") is answered by one that denies, and one asking under what conditions by one stating a
    condition ("only if ...")."""
    copyright_rules = (
        "# Copyright files\n\n"
        "The copyright notices of files compiled into the package need to be copied into the copyright file.\n\n"
        "The copyright notices of files used only to build the package need not be copied into the copyright file.\n\n"
        "A documentation directory may be a symbolic link to another package's documentation directory as any directory may.\n\n"
        "A documentation directory may be a symbolic link to another package's documentation directory only if both packages "
        "come from the same source.\n"
    )
    wb = _small_corpus(tmp_path, root, {"copyright.md": copyright_rules})
    got = wb.ask(
        [
            "Which files' copyright notices don't need to be copied into the copyright file?",
            "Under what conditions may a documentation directory be a symbolic link to another package's documentation directory?",
        ]
    )
    assert got["quote"].to_list() == [
        "The copyright notices of files used only to build the package need not be copied into the copyright file.",
        "A documentation directory may be a symbolic link to another package's documentation directory only if both packages "
        "come from the same source.",
    ]


def test_a_why_question_is_answered_by_the_sentence_giving_a_cause(tmp_path, root):
    """Two sentences name the metric and its quarter; the one saying what drove it answers "why"."""
    report = (
        "# Quarterly report Q2 2025\n\nDays sales outstanding: 47 days in Q2 2025 (target: 45 days).\n\n"
        "Days sales outstanding rose in Q2 2025, driven by two public sector customers with long payment cycles.\n"
    )
    wb = _small_corpus(tmp_path, root, {"report_q2_2025.md": report})
    got = wb.ask(["Why did days sales outstanding go up in Q2 2025?"]).row(0, named=True)
    assert "driven by two public sector customers" in (got["quote"] or ""), got


def test_a_later_part_of_a_sequence_is_asked_with_the_answer_before_it(tmp_path, root):
    """'..., and how can I contact them?': 'them' is the approver the first part found, so the
    second part is asked as 'How can I contact Chief Financial Officer?'. '..., and if so ...' is a
    sequence too: its second part holds only if the first does."""
    doc = (
        "# Purchasing\n\nPurchases over $25,000 must be approved by the Chief Financial Officer.\n\n"
        "The Facilities Manager can be reached at facilities@example.com.\n\n"
        "The Chief Financial Officer can be reached at cfo@example.com.\n\n"
        "Questions about travel go to travel@example.com.\n"
    )
    wb = _small_corpus(tmp_path, root, {"purchasing.md": doc})
    got = to_json(wb.ask(["Who approves purchases over $25,000, and how can I contact them?"]))[0]
    assert got["status"] == "compound"
    first, second = got["sub_answers"]
    assert first["answer"] == "Chief Financial Officer" and second["question"] == "How can I contact them?"
    assert "cfo@example.com" in second["quote"]

    split = parse_questions(["Can I carry over unused leave, and if so how many days?"]).row(0, named=True)
    assert split["decomposition_pattern"] == "sequential"
    assert split["sub_questions"] == ["Can I carry over unused leave?", "How many days?"]


def test_a_misspelt_word_is_searched_as_the_corpus_word_it_was_meant_to_be(tmp_path, root):
    """'vochers' is neither English nor in the corpus: it is read as 'vouchers', which tells the two
    deadlines apart; an English word the corpus lacks ('vacation') and a name ('Bravatek') are left
    alone. The answer shows the question as it was asked."""
    from qspace_frames.ask.spelling import corrections

    doc = (
        "# Expenses\n\nTravel requests are due within 14 days.\n\n"
        "Travel vouchers are due within 30 days of the trip.\n\nHotels are booked by the travel desk.\n"
    )
    wb = _small_corpus(tmp_path, root, {"expenses.md": doc})
    asked = "When are travel vochers due?"
    got = wb.ask([asked]).row(0, named=True)
    assert got["status"] == "answered" and got["question"] == asked and "within 30 days" in got["quote"]
    units, _ = wb.ask_corpus()
    assert corrections([asked, "Can Bravatek take a vacation?"], units["text"]) == {"vochers": "vouchers"}


def test_a_deadline_written_in_words_answers_by_when(tmp_path, root):
    """ "Within sixty (60) days" and "within a year" state when something is due as much as "within 30
    days": the sentence that places the order answers, not the one about paying after it."""
    doc = (
        "# Supply\n\nThe Buyer shall pay the Supplier within 30 days after acceptance of the first order.\n\n"
        "The Buyer shall place the first order within sixty (60) days of the Effective Date.\n\n"
        "The Supplier shall renew its product insurance within a year of signature.\n"
    )
    got = _asked(
        tmp_path,
        root,
        "supply.md",
        doc,
        ["By when must the Buyer place the first order?", "By when must the Supplier renew its product insurance?"],
    )
    assert got["status"].to_list() == ["answered", "answered"]
    assert "within sixty (60) days" in got["quote"][0] and "within a year" in got["quote"][1]


def test_how_often_is_answered_by_the_sentence_stating_a_frequency(tmp_path, root):
    """ "How often" asks for a rate or an interval (the answer type `frequency`): the sentence saying
    "at least once per release" answers, not the one ranked above it that holds the question's words
    more often."""
    doc = (
        "# Reviews\n\nA package that is reviewed against the current policy must record the policy version it was "
        "reviewed against, and a reviewed package must list the reviewer of the package in its changelog.\n\n"
        "Each package should be reviewed against the current policy at least once per release.\n\n"
        "The backup of the archive runs every Sunday night.\n"
    )
    got = _asked(
        tmp_path,
        root,
        "reviews.md",
        doc,
        ["How often should a package be reviewed against the current policy?", "How frequently does the archive backup run?"],
    )
    assert got["answer_type"].to_list() == ["frequency", "frequency"]
    assert got["quote"].to_list() == [
        "Each package should be reviewed against the current policy at least once per release.",
        "The backup of the archive runs every Sunday night.",
    ]
    assert got["answer"].to_list() == ["once per release", "every Sunday"]


def test_a_file_a_mailing_list_and_a_site_are_asked_for_by_the_sentence_that_asks(tmp_path, root):
    """ "Which file ..." and "where ... end up" ask for a path, "which mailing list" for an address,
    a "public site" for a web address: the sentence showing one answers, not the one ranked above it
    that holds more of the question's words. A question's first sentence tells what happened, not
    what is asked for: "I clicked a link in a phishing email." does not make its question ask for a link."""
    doc = (
        "# Packages\n\nDownloaded package files take disk space, and the machine's package cache of downloaded "
        "files grows with every upgrade of the machine.\n\n"
        "APT keeps a copy of each downloaded file in the directory /var/cache/apt/archives/.\n\n"
        "Newcomers who have packaging questions should use the mentors list, a mailing list where newcomers get "
        "answers to packaging questions from the mentors.\n\n"
        "The mentors list is at mentors@lists.example.org for everyone.\n\n"
        "People who are not members can upload their packages for review to a public archive: http://mentors.example.net/ "
        "is open to all.\n\n"
        "Report a phishing email to security@example.org.\n"
    )
    got = _asked(
        tmp_path,
        root,
        "packages.md",
        doc,
        [
            "Where do the downloaded package files end up on disk?",
            "Which mailing list should newcomers use for packaging questions?",
            "Is there a public site where people who are not members can upload their packages?",
            "I clicked a link in a phishing email. Which addresses do I need to email to report it?",
        ],
    )
    assert got["answer_type"].to_list() == ["path", "email", "url", "email"]
    assert got["quote"].to_list() == [
        "APT keeps a copy of each downloaded file in the directory /var/cache/apt/archives/.",
        "The mentors list is at mentors@lists.example.org for everyone.",
        "People who are not members can upload their packages for review to a public archive: http://mentors.example.net/ is open to all.",
        "Report a phishing email to security@example.org.",
    ], got.select("question", "status", "quote").rows()


def test_what_a_question_states_before_it_asks_is_one_keyword_group(tmp_path, root):
    """ "I installed logcheck. How frequently will it go through my logs?": the words of the first
    sentence say what the question is about (any of them covers it), not what the answer must hold,
    so a sentence naming "installed services" does not outrank the one stating how often logcheck runs."""
    doc = (
        "# Monitoring logs\n\nThe logcheck program monitors log files every hour by default.\n\n"
        "In all three cases, logcheck should probably be customized to exclude some extra messages, depending on the installed "
        "services, unless the admin really wishes to receive hourly batches of long uninteresting e-mails.\n\n"
        "# Packages\n\nThe packages installed on the system are listed by dpkg. Every installed service writes its own log.\n"
    )
    got = _asked(tmp_path, root, "monitoring.md", doc, ["I installed logcheck. How frequently will it go through my logs?"])
    assert got["quote"].to_list() == ["The logcheck program monitors log files every hour by default."], got.select("status", "quote")


def test_a_hyphenated_word_is_one_keyword(tmp_path, root):
    """ "half-finished" is one keyword of the question, found written with a hyphen, a space or
    nothing, not two ("half" and "finished") that a sentence must both hold to be about it."""
    doc = (
        "# Uploading\n\nIn order to prevent a package being accidentally uploaded before completing the package, it is a good "
        "idea to set the distribution to UNRELEASED in the changelog.\n\nThe maintainer uploads the package to the archive.\n"
    )
    got = _asked(tmp_path, root, "uploading.md", doc, ["how do I stop myself from accidentally uploading a half-finished package?"])
    assert got["quote"][0].startswith("In order to prevent a package being accidentally uploaded"), got.select("status", "quote")
    groups = answer_mod._keyword_groups(parse_questions(["Is a third-party cookie a tracker?"], load_dictionary()))["_groups"][0]
    assert ["third-party", "third party", "thirdparty"] in groups and ["third"] not in groups, groups


def test_a_long_question_is_answered_by_a_first_candidate_that_leads(tmp_path, root):
    """A casual question says much its answer does not: the first ranked sentence, leading the
    second by a fifth of its score, answers with half of the question's keyword groups. A short
    question still needs more."""
    doc = (
        "# Kernel modules\n\nIf you want to avoid some kernel modules to be auto-loaded, consider to blacklist them in the "
        "/etc/modprobe.d/blacklist file.\n\nThe kernel loads the modules the hardware needs at boot.\n\n"
        "# Printing\n\nThe printer driver is chosen from the printer's model.\n"
    )
    questions = [
        "there's a kernel module that keeps getting pulled in automatically and i don't want it. how do I stop it from loading?",
        "How often is the scanner calibrated?",
    ]
    got = _asked(tmp_path, root, "kernel.md", doc, questions)
    assert got["status"].to_list() == ["answered", "no_answer"], got.select("status", "quote")
    assert got["quote"][0].startswith("If you want to avoid some kernel modules to be auto-loaded")


def test_a_count_is_answered_by_the_number_counting_its_thing_first(tmp_path, root):
    """ "How many characters long can the short description be?" counts characters ("long" says
    along what): of the confirmed sentences holding as many of its words, the one whose number
    counts characters answers, not a numbered listing ranked above it ("12 <insert long description>")."""
    doc = (
        "# The control file\n\nThe control file of the example reads:\n\n"
        "```\n 1 Source: gentoo\n 2 Section: unknown\n 11 Description: <insert up to 60 chars description>\n"
        " 12 <insert long description, indented with spaces>\n```\n\n"
        "Terminals are conventionally 80 columns wide so this shouldn't be longer than about 60 characters.\n"
    )
    got = _asked(tmp_path, root, "control.md", doc, ["How many characters long can the short description in the control file be?"])
    assert got["quote"].to_list() == [
        "Terminals are conventionally 80 columns wide so this shouldn't be longer than about 60 characters."
    ], got.select("status", "quote")


def test_a_version_number_the_question_names_is_one_of_its_keywords(tmp_path, root):
    """ "4.1.4" names the section of a changelog the answer is under: of two sentences holding the
    question's words, the one under "Version 4.1.4" answers, though the other comes first."""
    doc = (
        "# Upgrading checklist\n\n## Version 4.1.5\n\nA rules target was removed.\n\n"
        "## Version 4.1.4\n\nThe get-orig-source rules target, which packages used to fetch their upstream sources, has been removed.\n"
    )
    got = _asked(tmp_path, root, "checklist.md", doc, ["Which rules target was removed in version 4.1.4?"]).row(0, named=True)
    assert got["quote"].startswith("The get-orig-source rules target"), got


def test_a_term_defined_in_a_table_is_answered_by_its_row(tmp_path, root):
    """A table whose first column is the term and the next what it means defines it: the row of
    "high" answers what 'high' means, not a sentence that merely uses the word."""
    doc = (
        "# Priorities\n\nThe frontend need only ask a question if its priority is high enough; what a high priority "
        "means to the user depends on the frontend.\n\n"
        "| Priority | Description |\n|---|---|\n| low | Very trivial items that have defaults. |\n"
        "| high | Items that don't have a reasonable default. |\n"
    )
    got = _asked(tmp_path, root, "priorities.md", doc, ["What does the 'high' priority mean?"]).row(0, named=True)
    assert "Items that don't have a reasonable default." in got["quote"] and "low" not in got["quote"], got


def test_deleted_is_found_as_removed(tmp_path, root):
    """ "Deleted" and "removed" are one concept of the dictionary (removal): the sentence saying when
    log files are removed answers when they are deleted."""
    doc = "# Logs\n\nLog files should usually be named after the package.\n\nLog files should be removed when the package is purged.\n"
    got = _asked(tmp_path, root, "logs.md", doc, ["When should log files be deleted?"]).row(0, named=True)
    assert got["quote"] == "Log files should be removed when the package is purged.", got


def test_a_party_named_in_the_question_is_found_as_the_name_its_contract_defines(tmp_path, root):
    """The preamble defines Bestev as "Distributor", and the clauses say "Distributor": the clause
    letting the Distributor cancel late orders answers what Bestev may do, not the one about each party."""
    doc = (
        "DISTRIBUTION AGREEMENT\n\nThis Distribution Agreement is made by and between Acme Widgets, Inc., a Delaware "
        'corporation ("Supplier"), and Bestev Ltd. ("Distributor").\n\n'
        "Each Party may cancel any outstanding Orders to the extent Products have not been delivered.\n\n"
        "Distributor may cancel any Order for Products that are not delivered within sixty (60) days after the delivery date.\n\n"
        "Supplier shall invoice Distributor monthly.\n"
    )
    asked = "Can Bestev cancel an order that Acme delivers late?"
    wb = _small_corpus(tmp_path, root, {"distribution.txt": doc})
    assert wb.ask([asked])["quote"][0].startswith("Distributor may cancel any Order")
    units, _ = wb.ask_corpus()
    parsed = parse_questions([asked], load_dictionary(wb.source("dictionary")[1]))
    context = contract_context(parsed, units.select("doc_id").unique().with_columns(pl.lit("q1").alias("query_id")), units)
    assert context["_aliases"].to_list() == [[{"_word": "acme", "_alias": "Supplier"}, {"_word": "bestev", "_alias": "Distributor"}]]


def test_a_contract_named_by_its_parties_answers_from_clauses_that_do_not_name_them(tmp_path, root):
    """The question names the contract by its parties, which its head names: a clause of that
    contract holds those names without repeating them, so the notices clause is not outweighed by a
    definition naming the customer under the name the contract gives it ("Customer")."""
    doc = (
        "GAS TRANSPORTATION AGREEMENT\n\n"
        'This Gas Transportation Agreement (this "Agreement") is entered into on April 14, 2015 by and between '
        'PennTex North Louisiana Operating, LLC ("Transporter") and MRD Operating LLC ("Customer").\n\n'
        '"Customer Gas" shall mean Gas delivered by or on behalf of Customer for transportation on the Transportation System.\n\n'
        "The Parties opt out of electronic delivery of notices under this Agreement, except as to nominations and scheduling.\n\n"
        "Transporter shall keep the Transportation System in good repair.\n"
    )
    wb = _small_corpus(tmp_path, root, {"transportation.txt": doc})
    asked = "Can notices under the PennTex gas transportation agreement with MRD Operating be delivered by email?"
    got = wb.ask([asked]).row(0, named=True)
    assert got["quote"].startswith("The Parties opt out of electronic delivery of notices"), got["quote"]
    units, _ = wb.ask_corpus()
    parsed = parse_questions([asked], load_dictionary(wb.source("dictionary")[1]))
    context = contract_context(parsed, units.select("doc_id").unique().with_columns(pl.lit("q1").alias("query_id")), units)
    assert context["_held"].to_list() == ["mrd operating penntex"]


def test_a_sentence_naming_only_the_contract_does_not_answer_what_is_asked_of_it(tmp_path, root):
    """The contract's title holds every name the question designates it by (its parties, its
    project, "outsourcing contract") and none of what is asked ("penalty", "pay", "late",
    "delivery"): it is not the answer, though it holds most of the question's words. Asked what the
    contract does say, the clause answers."""
    doc = (
        "Outsourcing Contract on Development of Miaoli Royal Resort Hotel   Planning Unit: Chang Chen-Bin Architects Office\n\n"
        "Party A commissions Chang Chen-Bin Architects Office to plan the development of the Miaoli Royal Resort Hotel.\n\n"
        "The service fee of each stage shall be paid within 30 days after the stage is accepted by Party A.\n"
    )
    wb = _small_corpus(tmp_path, root, {"outsourcing_contract.txt": doc})
    contract = "under the Miaoli Royal Resort Hotel outsourcing contract"
    got = wb.ask(
        [
            f"What penalty does Chang Chen-Bin Architects Office pay for late delivery {contract}?",
            f"When is the service fee of each stage paid {contract}?",
        ]
    )
    assert got["status"][0] == "no_answer", got["quote"][0]
    assert got["quote"][1].startswith("The service fee of each stage shall be paid within 30 days"), got["quote"][1]


def test_a_label_does_not_stand_out_as_an_answer(tmp_path, root):
    """A line of a few words ("Table of Contents") scores high on the words its heading and document
    name share with the question, yet says nothing: the sentence that answers stands out instead."""
    doc = (
        "# The Menu sub-policy\n\nTable of Contents\n\n1. Introduction\n\n2. Menu structure\n\n"
        "## Introduction\n\nThe policy mailing list has taken responsibility for the contents of this document.\n\n"
        "Menu entries are grouped into sections.\n"
    )
    wb = _small_corpus(tmp_path, root, {"menu-sub-policy.md": doc})
    got = wb.ask(["Who is currently responsible for the contents of the Menu sub-policy?"]).row(0, named=True)
    assert got["status"] == "answered" and got["quote"].startswith("The policy mailing list has taken responsibility"), got["quote"]


def test_a_yes_no_question_is_decided_by_the_sentence_stating_the_rule(tmp_path, root):
    """Under a heading holding the question's words, every sentence holds them all with its heading:
    the sentence that holds most of them itself decides, not a shorter one that ranks first."""
    doc = (
        "# Shared library packages marked essential\n\n"
        'A shared library package must not be tagged "essential"; dependencies will prevent its premature removal, '
        "and the archive tools check this for every upload that any maintainer makes to the distribution.\n\n"
        "Other packages may depend on it.\n"
    )
    wb = _small_corpus(tmp_path, root, {"policy.md": doc})
    got = wb.ask(["Can a shared library package be marked Essential?"]).row(0, named=True)
    assert got["quote"].startswith("A shared library package must not be tagged") and got["verdict"] == "no", got["quote"]


def test_a_contract_preamble_answers_only_who_the_parties_are_and_when_it_was_made():
    """The preamble holds the words of any question about its contract (its title and every party):
    it does not answer a question about notices, but may answer one about the parties or the signing
    date; a notices clause's address block answers only where to send or how to reach its party."""
    from qspace_frames.ask.answer import _not_a_party_listing

    preamble = (
        "This Gas Transportation Agreement is made and entered into as of April 14, 2015 by and between Acme Pipeline LLC and Beta LLC."
    )
    notices = "Notices under this Agreement may be given by email."
    # so does a notices clause's address block, but for where to send or whom to contact
    block = "If to Beta: Beta LLC 551 Southridge Industrial Drive Tavares, Florida 32778"
    rows = pl.DataFrame(
        {
            "_question": [
                "Can notices under the Acme gas transportation agreement with Beta be given by email?",
                "Can notices under the Acme gas transportation agreement with Beta be given by email?",
                "Who are the parties to the Acme gas transportation agreement?",
                "When was the Acme gas transportation agreement signed?",
                "How many pipelines did Acme lease to Beta?",
                "Where should notices to Beta be sent?",
                "What is Beta's fax number?",
            ],
            "text": [preamble, notices, preamble, preamble, block, block, block],
            "answer_type": ["text", "text", "role", "date", "count", "text", "phone"],
        }
    )
    assert rows.select(_not_a_party_listing("_question").alias("ok"))["ok"].to_list() == [False, True, True, True, False, True, True]


def test_a_contract_preamble_does_not_stand_out_for_a_question_it_does_not_answer(tmp_path, root):
    """The preamble holds every name of an expiry question and stands out from the clauses: the
    question is declined, not answered with the signing date; asked who the parties are, it answers."""
    doc = (
        "SUPPLY AGREEMENT\n\nThis Supply Agreement is entered into as of February 28, 2019 by and between "
        "Florida Chemical Company and Flotek Industries.\n\n1. Supply. The supplier shall deliver the terpene product each month.\n\n"
        "2. Price. Prices are reviewed every quarter.\n"
    )
    wb = _small_corpus(tmp_path, root, {"supply.txt": doc})
    got = wb.ask(
        [
            "When does the Flotek terpene supply agreement with Florida Chemical Company expire?",
            "Who are the parties to the Flotek supply agreement?",
        ]
    )
    assert got["status"].to_list() == ["no_answer", "answered"], got["quote"].to_list()
    assert got["quote"][1].startswith("This Supply Agreement is entered into")


def test_a_question_word_is_found_in_its_other_forms_but_a_number_only_whole():
    """ "accepting" and "rejected" are found in "accept" and "reject" (a word is found by its stem),
    "submitting" and "planned" in "submit" and "plan" (its last consonant undoubled), "4.1.4" is not
    found in "4.1.5": the share of the question's keyword groups a text holds."""
    from qspace_frames.ask.answer import _coverage

    rows = pl.DataFrame(
        {
            "text": [
                "The final determination to accept a wording change or reject a bug.",
                "Changes in version 4.1.5.",
                "1. Submit a leave request, as the plan says.",
            ],
            "_groups": [
                [["accepting"], ["rejected"], ["wording"], ["delegate"]],
                [["changes"], ["4.1.4"]],
                [["submitting"], ["planned"], ["leave"], ["approved"]],
            ],
        }
    )
    assert rows.select(_coverage("text", "_groups"))["text"].to_list() == [0.75, 0.5, 0.75]


def test_a_part_is_answered_from_the_document_both_names_of_the_whole_question_hold(tmp_path, root):
    """ "In the Universal Access–CityNet agreement, ..., and how much notice ...?": the second part is
    searched with both names the whole question gives, each a name of its own (joined into one,
    "Universal Access CityNet", no document held it and the part was answered from another contract)."""
    corpus = {
        "maintenance.txt": "MAINTENANCE AGREEMENT\n\nThis Maintenance Agreement is made by and between Universal Access, Inc. and "
        "CityNet Telecommunications, Inc.\n\nThe monthly fee is $40,000 for the Services.\n\nEither party may terminate this "
        "Agreement at any time without liability by providing thirty (30) days written notice to the other party.\n",
        "reseller.txt": "RESELLER AGREEMENT\n\nThis Reseller Agreement is made by and between Bolt Media LLC and Acme Widgets, "
        "Inc.\n\nEither party may terminate without liability on fifteen (15) days notice.\n",
    }
    wb = _small_corpus(tmp_path, root, corpus)
    asked = (
        "In the Universal Access–CityNet maintenance agreement, what is the monthly fee, "
        "and how much notice does either party need to terminate without liability?"
    )
    parts = wb.ask([asked])["sub_answers"][0]
    assert [p["document"] for p in parts] == ["maintenance.txt", "maintenance.txt"], parts
    assert "thirty (30) days written notice" in parts[1]["quote"]


def test_an_amount_in_any_common_currency_answers_a_question_for_an_amount(tmp_path, root):
    """ "RMB 1,000,000", "¥ 500,000" and "2,000,000 rupees" are amounts as "$85" is: a question asking how
    much is answered by the sentence stating one, not by the one ranked above it that only says where
    the amount is set out ("... are set forth in Appendix 2")."""
    agreement = (
        "# Licence fees\n\nTerms of Payment: the licensee agrees to pay the licensor the annual licence fees, and the "
        "specified amount of the annual licence fees and the form of payment are set forth in Appendix 2.\n\n"
        "The licensee shall pay the annual licence fee of RMB 1,000,000 to the licensor.\n\n"
        "# Services\n\nThe annual support fee is ¥ 500,000 per year.\n\n"
        "The annual training fee is 2,000,000 rupees.\n"
    )
    got = _asked(
        tmp_path,
        root,
        "licence_agreement.md",
        agreement,
        ["How much is the annual licence fee?", "How much is the annual support fee?", "How much is the annual training fee?"],
    )
    assert got["answer_type"].to_list() == ["amount"] * 3
    assert "RMB 1,000,000" in got["quote"][0], got.row(0, named=True)
    assert "¥ 500,000" in got["quote"][1], got.row(1, named=True)
    assert "2,000,000 rupees" in got["quote"][2], got.row(2, named=True)


def test_a_concept_named_by_a_word_the_corpus_lacks_is_searched_by_the_concepts_words_it_holds(tmp_path, root):
    """The policy never says "food": it says "meal". "How much can I spend on food per day?" is
    searched with the meals concept's words the corpus holds, so the meal limit ranks above the
    sentences about spending that share the question's own words, alone or as a part of a compound
    question; a question naming the concept by the corpus's own word ("meal") is searched as asked."""
    spend = "".join(
        f"Spend on {w} per project must be reported each day to the finance team, up to ${n} in total.\n\n"
        for w, n in (
            ("software", 900),
            ("hardware", 800),
            ("consulting", 700),
            ("printing", 600),
            ("training", 500),
            ("licences", 400),
            ("courier services", 300),
            ("temporary staff", 200),
            ("office rent", 100),
        )
    )
    policy = "# Spending\n\n" + spend + "# Travel\n\nEmployees may claim meal costs up to $85 per day when travelling.\n"
    asked = ["How much can I spend on food per day?", "How much can I spend on a meal per day?"]
    got = _asked(
        tmp_path, root, "expense_policy.md", policy, [*asked, "Who receives the spend reports, and how much can I spend on food per day?"]
    )
    meal = "Employees may claim meal costs up to $85 per day when travelling."
    assert got["quote"].to_list()[:2] == [meal] * 2, got.rows()
    assert got["sub_answers"][2][1]["quote"] == meal, got["sub_answers"][2]  # a part of a compound question too


def test_a_month_and_year_written_with_a_comma_is_a_date(tmp_path, root):
    """ "Released January, 2020." states a date as "Released January 2020." does: of a changelog's
    entries, the one under the version asked about answers, not the document's own release line,
    which a full date confirms but which is about another version."""
    changelog = (
        "# Upgrading checklist\n\nThis is Example Policy version 4.6.2.0, released on 2022-12-17.\n\n"
        "## Version 4.5.0\n\nReleased January, 2020.\n\nThe policy version 4.5.0 adds a section on services.\n\n"
        "## Version 4.4.0\n\nReleased July, 2019.\n"
    )
    got = _asked(tmp_path, root, "upgrading_checklist.md", changelog, ["When was Policy version 4.5.0 released?"])
    assert got["answer_type"][0] == "date" and got["quote"][0] == "Released January, 2020.", got.row(0, named=True)


def test_how_a_measure_is_calculated_is_answered_by_its_definition_not_its_value(tmp_path, root):
    """ "How is churn rate calculated?" asks for the definition of churn rate: the catalogue row naming
    it after its id ("metric_id = MET-007; metric_name = Churn rate; definition = ..."), not the report's
    "Churn rate: 3.1% (target: 3.0%).", which states its value after a colon as a definition would."""
    report = "# Quarterly report\n\nChurn rate: 3.1% (target: 3.0%).\n\nThe churn rate rose because two large customers left.\n"
    catalog = (
        "metric_id,metric_name,definition\n"
        "MET-006,Gross margin,Revenue minus cost of goods sold divided by revenue\n"
        "MET-007,Churn rate,Customers lost in the period divided by customers at the start of the period\n"
    )
    wb = _small_corpus(tmp_path, root, {"quarterly_report.md": report, "metric_catalog.csv": catalog})
    got = wb.ask(["How is churn rate calculated?"])
    assert "Customers lost in the period divided by customers at the start" in got["quote"][0], got.row(0, named=True)


def test_which_things_count_as_a_quoted_term_is_answered_by_the_terms_definition(tmp_path, root):
    """ "Which licenses count as a 'Covered License'?" asks for the definition of the quoted term:
    "'Covered License' means ...", not a sentence that only uses the term."""
    commitment = (
        "# Commitment\n\nAs used here, the term 'this License' refers to the specific Covered License being enforced.\n\n"
        "'Covered License' means the GNU General Public License, version 2, and the GNU Lesser General Public License, "
        "version 2.1.\n\nWe will not enforce a Covered License against a licensee who cures a violation in time.\n"
    )
    got = _asked(tmp_path, root, "gpl_commitment.md", commitment, ["Which licenses count as a 'Covered License' in the commitment?"])
    assert got["quote"][0].startswith("'Covered License' means the GNU General Public License"), got.row(0, named=True)


def test_a_candidate_holding_every_word_of_the_question_is_looked_for_below_the_first_ones():
    """Of "Which targets must debian/rules implement?", the sentence saying which targets it must
    implement is ranked 14th, below sentences of its section about targets: it is still a candidate,
    looked for down to twice the usual depth (TOP_K), while a sentence there holding only some of the
    question's words is not."""
    parsed = parse_questions(["Which targets must debian/rules implement?"], load_dictionary())
    texts = [f"The {w} targets are listed in the index." for w in ("clean", "test", "lint", "docs", "bench", "dist", "check", "format")]
    texts += ["Targets may depend on other targets."] * 5 + ["Every package must implement the following targets: clean, binary and build."]
    texts += ["The targets are called by dpkg-buildpackage."]
    ranked = pl.DataFrame(
        {
            "query_id": "q1",
            "_rank": range(len(texts)),
            "text": texts,
            "heading_path": [["4.9. Main building script: debian/rules"]] * len(texts),
            "document": "policy.txt",
            "doc_id": "d1",
        }
    )
    about = answer_mod._about(parsed, ranked)
    assert about["_rank"].to_list() == list(range(8)) + [13], about.select("_rank", "_coverage", "text")


def test_the_nth_piece_of_a_list_after_a_paragraph_not_ending_in_a_colon_is_its_nth_item(tmp_path, root):
    """A list's lead-in need not end with a colon: the sentence right before its first item leads it
    in ("... all 4 pieces of paperwork ..." then "1. ..."), and "the second piece of paperwork" is
    its second item, not the lead-in. An ordinal counting something else stays a word of the
    anchor: "the first form of the second year" is searched with "second year"."""
    doc = (
        "# Advanced leave\n\nYou can request up to 240 hours of advanced leave.\n\n"
        "## Getting approval\n\nTo get approval, you submit the following paperwork to your supervisor. "
        "Note: we suggest drafting all 4 pieces of paperwork before routing them for signatures.\n\n"
        "1. The advanced leave request form, which your supervisor can route for you.\n"
        "2. An original medical certification signed by your physician.\n"
        "3. A copy of your timesheet report for the current and previous year.\n"
        "4. A written explanation of the circumstances that exhausted your leave.\n"
    )
    got = _asked(
        tmp_path, root, "advanced-leave.md", doc, ["What is the second piece of paperwork I need to send when requesting advanced leave?"]
    )
    assert got["quote"][0] == "An original medical certification signed by your physician.", got.row(0, named=True)
    anchor = pl.Series(["What is the first form of the second year?"]).str.replace_all(ORDINAL, " $1$2")
    assert anchor[0] == "What is the  form of the second year?"


def test_a_question_spelling_out_a_documents_file_name_is_answered_from_it(tmp_path, root):
    """ "the Example Terms of Service" names example-terms-of-service.md: its effective date answers,
    not the one of the customer agreement, whose line holds more of the question's words."""
    docs = {
        "example-terms-of-service.md": "# Terms\n\nEffective date: November 16, 2020.\n\nThank you for using Example.\n",
        "example-customer-agreement.md": (
            "# Example Customer Agreement\n\nEffective Date of these Example Terms of Service for customers: August 1, 2024.\n\n"
            "The customer agreement governs paid plans.\n"
        ),
    }
    wb = _small_corpus(tmp_path, root, docs)
    (got,) = wb.ask(["What is the effective date of the Example Terms of Service?"]).iter_rows(named=True)
    assert got["document"] == "example-terms-of-service.md" and "November 16, 2020" in got["quote"], got


def test_everyday_words_weigh_little_in_whether_a_sentence_is_about_the_question(tmp_path, root, corpora):
    """A real privacy policy (PolicyQA's MLB.com): "What should I do if I want to opt out?" holds
    "should", "want" and "do", which people say all the time and the policy never writes; weighed by
    how often they are said (`spelling.weight`), the opt-out sentence holds what the question asks.
    A question whose rare word is absent ("facial recognition") is declined still."""
    assert weight("got") < 0.1 and weight("want") < 0.5 and weight("jury") == weight("Bravatek") == 1.0
    docs = policyqa_to_gold(corpora / "qa-policyqa-dev" / "dev.json", tmp_path / "pqa").parent / "docs"
    policy = (docs / "mlb.mlb.com.txt").read_text(encoding="utf-8")
    got = _asked(
        tmp_path,
        root,
        "mlb.mlb.com.txt",
        policy,
        ["What should I do if I want to opt out?", "Does MLB use facial recognition on its in-store cameras?"],
    )
    opt_out, cameras = got.iter_rows(named=True)
    assert opt_out["status"] == "answered", opt_out
    assert "If you wish to opt out of this anonymous data collection, please click here" in opt_out["quote"]
    assert policy[opt_out["char_start"] : opt_out["char_end"]] == opt_out["quote"]
    assert cameras["status"] == "no_answer", cameras["quote"]


def test_a_json_line_is_quoted_from_its_value_and_a_record_whole(wb):
    """The sample corpus's vendor onboarding SOP is JSON Lines, read as "key.path = value" lines: the
    rule that decides is quoted without its path "[11].text = ", its citation moved past it; a quote
    of a whole record (several lines) keeps its paths, which name its fields."""
    line, record = wb.ask(
        ["a supplier just emailed us new bank details, can we just switch them over?", "What is the first onboarding step?"]
    ).iter_rows(named=True)
    docs = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    for r in (line, record):
        assert r["status"] == "answered" and docs[r["doc_id"]][r["char_start"] : r["char_end"]] == r["quote"], r
    assert line["quote"].startswith("Bank detail changes requested only by email are prohibited"), line["quote"]
    assert line["verdict"] == "no" and docs[line["doc_id"]][: line["char_start"]].endswith("[11].text = ")
    assert "\n" in record["quote"] and record["quote"].startswith("steps[0]."), record["quote"]


def test_text_answers_never_send_a_documents_control_characters_to_the_terminal():
    """A quote holding an ANSI colour code or a window-title sequence is printed with them escaped;
    line breaks and tabs stay as they are."""
    from qspace_frames.ask.answer import ANSWERS

    row = {c: None for c in ANSWERS} | {
        "id": "q1",
        "question": "Who approves?",
        "status": "answered",
        "answer": "\x1b[31mthe CFO\x1b[0m",
        "quote": "The \x1b]0;owned\x07CFO approves\tpurchases.",
        "document": "a.txt",
        "char_start": 0,
        "char_end": 30,
    }
    shown = to_text(pl.DataFrame([row], schema=ANSWERS))
    assert "\x1b" not in shown and "\x07" not in shown
    assert "\\x1b[31mthe CFO" in shown and "\\x07CFO approves\tpurchases." in shown


def test_a_comparison_is_answered_by_its_parts_values_put_in_order(wb):
    """ "Which takes longer, X or Y?" is asked as one part per item, each answered with its own
    quote and citation; the whole is answered by the durations the quotes state (business days
    both), and "Does X take longer than Y?" gets its verdict from them."""
    which, longer, shorter = wb.ask(
        [
            "Which takes longer, the security review or issuing a purchase order?",
            "Does acknowledging a payment dispute take longer than issuing a purchase order?",
            "Is issuing a purchase order longer than the security review?",
        ]
    ).iter_rows(named=True)
    assert which["status"] == "compound" and which["verdict"] is None
    assert which["answer"] == "The security review (5 business days) is longer than issuing a purchase order (2 business days)."
    review, order = which["sub_answers"]
    assert review["question"] == "How long is the security review?" and "within 5 business days" in review["quote"]
    assert order["question"] == "How long is issuing a purchase order?" and "within 2 business days" in order["quote"]
    assert longer["verdict"] == "yes" and longer["answer"].startswith("Acknowledging a payment dispute (3 business days) is longer")
    assert shorter["verdict"] == "no" and shorter["answer"].startswith("The security review (5 business days) is longer")
    data = to_json(wb.ask(["Is issuing a purchase order longer than the security review?"]))
    jsonschema.validate(data, ANSWER_JSON_SCHEMA)
    assert data[0]["verdict"] == "no" and [p["status"] for p in data[0]["sub_answers"]] == ["answered", "answered"]
    assert to_text(wb.ask(["Which takes longer, the security review or issuing a purchase order?"])).splitlines()[1] == (
        "A: The security review (5 business days) is longer than issuing a purchase order (2 business days)."
    )


def test_a_comparison_compares_only_values_of_one_kind_the_quotes_state(tmp_path, root):
    """Amounts in one currency are put in order; a part with no answer, or values of two kinds
    (an amount and a duration), leave the parts standing alone, with no comparison made up."""
    policy = (
        "# Travel\n\nMeals are reimbursed up to $75 per day.\n\nLodging is reimbursed up to $250 per night.\n\n"
        "Expense reports are due within 30 days of the trip.\n"
    )
    limit, mixed, missing = _asked(
        tmp_path,
        root,
        "travel.md",
        policy,
        [
            "Which has the higher limit, meals or lodging?",
            "Which is higher, the meal limit or the expense report deadline?",
            "Which is higher, the meal limit or the submarine allowance?",
        ],
    ).iter_rows(named=True)
    assert limit["answer"] == "The limit for lodging ($250) is higher than the limit for meals ($75).", limit
    assert [p["status"] for p in limit["sub_answers"]] == ["answered", "answered"]
    assert mixed["status"] == "compound" and mixed["answer"] is None, mixed
    assert missing["status"] == "compound" and missing["answer"] is None and missing["sub_answers"][1]["status"] == "no_answer"


@pytest.mark.parametrize(
    "text,comp,expected",
    [
        ("Referral Fees will be paid within thirty (30) days of the collection", "longer", ("duration", 30.0)),
        ("IT Security completes the review within 5 business days", "shorter", ("duration", 7.0)),
        ("two weeks in advance", "sooner", ("duration", 14.0)),
        ("an initial term of five (5) years", "longer", ("duration", 1825.0)),
        ("within forty-five (45) days of notice", "shorter", ("duration", 45.0)),
        ("$2,000,000 per occurrence and $2,000,000 aggregate", "higher", ("USD", 2_000_000.0)),
        ("a fee of EUR 1.5 million", "higher", ("EUR", 1_500_000.0)),
        ("royalties of 5% of Gross Sales", "higher", ("percent", 5.0)),
        ("on or before September 30, 2023", "earlier", ("date", 738_793.0)),
        ("effective 1 January 2024", "later", ("date", 738_886.0)),
        ("no number here", "higher", None),
        ("on or before September 30, 2023", "higher", None),  # a date is no amount
    ],
)
def test_a_comparison_reads_the_value_of_the_kind_its_comparative_asks(text, comp, expected):
    got = compare.magnitude(text, comp)
    assert (got[:2] if got else None) == expected


def test_a_duplicate_file_is_neither_cited_nor_searched_twice(tmp_path, root):
    """Two files of the same bytes are one document: the inventory lists the second as a duplicate
    of the first, and an answer cites the file that was read, its sentences ranked once."""
    text = "Office hours\n\nThe office closes at 18h on Fridays.\n"
    wb = _small_corpus(tmp_path, root, {"notes.txt": text, "a-copy.txt": text})
    inv = wb.read("corpus", "inventory").sort("path")
    assert inv.select("path", "load_status", "duplicate_of").rows() == [
        ("a-copy.txt", "loaded", None),
        ("notes.txt", "duplicate", "a-copy.txt"),
    ]
    units, _ = wb.ask_corpus()
    assert units.filter(pl.col("text").str.contains("18h"))["document"].to_list() == ["a-copy.txt"]
    got = wb.ask(["When does the office close on Fridays?"]).row(0, named=True)
    assert got["status"] == "answered" and got["document"] == "a-copy.txt", got


def test_a_markdown_table_row_is_read_under_its_columns_names(tmp_path, root):
    """A Markdown table's rows hold values with no names ("| Enterprise | $99 | 10 TB |"): each is
    searched and cited under its header's column names, and a question naming a column is
    answered by that column's cell of the row it names, whatever the cell looks like ("1 TB" for
    "how much storage", not the row's price), and whatever the question's answer type ("What
    support ...": "Email")."""
    doc = (
        "# Plans\n\n| Plan | Monthly price | Storage | Support |\n|------|---------------|---------|---------|\n"
        "| Basic | $5 | 10 GB | Email |\n| Team | $25 | 1 TB | Email and chat |\n| Enterprise | $99 | 10 TB | 24/7 phone |\n"
    )
    price, storage, which, support = _asked(
        tmp_path,
        root,
        "prices.md",
        doc,
        [
            "What is the monthly price of the Enterprise plan?",
            "How much storage does the Team plan include?",
            "Which plan includes 24/7 phone support?",
            "What support does the Basic plan have?",
        ],
    ).iter_rows(named=True)
    assert price["answer"] == "$99" and price["quote"] == "| Enterprise | $99 | 10 TB | 24/7 phone |", price
    assert price["heading_path"] == ["Plans", "Plan | Monthly price | Storage | Support"]
    assert doc[price["char_start"] : price["char_end"]] == price["quote"]
    assert storage["answer"] == "1 TB" and storage["quote"].startswith("| Team |"), storage
    assert which["answer"] == "Enterprise", which
    assert support["answer"] == "Email" and support["quote"] == "| Basic | $5 | 10 GB | Email |", support  # a free-text question too


@pytest.mark.parametrize(
    "question,quote,expected",
    [
        # a permission asked: given by a rule, refused by a denial, and not decided by a sentence that does neither
        ("May I redistribute modified copies?", "Copying and distribution of this file, with or without changes, are permitted.", "yes"),
        ("May I redistribute modified copies?", "You may not distribute modified copies.", "no"),
        (
            "Under the Apache License, may I redistribute modified copies of the Work?",
            "You are solely responsible for determining the appropriateness of using or redistributing the Work.",
            None,
        ),
        ("Is it OK to put a License field in the header stanza?", "It is valid to use License in the header stanza.", "yes"),
        # a fact asked is decided by a fact
        ("Does the office close at 18h on Fridays?", "The office closes at 18h on Fridays.", "yes"),
    ],
)
def test_a_permission_is_decided_only_by_a_sentence_that_grants_or_refuses_it(question, quote, expected):
    from qspace_frames.ask.answer import verdict

    got = pl.DataFrame({"question": [question], "quote": [quote]}).select(verdict()).item()
    assert got == expected


def test_a_question_asking_whom_to_reach_is_answered_only_by_a_way_to_reach_someone(tmp_path, root):
    """A README naming no one: "Who should I contact about pip?" was answered by a sentence holding
    its words (through the file's name) and no address, number, link, role or way in; such a
    sentence answers no contact question. One naming a mailbox still does."""
    readme = (
        "pip on Debian vendors several packages.\n\nTo resolve this conflict, we package up these dependencies as wheels, "
        "essentially zip files containing importable pure-Python code.\n"
    )
    guidelines = "# Budget guidelines\n\nQuestions about these guidelines should go to the FP&A mailbox.\n"
    wb = _small_corpus(tmp_path, root, {"python3-pip-README.Debian.txt": readme, "budget_guidelines.md": guidelines})
    nobody, mailbox = wb.ask(
        ["Who should I contact about pip on Debian?", "Where do I send questions about the budget guidelines?"]
    ).iter_rows(named=True)
    assert nobody["status"] == "no_answer", nobody
    assert mailbox["status"] == "answered" and "FP&A mailbox" in mailbox["quote"], mailbox


def test_a_block_of_header_fields_is_quoted_by_the_field_that_answers(tmp_path, root):
    """A package's METADATA opens on a block of "Name: value" header lines, none ending a sentence:
    each field is a sentence of its own, so a question about the maintainer's address is answered by
    that field's line (it was the whole block, or nothing). A JSON record's "key = value" lines are
    still read together (`test_a_json_line_is_quoted_from_its_value_and_a_record_whole`)."""
    doc = (
        "Metadata-Version: 2.4\nName: filelock\nVersion: 3.20.0\nSummary: A platform independent file lock.\n"
        "Maintainer-email: Bernat Gabor <gaborjbernat@gmail.com>\nLicense-Expression: MIT\nRequires-Python: >=3.10\n\n"
        "# filelock\n\nThis package contains a single module, which implements a platform independent file lock in Python.\n"
    )
    got = _asked(tmp_path, root, "filelock-METADATA.txt", doc, ["What is the email address of the filelock maintainer?"]).row(0, named=True)
    assert got["status"] == "answered" and got["quote"] == "Maintainer-email: Bernat Gabor <gaborjbernat@gmail.com>", got
    assert got["answer"] == "gaborjbernat@gmail.com" and doc[got["char_start"] : got["char_end"]] == got["quote"]


def test_a_permission_question_is_answered_by_the_sentence_stating_the_rule(tmp_path, root):
    """ "Can I sell my username to another user?": the sentence holding more of its words but stating
    no rule ("Each user sees the username ...") does not decide it; the one that does ("Selling a
    username is prohibited.") is quoted, and its verdict is no."""
    doc = (
        "# Usernames\n\nEach user sees the username of another user on the profile page they sell from.\n\n"
        "Selling a username is prohibited.\n"
    )
    got = _asked(tmp_path, root, "usernames.md", doc, ["Can I sell my username to another user?"]).row(0, named=True)
    assert got["quote"] == "Selling a username is prohibited.", got
    assert got["verdict"] == "no", got


def test_when_a_thing_is_needed_asks_for_a_condition_not_a_date(root):
    """ "When do I need Legal's sign-off?" is answered by the case it is needed in ("for any expenses
    exceeding $150, you'll need approval from Legal"), a sentence showing no date; "When do I get
    paid?" and "When must I submit my timesheet?" still ask for one."""
    got = parse_questions(
        [
            "When do I need Legal's sign-off in writing before spending on a gift?",
            "When is a background check required for a contractor?",
            "When do I get paid?",
            "When must I submit my timesheet?",
        ],
        load_dictionary(root / "params" / "dictionary"),
    )
    assert got["answer_type"].to_list() == ["text", "text", "date", "date"]


def test_a_json_list_is_read_element_by_element_and_answered_by_the_field_named(tmp_path, root):
    """A list of currencies: the element naming the Australian Dollar is one unit (not a run of its
    neighbours' lines) and the question naming its "numeric" code is answered by that field, not by
    the line holding the currency's name; a yes/no question about a package's licence quotes the
    line holding most of its words."""
    currencies = [
        {"alpha_3": "ARS", "name": "Argentine Peso", "numeric": "032"},
        {"alpha_3": "AUD", "name": "Australian Dollar", "numeric": "036"},
        {"alpha_3": "AWG", "name": "Aruban Florin", "numeric": "533"},
    ]
    package = {"name": "jupyterlab_pygments", "version": "0.3.0", "license": "BSD-3-Clause", "scripts": {"build": "jlpm build"}}
    wb = _small_corpus(
        tmp_path, root, {"iso_4217.json": json.dumps({"4217": currencies}, indent=2), "package.json": json.dumps(package, indent=2)}
    )
    code, licence = wb.ask(
        ["What is the ISO 4217 numeric code of the Australian Dollar?", "Is jupyterlab_pygments licensed under the BSD-3-Clause license?"]
    ).iter_rows(named=True)
    assert code["quote"] == "036", code
    assert licence["quote"] == "license = BSD-3-Clause" and licence["verdict"] == "yes", licence


def test_indexed_leaf_lines_are_one_sentence_per_array_element():
    from qspace_frames.affordances.sentences import _elements

    window = (
        "928\n4217[7].numeric = 032\n4217[8].alpha_3 = AUD\n4217[8].name = Australian Dollar\n4217[8].numeric = 036\n4217[9].alpha_3 = AWG"
    )
    parts = _elements(window)
    assert "".join(parts) == window  # they tile the window
    assert parts[2] == "4217[8].alpha_3 = AUD\n4217[8].name = Australian Dollar\n4217[8].numeric = 036\n", parts


def test_a_small_number_the_question_names_ranks_the_row_naming_it(tmp_path, root):
    """ "What is the codename of Debian 12?" over a table of releases: the row of version 12, not the
    row of version 1.2 whose dates hold "12" twice ("1996-12-12"), answered by its codename; asked
    about Debian 16, which no row names, it declines."""
    releases = (
        "version,codename,created,release\n"
        "1.1,Buzz,1993-08-16,1996-06-17\n"
        "1.2,Rex,1996-06-17,1996-12-12\n"
        "11,Bullseye,2019-07-08,2021-08-14\n"
        "12,Bookworm,2021-08-14,2023-06-10\n"
        "13,Trixie,2023-06-10,2025-08-09\n"
    )
    got, unknown = _asked(
        tmp_path, root, "debian.csv", releases, ["What is the codename of Debian 12?", "What is the codename of Debian 16?"]
    ).iter_rows(named=True)
    assert got["quote"].startswith("Row 4: version = 12; codename = Bookworm"), got
    assert got["answer"] == "Bookworm", got  # the cell of the column the question names, as in a Markdown table
    # no row names 16 (one's dates hold "16"): the rows holding "codename" and "Debian" do not answer
    assert unknown["status"] == "no_answer", unknown


def test_a_lead_in_cut_before_what_it_introduces_is_answered_by_what_follows(tmp_path, root):
    """The Apache licence's notice: "You may obtain a copy of the License at" is a sentence cut before
    the address on its own line; asked where to obtain a copy, the address answers."""
    notice = (
        'Licensed under the Apache License, Version 2.0 (the "License");\n'
        "you may not use this file except in compliance with the License.\n"
        "You may obtain a copy of the License at\n\n    http://www.apache.org/licenses/LICENSE-2.0\n\n"
        "Unless required by applicable law or agreed to in writing, software\n"
        'distributed under the License is distributed on an "AS IS" BASIS.\n'
    )
    got = _asked(tmp_path, root, "LICENSE-NOTICE.txt", notice, ["Where can I obtain a copy of the Apache License online?"]).row(
        0, named=True
    )
    assert got["quote"] == "http://www.apache.org/licenses/LICENSE-2.0", got
    assert notice[got["char_start"] : got["char_end"]] == got["quote"]


def test_the_it_of_time_passing_asks_for_no_clarification(root):
    """ "It has been over six business days and nobody has answered my report. Who can I escalate
    to?" points at no earlier exchange: its "it" is the time passing, as in "how long does it take
    to ...". A bare "Who approves it?" still asks what "it" is."""
    got = parse_questions(
        [
            "It has been over six business days and nobody has acknowledged my security report. Who can I escalate to?",
            "It's been two weeks since I asked, can I resubmit?",
            "Who approves it?",
        ],
        load_dictionary(root / "params" / "dictionary"),
    )
    assert got["suggested_clarification"].to_list()[:2] == [None, None]
    assert got["suggested_clarification"][2] is not None


def test_a_sentence_standing_out_answers_how_long_only_with_a_length_of_time(tmp_path, root):
    """A code of conduct that gives no length for its temporary ban: "Violating these terms may lead
    to a permanent ban." holds the question's words and stands out, but states no time; the question
    is declined."""
    conduct = (
        "# Enforcement\n\nA temporary ban from any sort of interaction with the community.\n\n"
        "Violating these terms may lead to a permanent ban.\n\nCommunity leaders will follow these guidelines.\n"
    )
    got = _asked(tmp_path, root, "CODE_OF_CONDUCT.md", conduct, ["How long does a temporary ban last?"]).row(0, named=True)
    assert got["status"] == "no_answer", got


def test_a_step_that_only_titles_itself_is_answered_by_the_text_it_introduces(tmp_path, root):
    """A release checklist whose first item is a bold title and a colon ("**Lock down the CI:**"):
    asked for the first thing to do, the text the title introduces answers, not the title alone."""
    checklist = (
        "# Security release process\n\n## Release day\n\nOn the day of the release, do the following:\n\n"
        "1. **Lock down the CI:**\n   * Lock down the CI to prevent public access to the CI machines.\n"
        "2. **Publish the release:**\n   * Publish the release and announce it on the blog.\n"
    )
    got = _asked(tmp_path, root, "security-release-process.md", checklist, ["On release day, what is the first thing to do?"]).row(
        0, named=True
    )
    assert "Lock down the CI to prevent public access" in got["quote"], got
    assert checklist[got["char_start"] : got["char_end"]] == got["quote"]


def test_a_who_question_is_answered_by_a_role_written_in_lower_case(tmp_path, root):
    """A role is often written as a common noun ("the project secretary", "the security team"), not
    a capitalised title: the sentence naming it confirms a "who" question."""
    guide = (
        "# Voting\n\nEven though the project isn't really a democracy, we use a democratic process to elect our leaders "
        "and to approve general resolutions.\n\n"
        "Each proposal is first discussed on the vote mailing list and it requires several endorsements before the "
        "project secretary starts the voting procedure. Voting is conducted via signed email messages.\n\n"
        "# Security\n\nSecurity advisories are written and posted by the security team.\n"
    )
    questions = ["Who starts the voting procedure for a general resolution?", "Who posts security advisories?"]
    got = _asked(tmp_path, root, "governance.md", guide, questions)
    assert got["quote"].to_list() == [
        "Each proposal is first discussed on the vote mailing list and it requires several endorsements before the "
        "project secretary starts the voting procedure.",
        "Security advisories are written and posted by the security team.",
    ], got.select("status", "quote")


# a count question's documents: (text, questions (the second has no answer), what the first's quote holds)
COUNTS = {
    "packages.md": (
        "# Source packages\n\nWhen using source format 3.0 (quilt), permissions of source package files are preserved.\n\n"
        "The archive consists of a lot of packages (currently around 30000 source packages) and a few additional files.\n\n"
        "# Meetings\n\nThe last steering committee meeting started 5 minutes late.\n",
        ["Roughly how many source packages are in the archive?", "How many people are on the steering committee?"],
        "currently around 30000 source packages",
    ),
    "init.md": (
        "# Runlevels and init\n\nTo control the order in which services are started at boot, traditional "
        "System-V style Unix systems use a scheme of runlevels.\n\nLike most System V compatible Unices, Linux has 7 runlevels:\n\n"
        "* 0 (halt the system),\n* 1 (single-user mode),\n* 6 (reboot the system).\n\n"
        "# Installing\n\nYou can install Debian by booting from 2 different media.\n",
        ["How many runlevels are there in the System V style boot scheme?", "How many boot loaders does the scheme offer?"],
        "Like most System V compatible Unices, Linux has 7 runlevels:",
    ),
}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_a_count_is_confirmed_by_a_number_of_what_it_counts(tmp_path, root, name):
    """A question "how many source packages" is answered by the sentence counting source packages, not by one
    holding another number ("3.0") beside the question's words; a count no sentence gives ("Started 5 minutes
    late", "2 different media") is declined. A hedge ("roughly") is no keyword the answer must hold. Such a
    sentence needs fewer of the question's words: "Linux has 7 runlevels:" holds two of the five of "How many
    runlevels ... in the System V style boot scheme?", and answers it, not the sentence holding all five and
    no count."""
    doc, questions, counted = COUNTS[name]
    got = _asked(tmp_path, root, name, doc, questions)
    assert got["status"].to_list() == ["answered", "no_answer"], got.select("status", "quote")
    assert counted in got["quote"][0]


def test_a_year_after_in_or_since_answers_when(tmp_path, root):
    """ "In 2014, Debian changed its default init system" answers when the switch was made: a year
    after "in", "since", "until" ... is a date, where a sentence with a full date ("2017-11-04") about
    something else was chosen. The answer is the year with its preposition."""
    from qspace_frames.ask.dictionary import answer_pattern

    faq = (
        "# Init systems\n\nDebian supports booting using traditional System V init, via the sysvinit-core package.\n\n"
        "In 2014, Debian changed its default init system from System V init to systemd.\n\n"
        "The committee decided on 2017-11-04 on the automatic init system switch on upgrades.\n"
    )
    got = _asked(tmp_path, root, "init.md", faq, ["When did Debian switch its default init away from System V?"])
    assert got.select("quote", "answer").rows() == [
        ("In 2014, Debian changed its default init system from System V init to systemd.", "In 2014")
    ]
    dates = pl.Series(["Since 1998 the archive grew.", "It has 2014 packages.", "It ran until 2020."])
    assert dates.str.contains(answer_pattern("date")).to_list() == [True, False, True]


def test_a_sentence_is_quoted_on_with_the_one_that_follows_from_it(tmp_path, root):
    """ "In those cases, the TSC makes a determination." completes the sentence before it, which holds
    the question's words: the quote runs on into it, verbatim across the line break, offsets exact; so
    does "If they do not match, ...". A sentence followed by one that does not refer back is quoted alone."""
    guide = (
        "# Internal vs. public API\n\nAll functionality in the official documentation is part of the public API.\n\n"
        "Sometimes, there is disagreement about whether functionality is internal or\npublic. "
        "In those cases, the TSC makes a determination.\n\n"
        "# Releases\n\nEach release line has a staging branch. The branch is rebased before each release.\n\n"
        "# Uploading\n\ndupload checks that the file checksums match those listed in the .changes file. "
        "If they do not match, it will warn you to rebuild it.\n"
    )
    questions = [
        "If collaborators can't agree whether some functionality is internal or public API, who settles it?",
        "What does each release line have?",
        "What happens if dupload finds the checksums don't match the ones in the .changes file?",
    ]
    wb = _small_corpus(tmp_path, root, {"api.md": guide})
    got = wb.ask(questions)
    assert got["quote"].to_list() == [
        "Sometimes, there is disagreement about whether functionality is internal or\npublic. "
        "In those cases, the TSC makes a determination.",
        "Each release line has a staging branch.",
        "dupload checks that the file checksums match those listed in the .changes file. "
        "If they do not match, it will warn you to rebuild it.",
    ], got.select("status", "quote")
    text = dict(document_text(wb.scan("corpus", "pages")).collect().rows())
    for a in got.iter_rows(named=True):
        assert text[a["doc_id"]][a["char_start"] : a["char_end"]] == a["quote"]


def test_a_how_to_question_is_answered_by_what_its_lead_in_introduces(tmp_path, root):
    """A question asking which command to run or how to do something is answered by the code a sentence
    ending on a colon introduces, not by that sentence; a question asking for a value the lead-in itself
    states keeps the lead-in."""
    guide = (
        "# First steps\n\nYou can create an initial non-native Debian package from the upstream tarball "
        "by issuing the dh_make command as follows:\n\n```\n$ dh_make -f ../gentoo-0.9.12.tar.gz\n```\n\n"
        "# Caching\n\napprox runs by default on port 9999 and requires users to point their sources.list at it:\n\n"
        "```\ndeb http://localhost:9999/debian bookworm main\n```\n"
    )
    questions = [
        "What command creates the initial non-native Debian package from the upstream tarball?",
        "Which port does approx run on by default?",
    ]
    got = _asked(tmp_path, root, "guide.md", guide, questions)
    assert "$ dh_make -f ../gentoo-0.9.12.tar.gz" in got["quote"][0], got.select("status", "quote")
    assert got["quote"][1].startswith("approx runs by default on port 9999"), got.select("status", "quote")


def test_what_an_abbreviation_stands_for_is_where_it_is_written_out(tmp_path, root):
    """ "What does FTBFS stand for?" is answered by the sentence writing it out beside it, after or
    before it, in capitalised words, not by one that only names it."""
    guide = (
        "# Building\n\nFTBFS bugs are reported by the autobuilders. The DM status is given by the keyring maintainers.\n\n"
        "Building in a chroot environment verifies the build dependencies and avoids FTBFS "
        "(Fails To Build From Source) bugs.\n\nA Debian Maintainer (DM) may upload the packages they maintain.\n"
    )
    got = _asked(tmp_path, root, "building.md", guide, ["What does FTBFS stand for?", "What does DM stand for?"])
    assert got["quote"].to_list() == [
        "Building in a chroot environment verifies the build dependencies and avoids FTBFS (Fails To Build From Source) bugs.",
        "A Debian Maintainer (DM) may upload the packages they maintain.",
    ], got.select("status", "quote")


def test_who_is_a_role_asks_what_the_role_is(tmp_path, root):
    """ "Who is a sponsor in Debian?" asks what a sponsor is (an indefinite article, a place after
    it): the line defining the word answers, not a sentence ranked above it that names a sponsor
    more often. "Who is the sponsor?" still asks who."""
    guide = (
        "# Roles\n\nIf you are asking a sponsor in Debian to upload your package, tell the sponsor in Debian what changed.\n\n"
        "- sponsor: a person who helps maintainers to upload packages to the archive.\n"
        "- mentor: a person who helps new maintainers with packaging.\n"
    )
    got = _asked(tmp_path, root, "roles.md", guide, ["Who is a sponsor in Debian?"])
    assert got["quote"].to_list() == ["sponsor: a person who helps maintainers to upload packages to the archive."], got.select(
        "status", "quote"
    )
    parsed = parse_questions(["Who is a sponsor in Debian?", "Who is the sponsor of the package?"], load_dictionary())
    assert parsed["defined_term"].to_list() == ["sponsor", None]


def test_a_manual_page_section_after_the_term_still_defines_it(tmp_path, root):
    """ "sudo(8) is a program ..." defines sudo: the manual section after the name is no part of
    the term, and the definition comes before a sentence naming sudo twice."""
    doc = (
        "# sudo\n\nSee the sudo configuration example in /usr/share/doc/sudo/examples/sudoers and the sudo manual.\n\n"
        "sudo(8) is a program designed to allow a sysadmin to give limited root privileges to users.\n"
    )
    got = _asked(tmp_path, root, "sudo.md", doc, ["What is sudo?"])
    assert got["quote"].to_list() == ["sudo(8) is a program designed to allow a sysadmin to give limited root privileges to users."], (
        got.select("status", "quote")
    )


def test_a_term_set_beside_what_it_is_is_defined_there(tmp_path, root):
    """ "Package names also include the abiname, a small integer, which identifies ..." defines the
    abiname by apposition; the question names the term by where it is seen ("the abiname that shows
    up in package names"), and a sentence naming it without saying what it is comes first in rank."""
    doc = (
        "# Kernel packages\n\nThe abiname shows up in package names such as linux-image-6.1.0-13-amd64.\n\n"
        "Package names also include the abiname, a small integer, which identifies the kernel's binary compatibility level.\n"
    )
    got = _asked(tmp_path, root, "kernel.md", doc, ["What is the abiname that shows up in kernel package names?"])
    assert got["quote"].to_list() == [
        "Package names also include the abiname, a small integer, which identifies the kernel's binary compatibility level."
    ], got.select("status", "quote")


def test_a_length_of_time_written_with_a_is_a_duration(tmp_path, root):
    """ "within a month" is a length of time as "within 30 days" is: "How long ... before they close
    it?" is answered by the sentence giving it, not by a list item ranked above it that holds the
    question's words and no time ("Searching the bug tracker (including closed bugs)")."""
    doc = (
        "# Reporting kernel bugs\n\nBefore reporting a bug, try:\n\n- Searching the kernel bug tracker (including closed bugs)\n\n"
        "The team may ask for the output of the bug script. "
        "If we do not receive this information within a month of the request, the bug may be closed.\n"
    )
    got = _asked(tmp_path, root, "bugs.md", doc, ["The kernel team asked for output on my bug. How long do I have before they close it?"])
    assert got["quote"].to_list() == ["If we do not receive this information within a month of the request, the bug may be closed."], (
        got.select("status", "quote")
    )
    from qspace_frames.ask.dictionary import answer_pattern

    duration = answer_pattern("duration")
    assert pl.Series(["for an hour", "within a fortnight", "a monthly fee", "a year-end report"]).str.contains(duration).to_list() == [
        True,
        True,
        False,
        False,
    ]


def test_a_footnote_gives_way_to_the_main_text_holding_as_many_of_the_questions_words(tmp_path, root):
    """A footnote ("[14] The default package name field length of aptitude is 30.") ranks first for
    "What's the recommended maximum length for a package name?" by its few words; the main text's
    sentence holding as many of them answers."""
    doc = (
        "# Package names\n\nThe package name must consist only of lower case letters, digits and the characters plus, minus and dot. "
        "It is a good idea to keep its length within 30 characters.\n\n"
        "Many tools show the package name in a field of its own.\n\n"
        "[14] The default package name field length of aptitude is 30.\n"
    )
    got = _asked(tmp_path, root, "names.md", doc, ["What's the recommended maximum length for a package name?"])
    assert got["quote"].to_list() == ["It is a good idea to keep its length within 30 characters."], got.select("status", "quote")


def test_a_count_is_answered_by_the_number_counting_it_holding_a_third_of_a_long_questions_words(tmp_path, root):
    """ "How many bytes ...?" is answered by "... plus 28 bytes for the IPv4 and plus 48 bytes for the
    IPv6", which counts bytes and holds four of the question's twelve words."""
    doc = (
        "# Network tuning\n\nUse ping with the do-not-fragment flag to probe the largest payload that passes unfragmented.\n\n"
        "MTU is the maximum data packet size without IP fragmentation plus 28 bytes for the IPv4 and plus 48 bytes for the IPv6.\n"
    )
    q = "When probing the MTU with ping, how many bytes of header overhead must be added to the largest unfragmented payload"
    q += " for IPv4 and IPv6?"
    got = _asked(tmp_path, root, "net.md", doc, [q])
    assert got["quote"].to_list() == [
        "MTU is the maximum data packet size without IP fragmentation plus 28 bytes for the IPv4 and plus 48 bytes for the IPv6."
    ], got.select("status", "quote")


def test_a_reboot_is_a_boot(tmp_path, root):
    """The dictionary's restart concept: "when the machine is rebooted" is answered by the sentence
    saying what happens "for each boot up", whose other words are the question's too."""
    doc = (
        "# Boot\n\nThe machine can be rebooted with systemctl reboot.\n\n"
        'After mounting all the filesystems, temporary files in "/tmp" are cleaned for each boot up.\n'
    )
    got = _asked(tmp_path, root, "boot.md", doc, ["What happens to the files I leave in /tmp when the machine is rebooted?"])
    assert got["quote"].to_list() == ['After mounting all the filesystems, temporary files in "/tmp" are cleaned for each boot up.'], (
        got.select("status", "quote")
    )


def test_what_comes_next_after_a_step_told_first_is_the_next_item(tmp_path, root):
    """Questions like "In the X process, once Y, what happens next?" and "I did Y. What do I do next?" name the step
    done: the answer is the list item after it, past the code block its item shows."""
    guide = (
        "# Backporting\n\n## Automated process\n\n1. Ensure the release tools are installed.\n\n"
        "2. Execute the backport command:\n\n   ```bash\n   # Example: backport PR 123\n   tools backport 123 --to=N\n   ```\n\n"
        "3. Proceed to step 5 in the manual section below.\n\n"
        "## Sponsoring\n\n1. The maintainer prepares a source package and puts it online somewhere.\n\n"
        "2. The sponsor downloads (or checks out) the source package.\n\n3. The sponsor reviews the source package.\n"
    )
    questions = [
        "In the sponsoring process, once the maintainer has put the source package online, what happens next?",
        "I executed the backport command for the automated backport. What do I do next?",
    ]
    got = _asked(tmp_path, root, "backporting.md", guide, questions)
    assert got["quote"].to_list() == [
        "The sponsor downloads (or checks out) the source package.",
        "Proceed to step 5 in the manual section below.",
    ], got.select("status", "quote")


def test_a_file_path_the_question_names_must_be_in_the_answer(tmp_path, root):
    """A path is a name, like a number: a rule about another path does not answer a question about
    "/usr/local", while one naming it does; "and/or" is no path."""
    manual = (
        "# Files\n\nPackages must not ship /usr/X11R6/lib/X11/app-defaults/ files.\n\n"
        "Packages must not place any files in /usr/local, by unpacking or by scripts.\n"
    )
    questions = ["Can a package ship files into /usr/local?", "Can a package ship files into /opt/tools?"]
    questions.append("Can packages ship and/or place files?")
    got = _asked(tmp_path, root, "files.md", manual, questions)
    assert got["quote"][0] == "Packages must not place any files in /usr/local, by unpacking or by scripts.", got.select("status", "quote")
    assert got["status"][1] == "no_answer", got.select("status", "quote")
    assert got["status"][2] == "answered", got.select("status", "quote")


def test_a_term_the_question_quotes_must_be_in_the_answer_itself(tmp_path, root):
    """A quoted term names what is asked about: of two sentences of one section, the one naming
    'staff' answers, not the better ranked one about 'adm' whose headings name 'staff' too."""
    manual = (
        "# The 'adm' and 'staff' groups\n\n"
        "The 'adm' group are usually administrators, and this group permission allows them to read log files.\n\n"
        "The 'staff' group are usually help-desk/junior sysadmins, allowing them to work in /usr/local.\n"
    )
    questions = ["Who is the 'staff' group typically meant for?", "Who is the 'adm' group meant for?"]
    got = _asked(tmp_path, root, "groups.md", manual, questions)
    assert got["quote"].to_list() == [
        "The 'staff' group are usually help-desk/junior sysadmins, allowing them to work in /usr/local.",
        "The 'adm' group are usually administrators, and this group permission allows them to read log files.",
    ], got.select("status", "quote")


def test_a_framing_phrase_is_no_part_of_the_question_and_a_term_is_defined_by_what_it_does(tmp_path, root):
    """A framing phrase ("In plain terms, ...") frames the question: its words are not searched, and "what is X
    (expansion) on Y" still asks to define X; the sentence with X as subject saying what it does
    defines it, before one that only writes its name out; "what role does X play" asks the same."""
    from qspace_frames.ask.parse import parse_questions

    parsed = parse_questions(
        [
            "In plain terms, what is PAM (Pluggable Authentication Modules) on Debian?",
            "What is a tarball, in simple terms?",
            "What role does NSS (Name Service Switch) play on a Debian system?",
        ]
    )
    assert parsed["defined_term"].to_list() == ["PAM", "tarball", "NSS"]
    words = [sorted(k["text"].lower() for k in kws) for kws in parsed["keywords"].to_list()]
    assert not {"plain", "terms", "simple"} & set(words[0] + words[1]), words
    manual = (
        "# Authentication\n\nModern systems provide PAM (Pluggable Authentication Modules) and NSS (Name Service Switch) "
        "to the local system administrator.\n\n"
        "PAM (Pluggable Authentication Modules) allows system administrators to choose how applications authenticate users.\n\n"
        "NSS offers a flexible name service mechanism which is used by the C standard library.\n"
    )
    got = _asked(
        tmp_path,
        root,
        "auth.md",
        manual,
        ["In plain terms, what is PAM (Pluggable Authentication Modules) on Debian?", "What role does NSS (Name Service Switch) play?"],
    )
    assert got["quote"].to_list() == [
        "PAM (Pluggable Authentication Modules) allows system administrators to choose how applications authenticate users.",
        "NSS offers a flexible name service mechanism which is used by the C standard library.",
    ], got.select("status", "quote")


def test_who_is_answered_by_maintainers_or_a_group_s_members_and_what_address_to_put_by_a_url(tmp_path, root):
    """A "who" is answered by the people a manual names as a common noun ("Package maintainers",
    "people from the group "wheel""), and "what address do I put in X" asks for a web address."""
    manual = (
        "# Security updates\n\n"
        "Security updates for the unstable branch are prepared when the packages are uploaded.\n\n"
        "Package maintainers are responsible for preparing packages for the unstable branch.\n\n"
        "To update the system, put the following line in your sources.list and you will receive security updates.\n\n"
        "- Configure apt for security updates -- add to /etc/apt/sources.list an entry for http://security.debian.org/\n\n"
        "# Root\n\nOther users will not be allowed to use su to become root.\n\n"
        'This makes sure that only people from the group "wheel" can use su to become root.\n'
    )
    questions = [
        "Who prepares the packages that go into the unstable branch?",
        "After setting up pam_wheel, who is allowed to use su to become root?",
        "What address do I put in sources.list to receive security updates?",
    ]
    got = _asked(tmp_path, root, "security.md", manual, questions)
    assert got["quote"].to_list() == [
        "Package maintainers are responsible for preparing packages for the unstable branch.",
        'This makes sure that only people from the group "wheel" can use su to become root.',
        "Configure apt for security updates -- add to /etc/apt/sources.list an entry for http://security.debian.org/",
    ], got.select("status", "quote")


def test_an_identifier_of_code_names_no_concept_of_the_dictionary():
    """CAP_LINUX_IMMUTABLE holds no per diem "cap"; a question about a daily cap for meals still does."""
    from qspace_frames.ask.parse import parse_questions

    question = "Once CAP_LINUX_IMMUTABLE has been dropped from the bounding set, can root still clear the append-only or immutable flags?"
    parsed = parse_questions([question, "What is the daily cap for meals?"])
    concepts = [{k["semantic_group"] for k in kws if k["source"] == "expert_dictionary"} for kws in parsed["keywords"].to_list()]
    assert "per diem" not in concepts[0] and "per diem" in concepts[1], concepts


def test_a_denial_inside_what_happens_if_is_no_denial_of_what_is_asked(tmp_path, root):
    """A denial in a hypothetical ("What can happen if I don't transfer ... last?") is not what is
    asked: the rule and its consequence answer, not a sentence saying there is "no need" of something."""
    manual = (
        "# Uploading\n\n"
        "Please note that you should transfer the changes file last when uploading. Otherwise, your upload may be rejected "
        "because the archive software will see that not all files have been uploaded.\n\n"
        "However, there's no need to list each and every changed file when uploading, especially if the change was small.\n"
    )
    got = _asked(tmp_path, root, "upload.md", manual, ["What can happen if I don't transfer the changes file last when uploading?"])
    assert got["quote"][0].startswith("Please note that you should transfer the changes file last"), got.select("status", "quote")
    assert "Otherwise, your upload may be rejected" in got["quote"][0], got.select("status", "quote")


def test_a_technical_name_the_corpus_never_writes_is_declined_and_said(tmp_path, root):
    """A question naming something technical no document writes ("ed25519") is not answered by the
    sentence sharing its other words; the reader is told which name is missing. The same name
    written in another case, or as a plural acronym, is found."""
    doc = (
        "# Uploads\n\nThe changes file must be signed using the debsign command with your private GPG key.\n\n"
        "Every upload is checked by the ftpmasters before it enters the archive. RSA keys of 4096 bits are accepted.\n"
    )
    wb = _small_corpus(tmp_path, root, {"uploads.md": doc})
    questions = [
        "Does Debian accept uploads signed with an ed25519 GPG key?",
        "Which tool signs the changes file of an upload?",
        "Which rsa keys are accepted?",
        "Who checks the uploads of NDAs?",
    ]
    got = wb.ask(questions)
    assert got["status"].to_list() == ["no_answer", "answered", "answered", "no_answer"]
    assert got["unmentioned"].to_list() == [["ed25519"], None, None, ["NDA"]]
    assert got["nearest"][0] is None  # nothing is offered as near an answer the corpus cannot hold
    shown = to_text(got)
    assert "No answer found: no document of the corpus mentions 'ed25519'." in shown
    assert to_json(got)[0]["unmentioned"] == ["ed25519"] and to_json(got)[1]["unmentioned"] == []
    jsonschema.validate(to_json(got), ANSWER_JSON_SCHEMA)


def test_who_can_help_asks_for_a_way_to_reach_help(tmp_path, root):
    """ "Who can help me ...?" asks how to reach help (the contact type) and "help" is "assistance"
    (a concept of the dictionary): the sentence giving an address and a number for assistance
    answers, not the preamble naming the site's address, which holds as many of the question's words."""
    doc = (
        "# Privacy Policy\n\n"
        "Your access to and use of any of the Example Gazette websites, including www.example-gazette.com, is governed by this policy.\n\n"
        "You can correct or update your personally identifiable information through the My Profile Page.\n\n"
        "For assistance in updating your information, contact us via email at: help@example-gazette.com or by calling 1-855-555-0100.\n"
    )
    got = _asked(tmp_path, root, "gazette.txt", doc, ["Who can help me update my profile information on the Example Gazette site?"])
    assert got["quote"].to_list() == [
        "For assistance in updating your information, contact us via email at: help@example-gazette.com or by calling 1-855-555-0100."
    ], got.select("status", "answer_type", "quote")


def test_getting_bigger_forever_is_growing_indefinitely(tmp_path, root):
    """The dictionary's growth and indefinitely concepts: a log "getting bigger forever" is one that
    grows indefinitely, so the sentence saying so ranks first among the candidates offered beside
    "no answer" (the question's other words, "keeps", "writes", "problem", are not the rule's)."""
    doc = (
        "# Log files\n\n"
        'Log files should usually be named "/var/log/package.log".\n\n'
        "If you have many log files, you should usually create a directory named /var/log/package and place your log files there.\n\n"
        "Log files must be rotated occasionally so that they don't grow indefinitely.\n"
    )
    got = _asked(tmp_path, root, "logs.md", doc, ["my package writes a log that just keeps getting bigger forever, is that a problem?"])
    first = got["quote"][0] or got["nearest"][0][0]["quote"]
    assert first == "Log files must be rotated occasionally so that they don't grow indefinitely.", got.select("status", "quote", "nearest")


def test_a_question_too_short_to_name_its_topic_is_answered_when_one_document_speaks_of_it(tmp_path, root):
    """ "How much is the deposit?" has one content word, too few to say what it is about; it is
    answered when the corpus speaks of a deposit in one document only, and sent back for
    clarification when several documents do (whose deposit?). Found by a helper: a one-page
    corpus saying "The deposit is $200." was asked to clarify."""
    lease = "# Lease\n\nThe deposit is $200.\n\nThe rent is due on the first day of each month.\n"
    (tmp_path / "one").mkdir(), (tmp_path / "two").mkdir()
    got = _small_corpus(tmp_path / "one", root, {"lease.md": lease}).ask(["How much is the deposit?", "Approval?"])
    assert got["status"].to_list() == ["answered", "clarification"], got.select("status", "quote", "clarification")
    assert got["quote"][0] == "The deposit is $200."
    hall = "# Hall hire\n\nThe deposit is $500, returned after the event.\n"
    got = _small_corpus(tmp_path / "two", root, {"lease.md": lease, "hall.md": hall}).ask(["How much is the deposit?"])
    assert got["status"].to_list() == ["clarification"], got.select("status", "quote")


def test_a_bare_definite_is_answered_from_the_one_document_naming_it_and_offers_only_concepts_the_corpus_holds(tmp_path, root):
    """ "What is the cap?" names no document: over a corpus whose one contract speaks of a cap it is
    answered there; over two contracts with caps it is sent back, without offering "per diem or
    threshold" (the dictionary's concepts "cap" may mean), since neither is named by a word of its own."""
    nda = "# Agreement\n\nThe liability cap is $1,000,000.\n\nPayment is due within 45 days.\n"
    lease = "# Lease\n\nThe cap on rent increases is 3% a year.\n"
    (tmp_path / "one").mkdir(), (tmp_path / "two").mkdir()
    got = _small_corpus(tmp_path / "one", root, {"nda.md": nda}).ask(["What is the cap?"])
    assert got["status"].to_list() == ["answered"] and got["quote"][0] == "The liability cap is $1,000,000.", got.select("status", "quote")
    got = _small_corpus(tmp_path / "two", root, {"nda.md": nda, "lease.md": lease}).ask(["What is the cap?"])
    assert got["status"].to_list() == ["clarification"], got.select("status", "quote")
    assert got["clarification"][0] == (
        "Which document or topic does 'the cap' refer to (for example a policy, a procedure, a metric or a region)?"
    )
