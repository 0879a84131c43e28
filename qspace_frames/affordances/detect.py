"""Stage 4: answer affordances, the questions each fragment can answer.

Every fragment is split into sentences; twelve detectors, each a row of `DETECTORS` built from
named regular expressions, decide which questions a sentence answers and extract the values
that answer them (approver role, amount, date, team, duration, step number, ...). A question is
kept only with its exact supporting span: the sentence, with code-point offsets into the
document text, and every extracted value located inside it at its own offsets. `verify` checks
spans and values against the document text (not against the fragment they were cut from) and
drops, with a reason, anything that is not verbatim.

Values are located without Python loops: each value pattern is written as
`^(<prefix>)(<value>)`, so the character length of the prefix group is the value's offset in
the sentence."""

from __future__ import annotations

import re
from functools import cache

import polars as pl

from ..ids import content_id, id_expr
from ..params import AffordanceParams
from . import values
from .rules import (
    DETECTORS,
    EXTRA_CONDITIONS,
    OBJECT,
    SUBJECT,
    SUBJECT_ASCII,
    Detector,
    Slot,
)
from .sentences import sentences
from .values import MONEY

ROLES_DTYPE = pl.List(pl.Struct({"role": pl.String, "value": pl.String, "start": pl.Int64, "end": pl.Int64}))
SLOTS_DTYPE = pl.List(pl.Struct({"name": pl.String, "value": pl.String}))


def _only(cond: pl.Expr, text: pl.Expr) -> pl.Expr:
    """`text` where `cond` holds, else empty: Polars runs a string function on every row, null or
    not, so a costly one is given only the texts it is needed for."""
    return pl.when(cond).then(text).otherwise(pl.lit(""))


def _matching(sents: pl.LazyFrame, *patterns: str) -> pl.LazyFrame:
    """Sentences matching every pattern, each tested only on the survivors of the ones before (as
    one filter, Polars would run every regex over every sentence). A pattern is first screened
    without its word boundaries: a Unicode \\b stalls the regex engine's fast path on non-ASCII
    text, and the looser pattern passes every sentence the pattern matches."""
    loose = [p.replace(r"\b", "") for p in patterns]
    for pat in dict.fromkeys(q for pair in zip(loose, patterns) for q in pair):
        sents = sents.with_columns(pl.col("sentence").str.contains(pat).alias("_ok")).filter("_ok")
    return sents.drop("_ok")


@cache
def _extract_groups(regex: str, where: str) -> pl.Expr:
    """The regex's groups in the sentences where column `where` holds. Built once per process:
    Polars compiles the regex as the expression is built (to name its groups), for every shard."""
    return pl.when(where).then(_only(pl.col(where), pl.col("sentence")).str.extract_groups(regex))


def _find_slot(lf: pl.LazyFrame, slot: Slot) -> pl.LazyFrame:
    """Value and in-sentence offset of a slot: the first of its patterns that matches.

    Each pattern's groups are extracted once, into a column (two struct fields of one expression
    would run the regex twice). A screened pattern searches only the sentences that pass its
    screen."""
    text = pl.col("sentence")
    groups = [f"_{slot.name}_{i}" for i in range(len(slot.patterns))]
    lf = lf.with_columns(
        (text.str.contains(p.screen) if p.screen else pl.lit(True)).alias(f"{g}_ok") for p, g in zip(slot.patterns, groups)
    )
    lf = lf.with_columns(_extract_groups(p.regex, f"{g}_ok").alias(g) for p, g in zip(slot.patterns, groups))
    values = [pl.col(g).struct.field("2") for g in groups]
    starts = [pl.col(g).struct.field("1").str.len_chars() for g in groups]
    return lf.with_columns(
        pl.coalesce(values).str.strip_chars_end(" ,:;").alias(f"_{slot.name}"),
        pl.coalesce([pl.when(v.is_not_null()).then(s) for v, s in zip(values, starts)]).cast(pl.Int64).alias(f"_{slot.name}_at"),
    ).drop(*groups, *(f"{g}_ok" for g in groups))


def _clean_role(col: str) -> pl.Expr:
    """Drop a leading determiner the role pattern may have swallowed at a sentence start."""
    return pl.col(col).str.replace(r"^(?:The|A|An|Our|Its|Their|Each|All|Every|Any)\s+", "")


def _detect_one(sents: pl.LazyFrame, d: Detector) -> pl.LazyFrame:
    lf = _matching(sents, d.cue, *([EXTRA_CONDITIONS[d.intent]] if d.intent in EXTRA_CONDITIONS else []))
    for slot in d.slots:
        lf = _find_slot(lf, slot)
    role_slots = {"approver", "team", "target"}
    fixes = []
    for slot in d.slots:
        if slot.name in role_slots:  # keep the offset pointing at the cleaned value
            cleaned = _clean_role(f"_{slot.name}")
            fixes += [
                cleaned.alias(f"_{slot.name}"),
                (pl.col(f"_{slot.name}_at") + pl.col(f"_{slot.name}").str.len_chars() - cleaned.str.len_chars()).alias(f"_{slot.name}_at"),
            ]
    if fixes:
        lf = lf.with_columns(fixes)
    for req in d.required:
        lf = lf.filter(pl.col(f"_{req}").is_not_null() & (pl.col(f"_{req}").str.len_chars() > 0))
    roles = pl.concat_list(
        [
            pl.struct(
                pl.lit(s.role).alias("role"),
                pl.col(f"_{s.name}").alias("value"),
                (pl.col("sent_start") + pl.col(f"_{s.name}_at")).alias("start"),
                (pl.col("sent_start") + pl.col(f"_{s.name}_at") + pl.col(f"_{s.name}").str.len_chars()).alias("end"),
            )
            for s in d.slots
            if s.role
        ]
    ).list.eval(pl.element().filter(pl.element().struct.field("value").is_not_null() & (pl.element().struct.field("value") != "")))
    n_opt = sum(1 for s in d.slots if s.name not in d.required)
    filled_opt = (
        pl.sum_horizontal([pl.col(f"_{s.name}").is_not_null().cast(pl.Int64) for s in d.slots if s.name not in d.required])
        if n_opt
        else pl.lit(0)
    )
    conf = (pl.lit(d.base_confidence) + 0.04 * filled_opt).clip(upper_bound=0.99)
    return lf.with_columns(
        pl.lit(d.intent).alias("intent"),
        pl.lit("direct").alias("support"),
        pl.lit(d.intent).alias("detector"),
        roles.cast(ROLES_DTYPE).alias("roles"),
        conf.alias("confidence"),
    ).select(
        "fragment_id",
        "doc_id",
        "heading_path",
        "sentence",
        "sent_start",
        "sent_end",
        "intent",
        "support",
        "detector",
        "roles",
        "confidence",
    )


def _partial_one(sents: pl.LazyFrame, d: Detector, direct: pl.LazyFrame, p: AffordanceParams) -> pl.LazyFrame:
    """A process-level question from a surface cue, where the direct detector did not fire."""
    return (
        _matching(sents, d.partial_cue)
        .join(direct.filter(pl.col("intent") == d.intent).select("fragment_id", "sent_start"), on=["fragment_id", "sent_start"], how="anti")
        .with_columns(
            pl.lit(d.intent).alias("intent"),
            pl.lit("partial").alias("support"),
            pl.lit(f"{d.intent}:partial").alias("detector"),
            pl.lit([], dtype=ROLES_DTYPE).alias("roles"),
            pl.lit(p.partial_confidence).alias("confidence"),
        )
        .select(
            "fragment_id",
            "doc_id",
            "heading_path",
            "sentence",
            "sent_start",
            "sent_end",
            "intent",
            "support",
            "detector",
            "roles",
            "confidence",
        )
    )


def detect(sents: pl.LazyFrame, p: AffordanceParams) -> pl.LazyFrame:
    """Every detector over every sentence: one row per (sentence, intent, support)."""
    active = [d for d in DETECTORS if d.intent in p.detectors]
    direct = pl.concat([_detect_one(sents, d) for d in active])
    parts = [direct]
    if p.partial:
        parts += [_partial_one(sents, d, direct, p) for d in active if d.partial_cue]
    return pl.concat(parts).filter(pl.col("confidence") >= p.min_confidence)


def fires(sentences_: list[str], p: AffordanceParams) -> pl.DataFrame:
    """Which intents fire (directly) on raw sentences: for the labelled detector test set."""
    sents = (
        pl.LazyFrame({"sentence": sentences_})
        .with_row_index("i")
        .select(
            pl.col("i").cast(pl.String).alias("fragment_id"),
            pl.col("i").cast(pl.String).alias("doc_id"),
            pl.lit([], dtype=pl.List(pl.String)).alias("heading_path"),
            "sentence",
            pl.lit(0, dtype=pl.Int64).alias("sent_start"),
            pl.col("sentence").str.len_chars().cast(pl.Int64).alias("sent_end"),
        )
    )
    q = AffordanceParams(**{**p.model_dump(), "partial": False})
    return detect(sents, q).select(pl.col("fragment_id").cast(pl.Int64).alias("i"), "intent", "roles").collect().sort("i", "intent")


# ---- questions, typed values and ids -----------------------------------------------------------


def _role_value(role: str) -> pl.Expr:
    return pl.col("roles").list.eval(pl.element().filter(pl.element().struct.field("role") == role).struct.field("value")).list.first()


def questions(aff: pl.LazyFrame) -> pl.LazyFrame:
    """A readable question per affordance, from its intent's template and extracted values."""
    text = pl.col("sentence")
    ascii_ = text.str.len_bytes() == text.str.len_chars()
    extracted = (
        pl.when(ascii_).then(_only(ascii_, text).str.extract(SUBJECT_ASCII, 1)).otherwise(_only(~ascii_, text).str.extract(SUBJECT, 1))
    )
    raw_subject = pl.col("_q_raw")  # extracted once, into a column: the rule below reads it four times
    # "Badges that open ..." reads as "badges that open ..." mid-question; keep acronyms as written
    subject_value = (
        pl.when(raw_subject.str.contains(r"^[A-Z][a-z]"))
        .then(raw_subject.str.slice(0, 1).str.to_lowercase() + raw_subject.str.slice(1))
        .otherwise(raw_subject)
        .fill_null("this")
    )
    obj_value = pl.col("sentence").str.extract(OBJECT, 1).fill_null("this")
    # the subject and object regexes run once per distinct sentence, not once per template
    subject, obj = pl.col("_q_subject"), pl.col("_q_object")
    heading = pl.col("heading_path").list.last()
    of_heading = pl.when(heading.is_not_null()).then(pl.lit(" of '") + heading + pl.lit("'")).otherwise(pl.lit(""))
    q = pl.lit(None, dtype=pl.String)
    for d in DETECTORS:
        parts = []
        for tok in re.split(r"(\{[a-z_]+\})", d.question):
            if not tok:
                continue
            if tok == "{subject}":
                parts.append(subject)
            elif tok == "{object}":
                parts.append(obj)
            elif tok == "{of_heading}":
                parts.append(of_heading)
            elif tok == "{step_number}":
                parts.append(_role_value("step").fill_null("?"))
            elif tok == "{metric}":
                m = _role_value("metric_name")
                parts.append(pl.when(m.str.contains(r"[a-z]")).then(m.str.to_lowercase()).otherwise(m).fill_null("metric"))
            else:
                parts.append(pl.lit(tok))
        direct_q = pl.concat_str(parts)
        in_heading = pl.when(heading.is_not_null()).then(pl.lit(" in '") + heading + pl.lit("'")).otherwise(pl.lit(" here"))
        partial_q = pl.lit(f"What {d.intent.replace('_lookup', '').replace('_', ' ')} process is described") + in_heading + pl.lit("?")
        q = (
            pl.when(pl.col("intent") == d.intent)
            .then(pl.when(pl.col("support") == "direct").then(direct_q).otherwise(partial_q))
            .otherwise(q)
        )
    parts = (
        aff.select("sentence")
        .unique()
        .with_columns(extracted.alias("_q_raw"))
        .select("sentence", subject_value.alias("_q_subject"), obj_value.alias("_q_object"))
    )
    return (
        aff.join(parts, on="sentence", how="left", maintain_order="left").with_columns(q.alias("question")).drop("_q_subject", "_q_object")
    )


def typed_values(aff: pl.LazyFrame) -> pl.LazyFrame:
    """Amount as a number with its currency, date as a date, duration in hours, step number, percent."""
    amount_txt = pl.coalesce(
        _role_value("amount_threshold"), pl.when(pl.col("intent") == "metric_lookup").then(_role_value("metric_value"))
    )
    is_money = amount_txt.str.contains(MONEY)
    dur = _role_value("sla_duration")
    return aff.with_columns(
        pl.when(is_money).then(values.amount(amount_txt)).alias("amount"),
        pl.when(is_money).then(values.currency(amount_txt)).alias("currency"),
        values.date(_role_value("effective_date")).alias("date"),
        values.duration_hours(dur).alias("duration_hours"),
        pl.when(values.business(dur)).then(pl.lit("business")).when(dur.is_not_null()).then(pl.lit("calendar")).alias("duration_basis"),
        _role_value("step").cast(pl.Int64, strict=False).alias("step_number"),
        values.percent(pl.when(pl.col("intent") == "metric_lookup").then(_role_value("metric_value"))).alias("percent"),
    )


_SIGNED = ("amount", "currency", "date", "duration_hours", "step_number", "percent")


def _signature(aff: pl.LazyFrame) -> pl.LazyFrame:
    """Slot and evidence-role signatures, and the prototype each affordance belongs to.

    Worked out once per distinct intent, support, role names and set of filled typed values (a
    few hundred), not per affordance, and joined back."""
    keys = ["intent", "support", "_role_names", *(f"_has_{c}" for c in _SIGNED)]
    lf = aff.with_columns(
        pl.col("roles").list.eval(pl.element().struct.field("role")).alias("_role_names"),
        *(pl.col(c).is_not_null().alias(f"_has_{c}") for c in _SIGNED),
    )
    roles = pl.col("_role_names").list.unique().list.sort()
    typed = pl.concat_list(
        [pl.when(pl.col(f"_has_{c}")).then(pl.lit(c)).otherwise(pl.lit(None, dtype=pl.String)) for c in _SIGNED]
    ).list.drop_nulls()
    sigs = (
        lf.select(keys)
        .unique()
        .with_columns(
            roles.alias("role_signature"),
            pl.concat_list([roles, typed]).list.unique().list.sort().alias("slot_signature"),
        )
        .with_columns(
            pl.struct("intent", "support", "slot_signature", "role_signature")
            .map_batches(_prototype_ids, return_dtype=pl.String)
            .alias("prototype_id")
        )
    )
    return lf.join(sigs, on=keys, how="left", nulls_equal=True, maintain_order="left").drop(keys[2:])


def _prototype_ids(s: pl.Series) -> pl.Series:
    return pl.Series(
        [
            content_id(
                "proto", {"intent": r["intent"], "support": r["support"], "slots": r["slot_signature"], "roles": r["role_signature"]}
            )
            for r in s.to_list()
        ],
        dtype=pl.String,
    )


# ---- verification -------------------------------------------------------------------------------


def _squash(e: pl.Expr) -> pl.Expr:
    """Whitespace runs as one space, trimmed; only texts with a run to squash (two whitespace
    characters in a row, or one that is not a space) are searched."""
    runs = e.str.contains(r"\s\s|[^\S ]")
    return pl.when(runs).then(_only(runs, e).str.replace_all(r"\s+", " ")).otherwise(e).str.strip_chars()


def _doc_at(start: pl.Expr, end: pl.Expr, base: pl.Expr, base_start: pl.Expr, base_end: pl.Expr) -> pl.Expr:
    """The document text at [start, end), cut from `base` (the document text at [base_start,
    base_end)) when the range lies inside it, else from the whole document text: Polars slices
    code points by walking the text from its beginning, so cutting every span and value from
    the whole document cost most of the verification."""
    inside = (base_start >= 0) & (base_start <= start) & (start <= end) & (end <= base_end)
    whole = _only(~inside.fill_null(False), pl.col("doc_text"))
    return pl.when(inside).then(base.str.slice(start - base_start, end - start)).otherwise(whole.str.slice(start, end - start))


def verify(aff: pl.LazyFrame, fragments: pl.LazyFrame, docs: pl.LazyFrame) -> pl.LazyFrame:
    """Check each span and value against the document text at its offsets; give a reason per failure.

    Adds `reject_reason` (null when the affordance is verified). The span must equal the document
    text at [span_start, span_end), lie inside its fragment, and be found in the fragment text
    (modulo whitespace); every role value must equal the document text at its own offsets and
    lie inside the span.
    """
    bad_value = pl.col("roles").list.eval((pl.element().struct.field("start") < pl.element().struct.field("end")).not_()).list.any()
    # per fragment, once: its squashed text and the document text over its range
    frags = (
        fragments.join(aff.select("fragment_id").unique(), on="fragment_id", how="semi")
        .select(
            "fragment_id",
            "doc_id",
            pl.col("char_start").alias("_fs"),
            pl.col("char_end").alias("_fe"),
            _squash(pl.col("text")).alias("_fts"),
        )
        .join(docs, on="doc_id", how="left")
        .with_columns(pl.col("doc_text").str.slice(pl.col("_fs"), pl.col("_fe") - pl.col("_fs")).alias("_fd"))
        .drop("doc_id", "doc_text")
    )
    checked = (
        aff.join(frags, on="fragment_id", how="left")
        .join(docs, on="doc_id", how="left")
        .with_columns(_doc_at(pl.col("span_start"), pl.col("span_end"), pl.col("_fd"), pl.col("_fs"), pl.col("_fe")).alias("_sd"))
        .with_columns(
            pl.col("roles").list.eval(pl.element().struct.field("start")).alias("_vs"),
            pl.col("roles").list.eval(pl.element().struct.field("end")).alias("_ve"),
            pl.col("roles").list.eval(pl.element().struct.field("value")).alias("_vv"),
        )
    )
    # each value against the document text: explode, compare, re-aggregate per affordance
    values_ok = (
        checked.select("affordance_id", "doc_text", "_sd", "span_start", "span_end", "_vs", "_ve", "_vv")
        .explode(["_vs", "_ve", "_vv"])
        .with_columns(
            (
                pl.col("_vv").is_null()
                | (
                    (_doc_at(pl.col("_vs"), pl.col("_ve"), pl.col("_sd"), pl.col("span_start"), pl.col("span_end")) == pl.col("_vv"))
                    & (pl.col("_vs") >= pl.col("span_start"))
                    & (pl.col("_ve") <= pl.col("span_end"))
                )
            ).alias("_ok")
        )
        .group_by("affordance_id")
        .agg(pl.col("_ok").all().alias("_values_ok"))
    )
    reason = (
        pl.when(pl.col("doc_text").is_null())
        .then(pl.lit("document text missing"))
        .when(pl.col("_fs").is_null())
        .then(pl.lit("fragment missing"))
        .when(pl.col("_sd") != pl.col("span"))
        .then(pl.lit("span differs from the document text at its offsets"))
        .when((pl.col("span_start") < pl.col("_fs")) | (pl.col("span_end") > pl.col("_fe")))
        .then(pl.lit("span outside its fragment"))
        .when(~pl.col("_fts").str.contains(_squash(pl.col("span")), literal=True))
        .then(pl.lit("span not found verbatim in its fragment"))
        .when(bad_value | ~pl.col("_values_ok"))
        .then(pl.lit("a value differs from the document text at its offsets"))
    )
    return (
        checked.join(values_ok, on="affordance_id", how="left")
        .with_columns(pl.col("_values_ok").fill_null(True))
        .with_columns(reason.alias("reject_reason"))
        .drop("_fs", "_fe", "_fts", "_fd", "_sd", "_vs", "_ve", "_vv", "_values_ok", "doc_text")
    )


AFFORDANCES = {
    "affordance_id": pl.String,
    "fragment_id": pl.String,
    "doc_id": pl.String,
    "prototype_id": pl.String,
    "intent": pl.String,
    "support": pl.String,
    "question": pl.String,
    "span": pl.String,
    "span_start": pl.Int64,
    "span_end": pl.Int64,
    "slots": SLOTS_DTYPE,
    "roles": ROLES_DTYPE,
    "slot_signature": pl.List(pl.String),
    "role_signature": pl.List(pl.String),
    "amount": pl.Float64,
    "currency": pl.String,
    "date": pl.Date,
    "duration_hours": pl.Float64,
    "duration_basis": pl.String,
    "step_number": pl.Int64,
    "percent": pl.Float64,
    "confidence": pl.Float64,
    "detector": pl.String,
}
REJECTED = {
    "affordance_id": pl.String,
    "fragment_id": pl.String,
    "doc_id": pl.String,
    "intent": pl.String,
    "support": pl.String,
    "span": pl.String,
    "span_start": pl.Int64,
    "span_end": pl.Int64,
    "reject_reason": pl.String,
}


_TYPED = ("amount", "currency", "date", "duration_hours", "duration_basis", "step_number", "percent")


def _slots(aff: pl.LazyFrame) -> pl.LazyFrame:
    """Slots: every role value plus the typed values, as (name, value) text pairs.

    Built long, one row per slot, and gathered per affordance in order: concat_list over seven
    mostly-null struct columns cost more than all of the stage's other bookkeeping."""
    lf = aff.with_row_index("_row")
    named = pl.struct(pl.element().struct.field("role").alias("name"), pl.element().struct.field("value"))
    long = [lf.select("_row", pl.lit(0).alias("_k"), pl.col("roles").list.eval(named).alias("_slot")).explode("_slot").drop_nulls("_slot")]
    long += [
        lf.filter(pl.col(c).is_not_null()).select(
            "_row", pl.lit(k).alias("_k"), pl.struct(pl.lit(c).alias("name"), pl.col(c).cast(pl.String).alias("value")).alias("_slot")
        )
        for k, c in enumerate(_TYPED, 1)
    ]
    slots = (
        pl.concat(long).sort("_row", "_k", maintain_order=True).group_by("_row", maintain_order=True).agg(pl.col("_slot").alias("slots"))
    )
    return (
        lf.join(slots, on="_row", how="left", maintain_order="left")
        .with_columns(pl.col("slots").fill_null(pl.lit([], dtype=SLOTS_DTYPE)).cast(SLOTS_DTYPE))
        .drop("_row")
    )


def affordances(fragments: pl.LazyFrame, docs: pl.LazyFrame, p: AffordanceParams) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Fragments in; (verified affordances, rejected ones with their reason) out."""
    # collected once: every detector reads the same sentences (the plan would otherwise repeat them)
    sents = sentences(fragments, p).collect().lazy()
    found = detect(sents, p).collect().lazy().rename({"sentence": "span", "sent_start": "span_start", "sent_end": "span_end"})
    found = _signature(typed_values(questions(found.with_columns(pl.col("span").alias("sentence"))).drop("sentence")).collect().lazy())
    found = _slots(found).with_columns(id_expr("aff", "fragment_id", "intent", "support", "span_start", "span_end").alias("affordance_id"))
    # collected once: verification reads them twice (values and spans), kept and rejected once each
    checked = verify(found.collect().lazy(), fragments, docs).collect().lazy()
    order = ["doc_id", "span_start", "intent", "support"]
    kept = checked.filter(pl.col("reject_reason").is_null()).select([pl.col(c).cast(t) for c, t in AFFORDANCES.items()]).sort(order)
    rejected = checked.filter(pl.col("reject_reason").is_not_null()).select([pl.col(c).cast(t) for c, t in REJECTED.items()]).sort(order)
    return kept, rejected


def detector_scores(cases: pl.DataFrame, p: AffordanceParams) -> pl.DataFrame:
    """Precision and recall of each detector on a labelled set (intent, label, sentence)."""
    sents = cases["sentence"].unique().sort()
    fired = fires(sents.to_list(), p).select(
        pl.col("i").map_elements(lambda i: sents[i], return_dtype=pl.String).alias("sentence"), "intent"
    )
    scored = cases.join(fired.with_columns(pl.lit(1).alias("fired")), on=["sentence", "intent"], how="left").with_columns(
        pl.col("fired").fill_null(0)
    )
    return (
        scored.group_by("intent")
        .agg(
            ((pl.col("label") == 1) & (pl.col("fired") == 1)).sum().alias("tp"),
            ((pl.col("label") == 0) & (pl.col("fired") == 1)).sum().alias("fp"),
            ((pl.col("label") == 1) & (pl.col("fired") == 0)).sum().alias("fn"),
            ((pl.col("label") == 0) & (pl.col("fired") == 0)).sum().alias("tn"),
        )
        .with_columns(
            (pl.col("tp") / (pl.col("tp") + pl.col("fp"))).fill_nan(0.0).alias("precision"),
            (pl.col("tp") / (pl.col("tp") + pl.col("fn"))).fill_nan(0.0).alias("recall"),
        )
        .sort("intent")
    )
