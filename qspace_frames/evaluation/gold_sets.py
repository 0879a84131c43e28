"""Public question-answering sets turned into a corpus folder and a gold file: the ContractNLI
and PolicyQA splits in ../shared/corpora (documents written unchanged, evidence spans kept).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .gold import is_int

CONTRACTNLI_EVIDENCE = ("Entailment", "Contradiction")  # NotMentioned has no evidence spans


def _safe_name(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", s).strip("._") or "doc"


def _natural_key(s: str) -> tuple:
    """'nda-2' before 'nda-10'."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"(\d+)", s) if p)


def _doc_name(doc: dict) -> str:
    if is_int(doc.get("id")):
        return f"{doc['id']:05d}"  # zero-padded so that path order is id order
    if doc.get("id") is not None:
        return _safe_name(str(doc["id"]))
    return _safe_name(Path(str(doc["file_name"])).stem)


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The span without leading and trailing whitespace; None when it is only whitespace.

    ContractNLI spans often end with the space or newline before the next sentence. Whitespace
    is not evidence, and fragments never include it at their edges, so leaving it in would cap
    every fragment strategy's recall below 1 for no reason a reader could act on.
    """
    piece = text[start:end]
    start += len(piece) - len(piece.lstrip())
    end -= len(piece) - len(piece.rstrip())
    return (start, end) if start < end else None


def _merged(spans: list[tuple[int, int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:  # overlapping or adjacent: one piece of evidence
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def contractnli_to_gold(json_path: str | Path, out_dir: str | Path) -> Path:
    """Convert a ContractNLI split into a corpus folder plus a gold file. Returns the gold path.

    Writes `<out_dir>/docs/<name>.txt` (each document's text exactly, UTF-8 bytes, no newline
    translation, so the txt loader returns it unchanged and offsets agree) and
    `<out_dir>/gold.jsonl`. The corpus folder to discover is `<out_dir>/docs` (kept apart from
    gold.jsonl so discovery does not ingest the gold file); `document` paths are relative to it.
    One question per (document, hypothesis) labelled Entailment or Contradiction: id
    "<document id>:<label id>", question = the hypothesis, gold_spans = the referenced spans
    trimmed of edge whitespace (whitespace-only spans dropped; 0.2% of the dev set's evidence
    characters), sorted, with overlapping or adjacent ones merged, plus the extra key `label`. Documents in id
    order, hypotheses in natural label order (nda-2 before nda-10).
    """
    data = json.loads(Path(json_path).read_text(encoding="utf-8"))
    labels = data["labels"]
    out_dir = Path(out_dir)
    docs_dir = out_dir / "docs"
    docs_dir.mkdir(parents=True, exist_ok=True)
    docs = sorted(
        data["documents"], key=lambda d: (0, d["id"], "") if is_int(d.get("id")) else (1, 0, str(d.get("id", d.get("file_name"))))
    )
    names: dict[str, str] = {}
    lines: list[str] = []
    for doc in docs:
        name = _doc_name(doc)
        did = str(doc.get("id", name))
        if name in names:
            raise ValueError(f"{json_path}: documents {names[name]} and {did} both map to docs/{name}.txt")
        names[name] = did
        text: str = doc["text"]
        (docs_dir / f"{name}.txt").write_bytes(text.encode("utf-8"))
        spans = doc["spans"]
        annotations = doc["annotation_sets"][0]["annotations"]
        for label_id in sorted(annotations, key=_natural_key):
            ann = annotations[label_id]
            if ann["choice"] not in CONTRACTNLI_EVIDENCE:
                continue
            picked = []
            for i in ann["spans"]:
                if not (is_int(i) and 0 <= i < len(spans)):
                    raise ValueError(f"{json_path}: document {did}: {label_id}: span index {i!r} out of range (0..{len(spans) - 1})")
                s, e = spans[i]
                if not (0 <= s < e <= len(text)):
                    raise ValueError(f"{json_path}: document {did}: span {i} [{s}, {e}] outside the text ({len(text)} characters)")
                trimmed = _trim(text, s, e)
                if trimmed:
                    picked.append(trimmed)
            if not picked:
                raise ValueError(f"{json_path}: document {did}: {label_id}: {ann['choice']} without evidence spans")
            rec = {
                "id": f"{did}:{label_id}",
                "question": labels[label_id]["hypothesis"],
                "document": f"{name}.txt",
                "gold_spans": _merged(picked),
                "label": ann["choice"],
            }
            lines.append(json.dumps(rec, ensure_ascii=False))
    return _write_gold(out_dir / "gold.jsonl", lines)


def _write_gold(gold_path: Path, lines: list[str]) -> Path:
    tmp = gold_path.with_suffix(".jsonl.tmp")
    tmp.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    tmp.replace(gold_path)  # never leave a half-written gold file
    return gold_path


POLICYQA_SEPARATOR = "\n\n"  # between a policy's paragraphs: plain text with blank lines, no headings


def policyqa_to_gold(json_path: str | Path, out_dir: str | Path) -> Path:
    """Convert a PolicyQA split (SQuAD v1 format) into a corpus folder plus a gold file. Returns
    the gold path.

    Each policy (`data[i]`, named by its title) becomes `<out_dir>/docs/<title>.txt`: its
    paragraphs in order, joined by a blank line, written as UTF-8 bytes unchanged. Each question
    becomes one gold line (id, question, document, gold_spans, plus the extra key `type`) whose
    span is its answer shifted by the paragraph's start; an answer whose text is not at its offset
    is an error naming it. Policies in title order, questions in file order.
    """
    data = json.loads(Path(json_path).read_text(encoding="utf-8"))
    out_dir = Path(out_dir)
    docs_dir = out_dir / "docs"
    docs_dir.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    names: set[str] = set()
    for policy in sorted(data["data"], key=lambda d: str(d["title"])):
        name = _safe_name(str(policy["title"]))
        if name in names:
            raise ValueError(f"{json_path}: two policies map to docs/{name}.txt")
        names.add(name)
        parts, start = [], 0
        for para in policy["paragraphs"]:
            context = para["context"]
            for qa in para["qas"]:
                for ans in qa["answers"][:1]:
                    s = start + ans["answer_start"]
                    if context[ans["answer_start"] : ans["answer_start"] + len(ans["text"])] != ans["text"]:
                        raise ValueError(f"{json_path}: {name}: question {qa['id']}: answer text not at its offset")
                    rec = {
                        "id": qa["id"],
                        "question": qa["question"],
                        "document": f"{name}.txt",
                        "gold_spans": [[s, s + len(ans["text"])]],
                        "type": qa.get("type", ""),
                    }
                    lines.append(json.dumps(rec, ensure_ascii=False))
            parts.append(context)
            start += len(context) + len(POLICYQA_SEPARATOR)
        (docs_dir / f"{name}.txt").write_bytes(POLICYQA_SEPARATOR.join(parts).encode("utf-8"))
    return _write_gold(out_dir / "gold.jsonl", lines)
