"""The question parser's own rules: named regular expressions for clauses, dates, metrics, scope
anchors (pages, slides, sheets), compound and conditional questions, and parties.
"""

from __future__ import annotations

from ..affordances.values import MONEY
from ..evaluation.bm25 import STOP_WORDS

# Closed-class words of everyday English that never say what a question is about: the remains of
# negated and contracted verbs once the apostrophe is gone ("isn't" -> "isn", "whats"), indefinite
# and reflexive pronouns, and the fillers of chatty questions ("why is cron totally ignoring my job?"), and
# hedges ("roughly how many", "normally need"), conjunctions and prepositions, and light verbs ("once a
# nomination goes through", "if my flight gets cancelled").
CLOSED_CLASS = {
    *("aren", "couldn", "didn", "doesn", "don", "hadn", "hasn", "haven", "isn", "mustn", "needn", "shouldn", "wasn", "weren", "wouldn"),
    *("cant", "dont", "doesnt", "isnt", "wont", "whats", "thats", "theres", "hows", "whos", "wheres", "ive", "youre", "theyre"),
    *("someone", "somebody", "anyone", "anybody", "everyone", "everybody", "something", "anything", "everything", "nothing"),
    *("nobody", "else", "itself", "myself", "yourself", "yourselves", "themselves", "himself", "herself", "ourselves"),
    *("whatever", "whoever", "whichever"),
    *("really", "totally", "actually", "basically", "literally", "seriously", "definitely", "pretty", "kinda", "sorta"),
    *("gonna", "wanna", "gotta", "anyway", "anyways", "maybe", "perhaps", "probably", "hey", "hi", "hello"),
    *("thanks", "thank", "btw", "pls", "plz", "stuff", "thing", "things", "bunch", "lot", "lots", "like", "ever", "even"),
    *("roughly", "approximately", "approx", "exactly", "precisely", "typically", "usually", "normally"),
    *("once", "through", "throughout", "upon", "across", "whether", "while", "whilst", "toward", "towards", "during", "among"),
    *("get", "gets", "got", "getting", "goes", "going", "went"),
}

# Phrases that frame a question without saying what it is about ("In plain terms, what is PAM?",
# "Quick question: ...", "... , in simple terms?", a hedge after its question word: "What exactly
# is an ABI?"): read as if the question did not hold them.
_PLAINLY = r"in (?:plain|simple|layman'?s|everyday|basic) (?:terms|english|words)"
# an identifier of code (CAP_LINUX_IMMUTABLE, GRUB_CMDLINE_LINUX): a word joined to another by "_",
# which names no concept of the dictionary (its "cap" is no per diem cap)
IDENTIFIER = r"\b\w+_\w+\b"
# a technical name a question asks about: two letters or more with digits ("ed25519", "WPA2", "fail2ban",
# "IPv6"; not a period, "FY26", nor "3:15am" or "30MB", a time or a quantity), an acronym of three
# capitals or more ("LUKS", "IRC"; its plural "NDAs" read as "NDA") or a word with a capital inside
# ("AppArmor", "GitHub"). A corpus that never writes it says nothing about it (`answer.unmentioned`)
TECH_TERM = r"\b(?:[A-Za-z]{2,}\d[A-Za-z\d]*|[A-Z]{3,}(?:s\b)?|[A-Za-z]?[a-z]+[A-Z][A-Za-z]*)\b"
FISCAL_PERIOD = r"^(?:FY|CY)\d+$"

FRAMING = (
    rf"(?i)^(?:{_PLAINLY}|in a nutshell|simply put|put simply|quick question|just (?:curious|wondering)|out of curiosity)\s*[,:;-]\s*",
    rf"(?i),?\s*{_PLAINLY}\s*(\?*)$",  # "..., in simple terms?": the question mark kept
    r"(?i)^(what|who|which|where|when|how)\s+(?:exactly|really|actually|precisely)\s+",
)

# the commonest Spanish function words, question words and auxiliaries ("¿Quién debe aprobar ...?")
SPANISH_FUNCTION_WORDS = {
    *("el", "los", "las", "lo", "una", "unos", "unas", "del", "al", "y", "o", "que", "qué", "quién", "quiénes", "cuál", "cuáles"),
    *("cuándo", "cuánto", "cuánta", "cuántos", "cuántas", "dónde", "cómo", "por", "para", "con", "sin", "sobre", "se", "su"),
    *("sus", "mi", "mis", "tu", "tus", "es", "son", "está", "están", "hay", "puedo", "puede", "pueden", "podemos", "debo"),
    *("debe", "deben", "tengo", "tiene", "tienen", "necesito", "me", "te", "nos", "le", "les", "si", "más", "menos", "muy"),
    *("este", "esta", "estos", "estas", "ese", "esa", "eso", "esto", "cual", "como", "cuando", "donde", "también", "ya"),
    *("hasta", "desde", "entre", "pero", "porque", "cada", "todo", "todos", "toda", "todas", "otro", "otra", "usted", "yo"),
}

# Function words of questions: never content (baselines.STOP_WORDS plus question scaffolding,
# and the commonest French and German function words).
QUESTION_STOP_WORDS = tuple(
    sorted(
        set(STOP_WORDS)
        | {
            "about",
            "after",
            "all",
            "also",
            "any",
            "before",
            "both",
            "could",
            "did",
            "does",
            "each",
            "every",
            "get",
            "give",
            "here",
            "just",
            "list",
            "many",
            "may",
            "might",
            "more",
            "much",
            "must",
            "need",
            "needs",
            "please",
            "shall",
            "should",
            "show",
            "some",
            "tell",
            "us",
            "whose",
            "within",
            "over",
            "under",
            "above",
            "below",
            "less",
            "one",
            "there",
            "am",
            "done",
            "per",
            "via",
            "regarding",
            "find",
            "explain",
            "describe",
            "summarise",
            "summarize",
            "say",
            "says",
            "said",
            "mention",
            "mentions",
            "named",
            "called",
            "titled",
            "page",
            "pages",
            "slide",
            "slides",
            "sheet",
            "sheets",
            "tab",
            "tabs",
            "happen",
            "happens",
            "happened",
            "doit",
            "wie",
            "hoch",
            "viele",
            "le",
            "la",
            "les",
            "de",
            "du",
            "des",
            "et",
            "pour",
            "qui",
            "que",
            "quel",
            "quelle",
            "quels",
            "quelles",
            "est",
            "un",
            "une",
            "au",
            "aux",
            "en",
            "dans",
            "sur",
            "par",
            "der",
            "die",
            "das",
            "den",
            "dem",
            "und",
            "für",
            "wer",
            "ist",
            "ein",
            "eine",
            "von",
            "mit",
            "im",
            "über",
            "bei",
            "zu",
        }
        | CLOSED_CLASS
        | SPANISH_FUNCTION_WORDS
    )
)

WH = r"(?:who|whom|whose|what|when|where|which|why|how)"
# "how long", "how often", "how many": the question's measure, which says its answer type, not what
# the answer's sentence says ("It is reviewed every year" answers "how often is it reviewed?")
HOW_MEASURE = r"(?i)\bhow\s+(?:long|often|soon|quickly|frequently|far|many|much|old|early|late)\b"
AUX = r"(?:is|are|was|were|do|does|did|can|could|should|must|may|will|would|has|have|had)"
IMPERATIVE = r"(?:list|give|show|find|tell|name|explain|describe|summari[sz]e|identify|check|compare)"
_SUBJECT = (
    r"(?:it|they|this|that|these|those|there|the|a|an|any|we|i|you|he|she|its|their|"
    r"employees|vendors|suppliers|contractors|staff|managers)"
)
# where a new clause can start after "and", ";", "then", "?" (a wh-word may follow its preposition:
# "..., and by what date must ...", "and at what price", "and on which day")
PREPOSED_WH = rf"(?:by|at|on|in|for|from|to|with|under|within|until|after|before)\s+{WH}"
CLAUSE_START = rf"(?:{PREPOSED_WH}|{WH}|{IMPERATIVE}|{AUX}\s+{_SUBJECT})\b"

MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_YEAR = r"(?:19|20)\d{2}"
# a date expression (DX): a day, a month, a quarter, a half, a fiscal year or a year
DX = (
    rf"(?:\d{{4}}-\d{{2}}-\d{{2}}"
    rf"|{MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_YEAR}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{MONTH}\.?,?\s+{_YEAR}"
    rf"|q[1-4]\s*(?:of\s+)?(?:fy\s?)?'?{_YEAR}|{_YEAR}\s*q[1-4]"
    rf"|h[12]\s*{_YEAR}"
    rf"|fy\s?'?(?:{_YEAR}|\d{{2}})"
    rf"|{MONTH}\.?\s+{_YEAR}"
    rf"|{_YEAR})\b"
)
DX_PARTS = (
    r"(?i)^(?:(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})"
    r"|(?P<m1>[a-z]+)\.?\s+(?P<d1>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{4})"
    r"|(?P<d2>\d{1,2})(?:st|nd|rd|th)?\s+(?P<m2>[a-z]+)\.?,?\s+(?P<y2>\d{4})"
    r"|q(?P<q1>[1-4])\s*(?:of\s+)?(?:fy\s?)?'?(?P<qy1>\d{4})|(?P<qy2>\d{4})\s*q(?P<q2>[1-4])"
    r"|h(?P<h>[12])\s*(?P<hy>\d{4})"
    r"|fy\s?'?(?P<fy>\d{4}|\d{2})"
    r"|(?P<m3>[a-z]+)\.?\s+(?P<y3>\d{4})"
    r"|(?P<y4>\d{4}))$"
)
# the periods within a year a sentence may state ("in Q2 2025", "2025 Q2", "H1 2025", "March 2026"):
# what tells a sentence about another quarter or month than the question's apart
SUB_YEAR = rf"(?i)\b(?:q[1-4]\s*(?:of\s+)?(?:fy\s?)?'?{_YEAR}|{_YEAR}\s*q[1-4]|h[12]\s*{_YEAR}|{MONTH}\.?\s+{_YEAR})\b"
MONTH_NUMBER = {m: i + 1 for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}
# scope operators: a range, an open start, an open end, or the period itself
DATE_RANGE = rf"(?i)\b(?:between|from)\s+(?:the\s+)?({DX})\s+(?:and|to|until|till|through|thru|-|–)\s+(?:the\s+)?({DX})"
DATE_OPERATOR = (
    rf"(?i)\b(since|after|from|starting(?:\s+(?:in|from|on))?|as of|before|prior to|until|till|up to|through|by|"
    rf"in|during|for|of|on|throughout)\s+(?:the\s+)?(?:(?:fiscal\s+)?year\s+|quarter\s+)?({DX})"
)
DATE_BARE = (
    rf"(?i)(?:^|[\s(,])((?:q[1-4]\s*(?:of\s+)?(?:fy\s?)?'?{_YEAR}|{_YEAR}\s*q[1-4]|h[12]\s*{_YEAR}|fy\s?'?(?:{_YEAR}|\d{{2}})"
    rf"|{MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_YEAR}|{MONTH}\.?\s+{_YEAR}|\d{{4}}-\d{{2}}-\d{{2}})\b"
    rf"|{_YEAR}\s+(?:budgets?|revenue|results|reports?|polic(?:y|ies)|plans?|forecasts?|guidelines|numbers|figures|targets?|audit|accounts|financials))"
)

# metrics a question can ask the value of (the finance and customer metrics of the corpora)
METRIC_CUE = (
    r"(?i)\b(?:revenue|gross margin|operating margin|net (?:profit )?margin|profit margin|ebitda(?: margin)?|ebit|net income|gross profit|"
    r"operating income|(?:free |operating )?cash flow|customer churn|churn(?: rate)?|net (?:revenue |dollar )?retention(?: rate)?|"
    r"retention rate|arr|mrr|annual recurring revenue|days sales outstanding|dso|forecast accuracy|active customers|"
    r"average contract value|headcount growth|nps|net promoter score|customer acquisition cost|cac|lifetime value|ltv|arpu|"
    r"earnings per share|eps|margin|kpis?|metrics?|operating expenses|opex|chiffre d'affaires|marge brute|bruttomarge|"
    r"umsatz\w*|kennzahl\w*|indicateur\w*)\b"
)

# intents: (intent, cue, veto). A question asks about an intent when a cue of it matches and its veto does not.
_MONEY_WORDS = r"(?:\d[\d,.]*\s?(?:k|m|million|thousand)?\s?(?:eur|euros?|usd|dollars?|gbp|chf))"
INTENT_CUES: tuple[tuple[str, str, str | None], ...] = (
    (
        "approval_lookup",
        r"(?i)\bapprov\w*|\bsign(?:s|ed)?[- ]off\b|\bauthori[sz]\w*|\bapprob\w*|\bapprouv\w*|\bgenehmig\w*|\bfreigabe\b|\bfreigeb\w*"
        r"|\baprob\w*|\baprueb\w*|\bautoriz\w*",
        None,
    ),
    ("threshold_lookup", MONEY, None),
    (
        "threshold_lookup",
        rf"(?i)\bthresholds?\b|\blimits?\b|\bcaps?\b|\bceilings?\b|\bmaximum\b|\bminimum\b|\bup to\b|\bper diem\b|\ballowance\b|"
        rf"\bseuils?\b|\bplafonds?\b|\bschwellenwert\w*|\bwertgrenze\w*|\bobergrenze\w*|\bumbral(?:es)?\b|\blímites?\b|\btopes?\b|"
        rf"\b(?:over|above|exceed\w*|more than|less than|under|below|über|plus de|más de)\s+{_MONEY_WORDS}",
        r"(?i)\btime limits?\b|\bspeed limits?\b",
    ),
    (
        "owner_lookup",
        r"(?i)\bowners?\b|\bowns\b|\bowned by\b|\bownership\b|\bresponsible for\b|\baccountable for\b|\bwho (?:is responsible|is accountable|maintains)\b|"
        r"\bpropriétaire\b|\bresponsable\b|\bverantwortlich\w*|\bzuständig\w*|\beigentümer\b|\bpropietario\b|\bencargado\b",
        None,
    ),
    (
        "effective_date_lookup",
        r"(?i)\beffective\b|\btakes? effect\b|\bcomes? into (?:force|effect)\b|\bin force\b|\bgo(?:es)?[- ]live\b|\bvalid from\b|"
        r"\ben vigueur\b|\bgültig\b|\bin kraft\b|\binkrafttreten\b|\bsince when\b|\ben vigor\b|\bvigencia\b|\bvigente\b",
        r"(?i)\bcost[- ]effective\b",
    ),
    (
        "applicability_check",
        r"(?i)\bappl(?:y|ies)(?:\s+\w+){0,2}\s+(?:to|in|for)\b|\bdoes\s+[^?]{0,60}\bapply\b|\bapplicable\b|\bapplicability\b|\bscope\b|\bcovered by\b|"
        r"\bwho is covered\b|\bsubject to\b|\bchamp d'application\b|\bs'applique\w*|\bgeltungsbereich\b|\banwendungsbereich\b|\bgilt\b|\bgelten\b",
        None,
    ),
    (
        "exception_lookup",
        r"(?i)\bexceptions?\b|\bexcept\b|\bunless\b|\bprohibited\b|\bforbidden\b|\bnot (?:allowed|permitted)\b|\bexempt\w*|\bwaivers?\b|"
        r"\bexclu\w+|\boutside (?:the )?scope\b|\bdérogation\w*|\bausnahme\w*|\bverboten\b|\binterdit\w*"
        r"|\bexcepci\w*|\bsalvo\b|\bprohibid\w*|\bexent\w*",
        None,
    ),
    (
        "rule_lookup",
        r"(?i)\bmust\b|\bshall\b|\brequired\b|\brequires?\b|\bmandatory\b|\ballowed\b|\bpermitted\b|\bobligat\w*|\bneed to\b|\bhave to\b|"
        r"\bcan (?:i|we|employees|staff|contractors|managers)\b|\bmay (?:i|we|employees|staff|contractors)\b|\brules?\b|"
        r"\bdoit\b|\bobligatoire\b|\bmuss\b|\bmüssen\b|\bpflicht\w*|\bdebo\b|\bdeben?\b|\bobligatori\w*|\btengo que\b|\bhay que\b|\bse permite\b|\bpuedo\b",
        r"(?i)\b(?:who|whom|which\s+(?:team|role|person|manager|officer|approver))\s+(?:\w+\s+)?(?:must|shall|should|is required to|has to|needs to)\b",
    ),
    ("metric_lookup", METRIC_CUE, r"(?i)^\W*(?:why|how come|what (?:drove|caused|explains)|explain|pourquoi|warum)\b"),
    (
        "variance_explanation",
        r"(?i)\bvariances?\b|\b(?:why|how come)\b.*\b(?:above|below|over|under|ahead of|behind|miss(?:ed)?|exceed(?:ed)?|beat|short of|higher|lower|"
        r"increase[ds]?|decrease[ds]?|decline[ds]?|grew|fell|rose|drop(?:ped)?)\b|\bwhat (?:drove|caused|explains|explained)\b|\bdrivers? of\b|"
        r"\b(?:over|under)spend\w*|\bgap to (?:plan|forecast|budget)\b|\bécarts?\b|\babweichung\w*",
        None,
    ),
    (
        "sla_lookup",
        r"(?i)\bhow (?:long|quickly|fast|soon)\b|\bwithin how many\b|\bhow many (?:business |working |calendar )?(?:minutes|hours|days|weeks)\b|"
        r"\bresponse time\b|\bresolution time\b|\bturnaround\b|\btime limit\b|\bdeadline\b|\bslas?\b|\bservice level\b|\bwithin \d+\b|"
        r"\bdélai\w*|\breaktionszeit\w*|\bfrist\w*|\bwie (?:lange|schnell)\b|\bcuánto tiempo\b|\bplazos?\b|\ben cuántos días\b|\btiempo de respuesta\b",
        None,
    ),
    (
        "next_step_lookup",
        r"(?i)\bsteps?\s+\d+\b|\bnext step\b|\b(?:first|last|final|previous) step\b|\b(?:after|before) step\b|\bwhat happens (?:after|next|once|before)\b|"
        r"\bwhat comes (?:after|next)\b|\bsteps\b|\bprocedure for\b|\bhow do (?:i|we|you)\b|\bétapes?\b|\bschritt\w*|\bpasos?\b|\bqué sigue\b",
        None,
    ),
    ("escalation_lookup", r"(?i)\bescalat\w*|\beskal\w*|\bescalade\b|\bescal(?:ar|o|an|amiento|ación|aciones|ado)\b", None),
)


# answer shapes, first match wins (the rest: single)
SHAPE_RULES: tuple[tuple[str, str], ...] = (
    ("nested_json", r"(?i)\bjson\b|\bnested\b|\bas an? (?:object|dictionary|dict)\b"),
    (
        "tree",
        r"(?i)\bhierarch\w*|\bbreak ?down\b|\bbreakdown\b|\bstructure\b|\borgani[sz]ation(?:al)? chart\b|\borg chart\b|\btree\b|\barborescence\b|\bgliederung\b",
    ),
    (
        "table",
        r"(?i)\b(?:a|as a|in a|into a) table\b|\btable of\b|\btabular\b|\bcompare\b|\bcomparison\b|\bfor (?:each|every)\b|"
        r"\bper (?:region|country|quarter|month|year|department|team|category|level|tier|severity|metric)\b|\bside by side\b|\bmatrix of\b",
    ),
    (
        "listing",
        r"(?i)^\W*(?:list|enumerate|name all|name the|give me all|show all|show me all)\b|\blist (?:all|every|the)\b|"
        r"\bwhich\b[^?]*?\b(?:are|were|have|need|require)\b|\bwhat are\b|\bwho are\b|\ball (?:the )?\w+ (?:that|which|who)\b|"
        r"\bwhat (?:steps|exceptions|documents|metrics|regions|countries|vendors|suppliers|categories|levels)\b|\bquel(?:le)?s sont\b|\bwelche\b",
    ),
)

# where in a document to look, first match wins
LAYOUT_RULES: tuple[tuple[str, str], ...] = (
    (
        "table",
        r"(?i)\b(?:in|from|on|inside|within|under) (?:the|this|that|a) (?:[\w'-]+ ){0,3}tables?\b|\btable \d+\b|\bcolumns?\b|\brows?\b|\bcells?\b|\bspreadsheet\b",
    ),
    (
        "image",
        r"(?i)\bfigures?\b|\bfig\.|\bcharts?\b|\bgraphs?\b|\bimages?\b|\bdiagrams?\b|\bpictures?\b|\bphotos?\b|\bscreenshots?\b|\billustrations?\b|\blogos?\b|\binfographics?\b",
    ),
    ("header", r"(?i)\bheaders?\b|\bfooters?\b|\btitle\b|\btitle page\b|\bcover page\b|\bheadings?\b|\bletterhead\b|\brunning head\b"),
    ("text", r"(?i)\bparagraphs?\b|\bbody text\b|\bin the text\b|\bfootnotes?\b|\bwording\b|\bsentences?\b|\bprose\b|\bnarrative\b"),
)

# table-of-contents hints, first match wins: group 1 is the section number or name
TOC_PATTERNS: tuple[tuple[str, str], ...] = (
    # the number must stand apart from the word ("Party" is not "Part y")
    (
        "number",
        r"(?i)(?:\b(?:sections?|sect\.|clauses?|articles?|chapters?|parts?|appendix|annex|schedule)\s+|§\s*)((?:[A-Z]?\d+(?:[.-]\d+)*[a-z]?|[A-Z]|[IVX]+))\b",
    ),
    ("quoted", r"(?i)\b(?:section|chapter|heading|part)\s+(?:titled|called|named)?\s*[\"']([^\"']{1,80})[\"']"),
    ("quoted_before", r"[\"']([^\"']{1,80})[\"']\s+(?i:section|chapter|heading)\b"),
    (
        "capitalised",
        r"(?i:\b(?:in|under|from|of|see|per)\s+the\s+)([A-Z][\w&/-]*(?:\s+(?:[A-Z][\w&/-]*|and|of|&)){0,5})\s+(?i:section|chapter|heading)\b",
    ),
    ("named", r"(?i)\bthe\s+([a-z][\w&/-]*(?:\s+[\w&/-]+){0,3}?)\s+(?:section|chapter)\b"),
    ("under_heading", r"(?i)\bunder\s+(?:the\s+)?heading\s+[\"']?([A-Z][^\"'?,;]{1,60}?)[\"']?(?:[?,;.]|$)"),
)

_LIST_SEP = r"(?:\s*(?:-|–|to|through|thru)\s*|\s*,\s*(?:and\s+)?|\s+and\s+|\s*&\s*|\s+or\s+)"
PAGES = rf"(?i)\b(?:pages?|pp?\.)\s*#?\s*\d+(?:{_LIST_SEP}\d+)*"
SLIDES = rf"(?i)\bslides?\s*#?\s*\d+(?:{_LIST_SEP}\d+)*"
SHEET_NUMBERS = rf"(?i)\b(?:work)?(?:sheets?|tabs?)\s*#?\s*\d+(?:{_LIST_SEP}\d+)*"
SHEET_NAMES: tuple[str, ...] = (
    r"[\"']([^\"'\n]{1,60})[\"']\s+(?i:(?:work)?sheet|tab)s?\b",
    r"(?i:\b(?:work)?(?:sheets?|tabs?)\s+(?:named|called|titled)?\s*)[\"']([^\"'\n]{1,60})[\"']",
    r"(?i:\b(?:the|on|in|from)\s+)((?:[A-Z][\w&-]*\s+){1,4})(?i:(?:work)?sheet|tab)s?\b",
)

# anchors: codes the retriever can match literally. One alternation, leftmost-first, so a code wins over the number inside it.
ANCHOR_PATTERNS: tuple[tuple[str, str], ...] = (
    ("article", r"\b[A-Z]\d{2,4}(?:-\d+)+\b"),  # L131-1
    ("control", r"\b[A-Z]{2}\.[A-Z]{2}(?:-\d+)?\b"),  # ID.AM, PR.AC-1
    ("code", r"\b[A-Z]{2,}[A-Z0-9]*(?:-[A-Z0-9]+)+\b"),  # ISO-9001, RC-2024, POL-PRC-004
    ("code_number", r"\b[A-Z]{2,}\d{2,}\b"),  # FY2026, ISO9001
    ("acronym", r"\b[A-Z]{3,}s?\b"),  # EMEA, EBITDA, SLAs
    ("version", r"\b\d+(?:\.\d+){2,}\b"),  # 4.1.4, 10.2.3: a version or section number (one dot is a decimal)
    ("number", r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d{4,}\b"),  # 25,000, 2024
)
ANCHOR = "|".join(f"(?:{p})" for _, p in ANCHOR_PATTERNS)
CODE_ANCHOR = r"^(?:[A-Z]\d|[A-Z]{2}\.[A-Z]{2}|[A-Z]{2,}[A-Z0-9]*-)"  # an article, control or document code names a topic

# capitalised multi-word names that contain "and" and must not be split as coordination
FIXED_PHRASES: tuple[tuple[str, str], ...] = (
    ("travel", "expenses?"),
    ("planning", "analysis"),
    ("terms", "conditions"),
    ("profit", "loss"),
    ("research", "development"),
    ("mergers", "acquisitions"),
    ("general", "administrative"),
    ("health", "safety"),
    ("scope", "applicability"),
    ("ownership", "effective date"),
    ("roles", "responsibilities"),
    ("depreciation", "amorti[sz]ation"),
    ("middle east", "africa"),
    ("sales", "marketing"),
    ("accounts payable", "receivable"),
    ("legal", "compliance"),
)
AND_MARK = "\x1e"  # a masked "and" (restored in the output)
CUT_MARK = "\x1f"  # a clause boundary
_CONJ = r"(?:if|when|whenever|unless|in case|provided that|assuming|in the event that)"
COMPOUND = r"(?i)\band\b|;|\bthen\b|\bif\b|\bunless\b|\bwhen(?:ever)?\b|\bcompare\b|\bboth\b|\bas well as\b|\bor\b|\bprovided that\b|\bin case\b|\bassuming\b"
CONDITION_LEADING = rf"(?i)^\s*({_CONJ})\s+((?:[^,?]|,\d{{3}})+?)\s*,\s+(?:then\s+)?(.+)$"
CONDITION_TRAILING = r"(?i)^(.*?[^,\s]),?\s+(if|when|whenever|unless|in case|provided that|in the event that)\s+([^?]+?)\s*[?.!]*\s*$"
BACK_REFERENCE = (
    r"(?i)\b(?:it|its|they|them|their|theirs|he|she|him|his|her)\b"
    r"|\b(?:of|for|to|by|is|was|does|did|has|from|with|about|approve|approves|owns)\s+(?:that|this|those|these)\b"
    r"|\b(?:that|this|those|these)\s+(?:one|person|people|team|role|amount|date|owner|approver|step|value|figure|number|threshold|limit|contact)s?\b"
    r"|\b(?:that|this)\s*\?*\s*$"
)
THEN = r"(?i)\bthen\b|\bafter that\b|\bafterwards\b"
# "Can I carry leave over, and if so how many days?": the second part holds only if the first does
IF_SO = r"(?i)\band\s+if\s+so\b"
_CONJUNCT = r"(?:[^,?;]|,\d{3})+?"
UNIFIED_RULES: tuple[tuple[str, str], ...] = (
    (
        "preposition",
        rf"(?i)^(.*\b(?:for|of|in|on|to|about|across|under|by|from|at|with|regarding)\s+)({_CONJUNCT}(?:\s*,\s*{_CONJUNCT})*)\s*,?\s+(?:and|or|as well as)\s+(?:(?:for|of|in|on|to|at|from|with)\s+)?({_CONJUNCT})\s*([?.!]*)\s*$",
    ),
    ("both", rf"(?i)^(.*?)\bboth\s+({_CONJUNCT})\s+and\s+({_CONJUNCT})\s*([?.!]*)\s*$"),
    ("short", rf"(?i)^((?:{WH}|{AUX}|{IMPERATIVE})\b.*\s)(\S+(?:\s\S+)?)\s+(?:and|or)\s+(\S+?(?:\s\S+?)?)\s*([?.!]*)\s*$"),
)
MAX_CONJUNCT_WORDS = 5

# A question this long (content words) says what it is about: a definite ("the changes the checklist
# points to") or a relative period ("they start next week") in it is not what makes it vague.
SPECIFIC_CONTENT_WORDS = 5
# "is it OK to ...", "is it ever fine for errors to ...": an "it" that points forward to its clause;
# "It has been six days and ...", "how long does it take to ...": the "it" of time passing
EXPLETIVE_IT = (
    r"(?i)\b(?:is|was|would|will|'s)\s+it\s+(?:\w+\s+){0,2}?(?:ok|okay|fine|allowed|possible|permitted|cool|legal|acceptable|"
    r"necessary|required|mandatory|safe|true|wrong|enough|a problem|worth|worthwhile|better|best|advisable|recommended|wise|"
    r"a good idea|a bad idea|normal|usual|common|important|risky|dangerous|secure)\b.*\b(?:to|for|if|that|when|whether)\b"
    # "what does it mean if ...", "does it matter whether ...", "how much does it cost to ..."
    r"|\b(?:does|do|would|will)\s+it\s+(?:mean|matter|make sense|cost)\b.*\b(?:to|if|when|that|whether)\b"
    r"|\bit(?:'s|\s+has|\s+had)\s+been\s+(?:\w+\s+){0,4}?(?:minutes?|hours?|days?|weeks?|months?|years?|a while|ages|forever)\b"
    r"|\bit\s+(?:takes?|took|will take)\s+(?:\w+\s+){0,3}?(?:minutes?|hours?|days?|weeks?|months?|years?|long|a while)\b"
)
PRONOUNS = r"\b(?:it|its|they|them|their|he|she|him|his|her)\b"
ACRONYM_IT = r"\bIT\b"  # case-sensitive: "ask IT", "the IT department"
# "they" with no antecedent in a question about an organisation's documents means that organisation
# ("Do they sell my data?"); it is vague only in a question too short to say about what
COLLECTIVE_PRONOUNS = ("they", "them", "their")
# vague questions: (kind, pattern, when it counts, reason, clarification); "{m}" is the matched text
NO_TOPIC = "has no antecedent: the question names no document or topic"  # the reason a bare definite gives
DANGLING: tuple[tuple[str, str, str, str, str], ...] = (
    (
        "conversation",
        r"(?i)\b(?:the|that) (?:previous|other|same|last) one\b|\bsame as (?:before|last time)\b|\blike (?:before|last time)\b|"
        r"\bas (?:discussed|mentioned) (?:before|earlier)\b",
        "always",
        "'{m}' refers to an earlier exchange the parser cannot see",
        "Which document, topic or value do you mean by '{m}'?",
    ),
    (
        "follow_up",
        r"(?i)^\W*(?:and\s+)?(?:what|how) about\b",
        "always",
        "'{m}' follows up an earlier exchange the parser cannot see",
        "Please ask the whole question: which document, topic or value do you mean?",
    ),
    (
        "relative_time",
        r"(?i)\b(?:last|this|next|previous|prior|current) (?:fiscal year|year|quarter|month|week)\b|\byesterday\b|\brecently\b|\byear to date\b|\bytd\b",
        "no_date",
        "relative period '{m}' cannot be resolved to dates",
        "Which period do you mean by '{m}' (for example Q2 2025 or the year 2024)?",
    ),
    (
        "definite",
        r"(?i)\b(?:the|that|this|those|these)\s+(?:(?:new|latest|current|old|previous|last|same|other|updated|revised)\s+)?"
        r"(?:cap|caps|limit|limits|threshold|thresholds|version|rule|rules|policy|document|file|numbers|figures|deadline|report|"
        r"change|changes|update|procedure|process|form|contract|agreement|matrix|guidelines|standard)\b",
        "no_topic",
        "'{m}' " + NO_TOPIC,
        "Which document or topic does '{m}' refer to (for example a policy, a procedure, a metric or a region)?",
    ),
    (
        "pronoun",
        rf"(?i){PRONOUNS}",
        "no_antecedent",
        "pronoun '{m}' has no antecedent: the question names no document or topic",
        "What does '{m}' refer to? Please name the document, topic or value.",
    ),
)
# "the rules for gifts", "the limit of the card": a qualified definite has its antecedent in the question
QUALIFIED = (
    r"(?i)\b(?:the|that|this|those|these)\s+(?:\w+\s+)?(?:caps?|limits?|thresholds?|version|rules?|polic(?:y|ies)|document|file|numbers|figures|"
    r"deadline|report|changes?|update|procedure|process|form|contract|agreement|matrix|guidelines|standard)\s+"
    r"(?:for|of|on|about|regarding|covering|governing|to|under|between)\s+(?:the\s+|a\s+|an\s+)?\w{3,}"
)
NAMED_DOCUMENT = r"\b[A-Z][\w&-]*(?:\s+(?:[A-Z][\w&-]*|and|&))*\s+(?:Policy|Procedure|Matrix|Catalog|Catalogue|Guidelines|Standard|Agreement|Contract|Addendum|Plan|Report|Handbook|Runbook|Checklist)\b"

# contract parties
_CAPS = r"[A-Z][\w&.'-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w&.'-]*){0,4}"
PARTIES_BETWEEN = rf"\b(?i:between)\s+(?:the\s+)?({_CAPS})\s+(?:and|&)\s+(?:the\s+)?({_CAPS})"
PARTY_ROLES = (
    "Service Provider",
    "Disclosing Party",
    "Receiving Party",
    "Supplier",
    "Customer",
    "Licensee",
    "Licensor",
    "Vendor",
    "Buyer",
    "Seller",
    "Contractor",
    "Client",
    "Landlord",
    "Tenant",
    "Provider",
    "Purchaser",
    "Distributor",
    "Recipient",
    "Consultant",
    "Franchisee",
    "Franchisor",
    "Lender",
    "Borrower",
    "Employer",
    "Subcontractor",
)
PARTY_DEFINED = rf"\b[Tt]he\s+(?:{'|'.join(PARTY_ROLES)})(?:\s+[a-z][\w'-]*|[^\w\s]|$)"
PARTY_ORG = (
    r"\b[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*){0,3}\s+(?:Inc|Ltd|LLC|GmbH|SA|SAS|SARL|AG|plc|PLC|Corp|Corporation|Limited|Co|BV|NV|SE)\b\.?"
)
PARTY_LEAD = r"^(?:(?:Does|Do|Did|Is|Are|Was|Were|What|Who|Which|When|Where|How|Why|Can|May|Must|Should|Under|For|With|Between|And|Or|The|If|In|On|At|By|From|To|Has|Have|Will)\s+)+"

# ranking (answer.rank_candidates)
# a question asking whether something is allowed or required ("Can a franchisee sell online?", "do i
# really need to write a man page", "is it cool to ship files into /usr/local?") ...
YES_NO_QUESTION = (
    r"(?i)^\W*(?:can|may|must|should|is|are|am|do|does|will|could|would|need|has|have)\b"
    r"|\bis (?:it|that) (?:ok|okay|allowed|fine|a problem|cool|required)\b"
    r"|^\W*(?:puedo|puede|pueden|podemos|debo|debe|deben|tengo que|tiene que|hay que|necesito|se (?:puede|permite|requiere)|es (?:obligatorio|necesario))\b"
)
# ... is decided by a sentence that states a rule
_RULE_WORDS = r"must|shall|may|should|cannot|can't|not permitted|prohibited|required|optional|allowed|forbidden|need not"
MODAL = rf"(?i)\b(?:{_RULE_WORDS})\b"
# ... and a permission question ("May I ...?") gets a verdict only from one that states a rule or a
# permission, or denies: "You are solely responsible for determining the appropriateness of
# redistributing the Work" decides no "May I redistribute ...?" (it was answered "yes": nothing it
# says was denied)
DECIDES = (
    rf"(?i)\b(?:{_RULE_WORDS}|permitted|permits|allows|entitled|free to|can|valid|acceptable|mandatory|compulsory|obligatory|"
    r"requires|prohibits|forbids)\b"
)
# the words a question writes capitalised after its first one: names of parties, products and
# documents ("Under the Accuray distributor agreement with Siemens, ..."), which say which document
# the answer is in more than which of its sentences
NAMES = r"\b[A-Z][\w&'-]*(?:\s+[A-Z][\w&'-]*)*"

# a contract's preamble ("This Agreement is made and entered into as of ... by and between X and Y",
# "Party A: ...") answers who the parties are and when the agreement was made (answer._not_a_party_listing), nothing else
PREAMBLE = r"(?i)\bby and between\b|\b(?:is|was) (?:made and )?entered into\b|\bdated as of\b|^\W*party [ab12]\W*:"
# a notices clause's address block ("If to AJR: Alex Job Racing, Inc. ...", "with a copy to: ...")
# holds the names of its party: it answers a question about where to send or whom to contact, nothing else
ADDRESS_BLOCK = r"(?i)^\W*(?:if|notices?|communications?|(?:with )?a copy|copies)\s+(?:\w+\s+)?to\b[^:\n]{0,80}:"
ADDRESS_QUESTION = r"(?i)\bnotices?\b|\baddress\b|\bsen[dt]\b|\bwhere\b|\bcontact\b|\bdeliver"
PARTIES_QUESTION = (
    r"(?i)\bpart(?:y|ies)\b|\bwho\b|\bwhen\b.*\b(?:signed|entered|made|dated|executed)\b|\beffective date\b|\bdate of (?:the|this)\b"
)

# yes/no verdicts (answer.verdict): a yes/no question is answered "yes" when its deciding sentence
# denies what the question asks as much as the question itself does, "no" otherwise ("May I fly first
# class?": "First class air travel is prohibited." -> no; "Is it prohibited to ...?": "... is
# prohibited" -> yes). A denial: a negated modal or verb, a prohibition, "never", "no obligation".
# Matched on lower-case words only, so a name written in capitals ("Do Not Track") denies nothing.
DENIAL = (
    r"\b(?:must|shall|may|can|could|will|would|should|need|does|do|did|is|are|was|were|has|have) not\b"
    r"|\b(?:cannot|can't|won't|shouldn't|needn't|doesn't|don't|didn't|isn't|aren't|wasn't|weren't|hasn't|haven't|never|neither|nor|none|nobody|nothing)\b"
    r"|\b(?:prohibited|forbidden|barred|disallowed|not permitted|not allowed|not be|not to)\b"
    r"|\bno (?:one|person|party|employee|obligation|right|need|longer)\b|^no\b"
)
# phrases holding "no" or "not" that deny nothing ("no later than 30 days", "not only"), and the
# negation of a relative clause, which says what the sentence is about ("Distributor may cancel any
# Order for Products that are not delivered within sixty (60) days" permits)
NOT_DENIAL = (
    r"\b(?:no|not) (?:later|earlier|more|less|fewer|sooner) than\b|\bnot only\b|\bwhether or not\b"
    r"|\b(?:that|which|who) (?:is|are|was|were|do|does|did|has|have|had) not\b"
)
# what a yes/no question denies outside its main clause, which its verdict does not read: a leading
# condition ("If I don't use my leave, do I lose it?") and a clause the asker's own doing qualifies a
# noun with ("do I get paid for the comp time I haven't used?"); after an auxiliary or a conjunction
# the pronoun is the main clause's subject ("Do I not ...", "Can't I ...", "... and I don't")
SIDE_CLAUSE = (
    r"(?i)^\W*(?:if|when|unless|once|after|before|since|while)\b[^,?]*,"
    r"|\b(?!(?:if|when|unless|that|do|does|did|can|could|will|would|should|shall|may|might|must|why|how|what|where|and|or|but|so|because)\b)"
    r"[a-z]{3,}\s+(?:that\s+)?(?:i|we)\s+(?:haven't|haven’t|hasn't|didn't|didn’t|don't|don’t|have not|did not|do not|never)\b"
)
# "what (can) happen(s) if I don't ...?": the hypothetical's denial is not what is asked (`answer._fits`)
HYPOTHETICAL = r"(?i)\bhappens?\s+(?:to\s+[\w.-]+\s+)?(?:if|when|unless)\b[^?]*"
# a sentence saying something is not required answers "must I ...?" with no, but "may I ...?" with yes
NOT_REQUIRED = r"\b(?:optional|not required|need not|needn't|not obliged|not necessary|not mandatory|no obligation)\b"
# a yes/no question after a leading phrase or condition ("Under the Accuray agreement, does Siemens
# have to ...?", "If I subscribe, can they sell my address?"): a verdict is given to it too
YES_NO_AFTER_CLAUSE = r"(?i),\s*(?:can|may|must|should|is|are|am|do|does|will|could|would|need|has|have)\s+(?:i|we|you|they|it|he|she|the|a|an|my|our|their|its|this|that|these|those|\p{Lu}\w*)\b"
# what follows the main clause of a deciding sentence ("X is valid, but Y alone is not")
BUT = r"(?:[,;]\s*but|;\s*however,?)\s.*$"
PERMISSION_QUESTION = r"(?i)^\W*(?:can|may|could|puedo|puede|pueden|podemos|se puede|se permite)\b|,\s*(?:can|may|could)\s+(?:i|we|you|they)\b|\b(?:allowed|permitted|ok|okay|fine|cool|acceptable|permitido)\b"
# ... and one asking leave for someone ("Can I ...?", "May we ...?", "Am I allowed to ...?"), which a
# rule decides: a sentence stating none does not answer it (answer._fits); "Can notices be delivered
# by email?" asks what holds, which a fact may tell ("The Parties opt out of electronic delivery")
ASKS_LEAVE = r"(?i)^\W*(?:can|may|could)\s+(?:i|we|you|they|my|our|one)\b|,\s*(?:can|may|could)\s+(?:i|we|you|they)\b|\b(?:allowed|permitted|ok|okay|fine|cool|acceptable)\b"

# a party's defined name in a contract: 'Bravatek Solutions, Inc., a Colorado corporation ("Company")',
# 'i3 ICS (hereinafter "Reseller")', 'Party B: ShenZhen JingWei Communication Co., Ltd.'. Its clauses
# then say "Company", "Reseller", "Party B", never the name the question uses
DEFINED_NAME = r"\(\s*(?:[^()\"“”]{0,60}?\s)?[\"“]([A-Z][\w-]*(?:\s+[A-Z][\w-]*){0,2})[\"”]\s*\)"
PARTY_LINE = r"(?m)^\W*(Party\s+[A-Z]|Part[yie]+\s+\d)\s*[:：]\s*([^\n]{1,120})"
DEFINED_BEFORE = 200  # characters before a defined name ("Company") in which the named party stands
PREAMBLE_CHARS = 1000  # characters past the first unit matching PREAMBLE in which the parties are named

# the words that make an amount after them a lower bound ("over $25,000", "plus de 25 000 $", "über
# 25.000 $") or an upper bound ("up to $25,000", "jusqu'à", "bis zu"), in English, French and German
OVER = r"over|more than|above|exceeding|in excess of|greater than|plus de|au-delà de|supérieure?s? à|über|mehr als|oberhalb von|más de|superior(?:es)? a"
UNDER = (
    r"up to|under|below|less than|not exceeding|at most|jusqu'à|moins de|inférieure?s? à|bis zu|unter|weniger als|höchstens"
    r"|hasta|menos de|inferior(?:es)? a"
)

# ---- comparisons (ask/compare.py) -----------------------------------------------------------------
# the comparatives a comparison question asks by, two words before one ("more expensive" before "more")
COMPARATIVE = (
    r"(?:more expensive|less expensive|longer|shorter|higher|lower|larger|bigger|smaller|greater|more|less|fewer"
    r"|earlier|later|sooner|cheaper|costlier)"
)
_ITEM = r"[^?]+?"
# "Which is longer, the notice period or the cure period?", "Which per diem is higher: Paris or London?",
# "Which has the higher limit, meals or lodging?"
COMPARISON_WHICH = (
    rf"(?i)^\s*(?:which|what)\s+(?P<pre>(?:[\w'-]+\s+){{0,3}}?)(?P<comp>{COMPARATIVE})\b(?P<noun>[^,:?]*?)\s*[,:]\s*"
    rf"(?P<a>{_ITEM})\s*,?\s+or\s+(?P<b>{_ITEM})\s*\?*\s*$"
)
_PREP = r"(?:in|for|at|on|under|during|with)"
# "Is the per diem higher in Paris than in London?"
COMPARISON_PLACES = (
    rf"(?i)^\s*(?:is|are|was|were|will|would|does|do)\s+(?P<a>{_ITEM})\s+(?P<comp>{COMPARATIVE})\s+(?P<prep>{_PREP})\s+"
    rf"(?P<pa>{_ITEM})\s+than\s+(?:{_PREP}\s+)?(?P<pb>{_ITEM})\s*\?*\s*$"
)
# "Is the notice period longer than the cure period?", "Do meals have a higher limit than lodging?"; not
# "Do purchases of more than $5,000 need approval?" (a number after "than", a preposition before the
# comparative). Python's regular expressions (look-arounds): compare.py reads it, Polars never does
COMPARISON_THAN = (
    rf"(?i)^\s*(?:is|are|was|were|does|do|did|will|would|can|could)\s+(?P<a>{_ITEM}[^\s,]*(?<!\bof)(?<!\bfor)(?<!\bto)(?<!\bin)(?<!\bat)(?<!\bby)(?<!\bwith))\s+(?P<comp>{COMPARATIVE})"
    rf"(?:\s+(?P<noun>[a-z][\w'-]*))?\s+than\s+(?!(?:[$€£\d]|(?:one|two|three|four|five|six|seven|eight|nine|ten|a few|several|a|an|usual|normal|expected|allowed|required|necessary)\b))(?P<b>{_ITEM})\s*\?*\s*$"
)
# a quality, not a value, compared ("more important", "more likely", "stricter"): not a comparison the quotes can decide
NOT_COMPARED = r"(?i)(?:ant|ent|ful|ive|ous|ble|ly|ic|al|ing)$"
