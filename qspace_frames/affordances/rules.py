"""The detectors, as data: the vocabulary their patterns are built from (roles, dates, money,
percentages, durations, regions, metrics, thresholds) and one `Detector` row per intent, each a
question template with the slots it extracts and the patterns that find them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from .values import DATE, DURATION, MONEY, PERCENT

# Heads of a named role, team or party: the last word of "Chief Financial Officer",
# "Procurement Team", "VP of Operations" (head VP), "Accounts Payable", "the Licensor".
_CAP_HEADS = (
    "Officer|Team|Department|Dept|Office|Committee|Board|Directors|Director|Manager|Controller|"
    "Treasurer|Treasury|Counsel|Lead|Leader|Head|Group|Desk|Center|Centre|Commander|President|"
    "Chair|Chairperson|Council|Administrator|Secretary|Partner|Unit|Division|Bureau|Agency|"
    "Authority|Operations|Security|Finance|Procurement|Legal|Compliance|Audit|Payable|Receivable|"
    "Engineering|Services|Supervisor|Coordinator|Steward|Specialist|Owner|Architect|Management|"
    "Licensor|Licensee|Landlord|Tenant|Supplier|Customer|Company|Client|Contractor|Vendor|Buyer|"
    "Seller|Distributor|Provider|Purchaser|Consultant|Franchisor|Franchisee|Manufacturer|"
    "Reseller|Employer|Trustee|Sponsor|Investigator|CFO|CEO|COO|CIO|CTO|CISO|CPO|CRO|CHRO|CCO|"
    "DPO|SVP|EVP|VP|HR|IT|SOC|PMO|FP&A|GC|Governance|Risk|People|Payroll|Sales|Marketing|Quality"
)
_CAP_WORD = r"[A-Z][A-Za-z0-9&'’\-]*"
_OF_TAIL = rf"(?:\s+(?:of|for)\s+(?:the\s+)?{_CAP_WORD}(?:\s+(?:and\s+)?{_CAP_WORD}){{0,3}}|\s+for\s+(?:each|every|the|all|a)\s+[a-z]+)?"
_LOWER_HEADS = r"team|department|office|committee|group|unit|desk|function|manager|supervisor|director|lead|leader|engineer"
_LOWER_MODS = r"direct|line|hiring|shift|department|project|account|duty|regional|site|store|on-call|budget|general|people|team"
ROLE = (
    rf"(?:(?:{_CAP_WORD}\s+(?:(?:and|&)\s+)?){{0,5}}(?:{_CAP_HEADS})\b{_OF_TAIL}"
    rf"|(?:{_CAP_WORD}\s+(?:(?:and|&)\s+)?){{1,4}}(?:{_LOWER_HEADS})\b"
    rf"|(?:(?:{_LOWER_MODS})\s+)?(?:manager|supervisor|department head|team leader|team lead|controller|treasurer|on-call engineer)\b)"
)
# Determiners and possessives that may stand before a role: "the", "a", "the employee's", "each party's".
DET = r"(?:(?:the|a|an|its|their|your|our|each|either|both)\s+)?(?:(?:[A-Za-z\-]+)(?:'s|’s)\s+)?"

REGION = (
    r"\b(?:North America|South America|Latin America|LATAM|EMEA|APAC|Asia[- ]Pacific|Europe|"
    r"European Union|EU|United States|U\.S\.|USA|United Kingdom|UK|Canada|Mexico|Germany|France|"
    r"India|Japan|China|Australia|Brazil|Singapore|Ireland|Netherlands)\b"
)
METRIC = (
    r"(?i:gross margin|operating margin|net (?:profit )?margin|profit margin|ebitda|ebit|net income|"
    r"gross profit|operating income|(?:free |operating )?cash flow|customer churn|churn(?: rate)?|"
    r"net (?:revenue |dollar )?retention(?: rate)?|retention rate|annual recurring revenue|arr|"
    r"monthly recurring revenue|mrr|days sales outstanding|dso|employee turnover|turnover|attrition(?: rate)?|"
    r"utili[sz]ation(?: rate)?|on-time delivery(?: rate)?|(?:effective )?tax rate|return on (?:equity|assets|investment)|"
    r"roe|roa|roi|capital expenditures?|capex|operating expenses|opex|customer acquisition cost|cac|"
    r"lifetime value|ltv|average revenue per (?:user|account)|arpu|shrinkage|resolution rate|conversion rate|"
    r"nps|net promoter score|bookings|backlog|earnings per share|eps|cost of (?:goods sold|sales)|cogs|"
    r"market share|occupancy(?: rate)?|default rate|loss ratio|yield|revenue|sales growth|headcount growth|"
    r"gross bookings|burn rate|win rate|renewal rate|uptime|availability)"
)
_THRESH = (
    r"(?i:over|under|exceeds?|exceeding|exceeded|in excess of|threshold(?:\s+of)?|above|below|up to|"
    r"more than|less than|at least|greater than|not to exceed|not exceeding|no more than|at or above|"
    r"at or below|maximum of|minimum of|limit of|cap of|capped at|ceiling of|between)"
)

# ---- the detectors --------------------------------------------------------------------------


class Pattern(NamedTuple):
    """`regex` is `^(prefix)(value)after`, so the prefix length is the value's offset in the
    sentence; `screen` (the trailing context alone) is a quick test every match passes."""

    regex: str
    screen: str | None


@dataclass(frozen=True)
class Slot:
    """A value a detector extracts with the first of its patterns that matches. `role` names it
    as evidence (None: a typed helper slot)."""

    name: str
    patterns: tuple[Pattern, ...]
    role: str | None


@dataclass(frozen=True)
class Detector:
    intent: str
    cue: str  # a sentence fires when this matches ...
    slots: tuple[Slot, ...] = ()
    required: tuple[str, ...] = ()  # ... and these slots were found
    base_confidence: float = 0.8
    answer_shape: str = "single"
    answer_type: str = "text"
    question: str = ""  # template over {subject}, {object}, slot names and {heading}
    partial_cue: str | None = None  # surface cue for a process-level (partial) affordance
    notes: str = ""


def _pre(context: str, value: str, after: str = "") -> Pattern:
    """`^(prefix)(value)after`: Rust regex has no look-around, so trailing context is matched, not peeked."""
    return Pattern(rf"(?s)^(.*?{context})({value}){after}", rf"(?s){after}" if after else None)


_APPROVER = Slot(
    "approver",
    (
        _pre(rf"(?i:approv(?:ed|al|es|e)|sign-off|signed off)\s+(?:(?:in writing|in advance|first)\s+)?(?:by|from)\s+{DET}", ROLE),
        _pre(rf"(?i:approval) of\s+{DET}", ROLE),
        _pre(r"(?i:approv(?:er|al))[^:=.]{0,60}[:=]\s*(?:the\s+)?", ROLE),
        _pre(r"", ROLE, r"(?:'s|’s)?(?:\s+(?:shall|must|will|may|should|has|have))?\s+(?:approves?|approved)\b"),
        _pre(r"", ROLE, r"(?:'s|’s)\s+(?:prior\s+)?(?:written\s+)?approval"),
    ),
    "approver_role",
)
_AMOUNT = Slot("amount", (_pre(rf"{_THRESH}\s+(?:[A-Za-z\-]+\s+){{0,2}}?", MONEY), _pre("", MONEY)), "amount_threshold")
# a threshold needs a threshold word before the amount, or "or more/less" after it
_THRESHOLD = Slot(
    "amount",
    (
        _pre(rf"{_THRESH}\s+(?:[A-Za-z\-]+\s+){{0,2}}?", MONEY),
        _pre(r"(?i:\b(?:threshold|limit|ceiling|cap)\b)[^.;$€£]{0,60}?", MONEY),
        _pre("", MONEY, r"\s+(?i:or (?:more|less|above|below|higher|lower|greater))"),
    ),
    "amount_threshold",
)
_REGION = Slot("region", (_pre("", REGION),), "region")
_DATE = Slot("date", (_pre(r"(?i:\beffective\b)(?:[^.;]{0,50}?)", DATE),), "effective_date")
_TEAM = Slot(
    "team",
    (
        _pre(
            r"",
            ROLE,
            r"\s+(?:(?:owns|is the owner of|are the owners of|maintains)\b|(?:is|are|shall be|shall remain|remains|will be)\s+(?:solely\s+|fully\s+)?(?:responsible|accountable)\b)",
        ),
        _pre(rf"(?i:\b(?:owned|maintained)\s+by)\s+{DET}", ROLE),
        _pre(rf"(?i:\bowner)\s*(?:is\s+|:\s*){DET}", ROLE),
        _pre(rf"(?i:\bownership of)[^,.;]{{1,80}}?(?:sits|rests|lies)\s+with\s+{DET}", ROLE),
        _pre(rf"(?i:\bowner of)[^,.;]{{1,80}}?\bis\s+{DET}", ROLE),
        _pre(r"", ROLE, r"[^.;]{0,40}?\b(?:who|which|that) (?:is|are|shall be) (?:responsible|accountable)\b"),
    ),
    "owner_team",
)
_STEP = Slot("step_number", (_pre(r"^\s*(?:[-*•]\s*)?Step\s+", r"\d{1,3}"),), "step")
_DURATION = Slot(
    "duration",
    (
        _pre(r"(?i:\bwithin|no later than|not later than|response time(?: of)?[^.;:]{0,40}?[:]?|turnaround of|in under)\s+", DURATION),
        _pre("", DURATION),
    ),
    "sla_duration",
)
_TARGET = Slot(
    "target",
    (
        _pre(rf"(?i:\bescalat(?:e|ed|es|ing))\b(?:\s+[\w'’\-]+){{0,5}}?\s+to\s+{DET}", ROLE),
        _pre(rf"(?i:\bescalation)(?:\s+(?:path|contact|route|point))?[^:.]{{0,50}}:\s*(?:[\w\-]+\s+){{0,3}}?(?:then\s+)?{DET}", ROLE),
    ),
    "escalation_target",
)
_METRIC = Slot("metric", (_pre(r"(?i:\b)", METRIC),), "metric_name")
_METRIC_VERB = (
    r"(?i:was|were|is|are|of|reached|totall?ed|amounted|stood|came in|averaged|closed|rose|fell|fall|grew|increased|"
    r"decreased|improved|declined|dropped|climbed|hit|held|remained|rise|expanded|contracted|at)"
)
_VALUE = Slot(
    "value",
    (
        _pre(rf"(?i:\b{METRIC}\b)[^.;:]{{0,40}}?\b{_METRIC_VERB}\b(?:\s+[\w\-]+){{0,4}}?\s+", rf"(?:{MONEY}|{PERCENT})"),
        _pre(rf"(?i:\b{METRIC}\b)[^.;:]{{0,30}}:\s*", rf"(?:{MONEY}|{PERCENT})"),
        _pre(r"(?i:\bat)\s+", PERCENT, rf",\s+(?:the\s+)?{METRIC}"),
    ),
    "metric_value",
)
_DRIVER = Slot(
    "driver",
    (
        _pre(
            r"(?i:\b(?:driven by|caused by|due to|attributable to|as a result of|explained by|reflect(?:s|ed|ing)?|owing to|because of))\s+",
            r"[^.;]{3,160}",
        ),
    ),
    "variance_driver",
)
_SCOPE = Slot(
    "population",
    (
        _pre(r"(?i:\b(?:appl(?:y|ies)|applicable|is applicable|are applicable)\s+(?:only\s+)?to)\s+", r"[^.;]{3,160}"),
        _pre(r"(?i:\bscope)\s*(?::|of [^:.;]{1,60}:)\s*", r"[^.;]{3,160}"),
    ),
    "applicability_scope",
)
_CONDITION = Slot(
    "condition",
    (
        _pre(r"(?i:\b(?:except|excepting|unless|other than|save)\b)\s*(?:(?:for|as|when|where|with|in|that|if)\s+)?", r"[^.;]{3,160}"),
        _pre(r"(?i:\bprohibit(?:ed|s)?\b)\s*", r"[^.;]{0,160}"),
    ),
    "exception_condition",
)
_MODAL = Slot(
    "modality",
    (
        _pre(
            r"(?i:\b)",
            r"(?i:must not|must|shall not|shall|may not|cannot|is required to|are required to|required|is prohibited|are prohibited|is mandatory|are mandatory)\b",
        ),
    ),
    "obligation",
)

DETECTORS: tuple[Detector, ...] = (
    Detector(
        "approval_lookup",
        r"(?i:\bapprov|\bsign-?off|\bsigned off)",
        (_APPROVER, _AMOUNT, _REGION),
        ("approver",),
        0.85,
        "single",
        "role",
        "Who must approve {subject}?",
        r"(?i:\bapprov\w*)",
    ),
    Detector(
        "threshold_lookup",
        MONEY,
        (_THRESHOLD, _REGION),
        ("amount",),
        0.85,
        "single",
        "amount",
        "What amount threshold applies to {subject}?",
    ),
    Detector(
        "owner_lookup",
        r"(?i:\bown|\bresponsib|\baccountable|\bmaintain)",
        (_TEAM,),
        ("team",),
        0.8,
        "single",
        "role",
        "Who owns or is responsible for {object}?",
    ),
    Detector(
        "effective_date_lookup", r"(?i:\beffective\b)", (_DATE,), ("date",), 0.9, "single", "date", "When does {subject} take effect?"
    ),
    Detector(
        "applicability_check",
        r"(?i:\bappl(?:y|ies|icable|icability)\s+(?:only\s+)?to\b|\bscope\b|\bapplicab)",
        (_SCOPE, _REGION),
        (),
        0.75,
        "listing",
        "text",
        "Who or what does {subject} apply to?",
    ),
    Detector(
        "exception_lookup",
        r"(?i:\b(?:except|excepting|unless|prohibited|prohibits|prohibit|exceptions?)\b)",
        (_CONDITION,),
        (),
        0.75,
        "listing",
        "text",
        "What exceptions or prohibitions apply to {subject}?",
    ),
    Detector(
        "rule_lookup",
        r"(?i:\b(?:must|shall|may not|cannot|is required to|are required to|required|is prohibited|are prohibited|mandatory)\b)",
        (_MODAL,),
        ("modality",),
        0.7,
        "listing",
        "text",
        "What is required of {subject}?",
    ),
    Detector(
        "metric_lookup",
        METRIC,
        (_METRIC, _VALUE, _REGION),
        ("metric", "value"),
        0.85,
        "single",
        "percentage",
        "What was the {metric}?",
        None,
    ),
    Detector(
        "variance_explanation",
        r"(?i:\bvariances?\b|\b(?:above|below|ahead of|behind|short of|over|under)\s+(?:the\s+)?(?:forecast|budget|plan|target|guidance|expectations?)\b|\b(?:driven by|caused by|attributable to|due to (?:higher|lower|increased|decreased|reduced|the (?:increase|decrease|decline|delay|loss))))",
        (_DRIVER, _REGION),
        (),
        0.8,
        "single",
        "text",
        "What explains the variance in {subject}?",
        r"(?i:\b(?:variance|forecast|revenue)\b)",
    ),
    Detector(
        "sla_lookup", rf"(?:{DURATION}|\bSLAs?\b)", (_DURATION,), (), 0.8, "single", "duration", "What is the time limit for {subject}?"
    ),
    Detector(
        "next_step_lookup",
        r"^\s*(?:[-*•]\s*)?Step\s+\d{1,3}\s*(?::|-|–|—|\)|\.\s)",
        (_STEP,),
        ("step_number",),
        0.95,
        "listing",
        "text",
        "What is step {step_number}{of_heading}?",
        r"(?i:\bsteps?\b)",
    ),
    Detector("escalation_lookup", r"(?i:\bescalat)", (_TARGET,), ("target",), 0.85, "single", "role", "Who is {subject} escalated to?"),
)
INTENTS = tuple(d.intent for d in DETECTORS)
_BY_INTENT = {d.intent: d for d in DETECTORS}

# Extra conditions some cues need (a named pattern each, so they can be listed and tested).
SLA_DEADLINE = rf"(?i:\b(?:within|no later than|not later than|response time|resolution time|turnaround|in under|at least)\b[^.;]{{0,40}}?){DURATION}|\bSLAs?\b|(?i:\bresponse time)[^.;]{{0,60}}?{DURATION}"
VARIANCE_CHANGE = r"(?i:\b(?:variances?|forecast|budget|plan|target|guidance|higher|lower|increase[ds]?|decrease[ds]?|declin\w+|rose|fell|grew|shortfall|overspend|underspend|delay\w*|up|down)\b|%|\$)"
EXTRA_CONDITIONS: dict[str, str] = {"sla_lookup": SLA_DEADLINE, "variance_explanation": VARIANCE_CHANGE}

# a list item's bullet ("- Fixes the ...", "* Changelogs ...") is no part of its subject
SUBJECT = (
    r"^\s*(?:Row \d+:\s*)?(?:[^=;:]{1,80}\s=\s)?(?:[-*+•]\s+)?(?:Step\s+\d+\s*[:\-]\s*)?(?:(?:All|Any|Each|Every|The|This|These|Such|If|When)\s+)?"
    r"(.{3,120}?)\s+(?:must|shall|may|will|can|cannot|should|need|needs|require|requires|requiring|are|is|were|was|"
    r"reached|rose|fell|did|has|have|applies|apply|owns)\b"
)
# The subject rule for ASCII-only sentences (nearly all): on such text these ASCII forms of `.`,
# `[^=;:]`, `\s` and `\b` match exactly what the Unicode ones do, and spare the regex engine's
# fast path the Unicode `.` in a 120-fold lazy repeat (it spent half of `questions` there).
SUBJECT_ASCII = (
    SUBJECT.replace("(.{3,120}?)", r"([\x00-\x09\x0B-\x7F]{3,120}?)")
    .replace("[^=;:]", r"[\x00-\x7F&&[^=;:]]")
    .replace(r"\s", r"(?-u:\s)")
    .replace(r"\b", r"(?-u:\b)")
)
OBJECT = r"(?i:\b(?:owns|responsible for|accountable for|owner of|ownership of|maintains|owned by))\s+(?:the\s+)?([^,.;]{3,80})"
