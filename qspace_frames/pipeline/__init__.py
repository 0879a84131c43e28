"""The pipeline: every stage declared once (`stages`), the `Workbench` that runs them through the
store (`workbench`), and the per-document stages' drivers (`per_document`)."""

from .stages import STAGES
from .workbench import CONTRACTNLI, Workbench, contractnli_workbench, find_project_root, is_project_root

__all__ = ["CONTRACTNLI", "STAGES", "Workbench", "contractnli_workbench", "find_project_root", "is_project_root"]
