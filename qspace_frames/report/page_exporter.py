"""The HTML exporter of the report's pages: nbconvert's HTMLExporter without its last pass.

HTMLExporter parses every page it wrote again with BeautifulSoup, only to give cells and outputs
keyboard focus (tabindex) and images an alt text: half the export of a page with charts (1.1 s of
2.0 s for the nine notebooks of a 50-contract run). The same attributes are added here to the
template's own markup, which this pass can match exactly.
"""

from __future__ import annotations

import re

from nbconvert import HTMLExporter
from nbconvert.exporters.html import Highlight2HTML, WidgetsDataTypeFilter
from nbconvert.exporters.templateexporter import TemplateExporter
from traitlets import Bool

# the tags HTMLExporter makes focusable, as the lab template writes them (a class list in double quotes)
_FOCUSABLE = re.compile(r'<div class="(jp-Cell-inputWrapper|[^"]*\bjp-OutputArea-output\b[^"]*)"(?![^>]*\btabindex=)')
_IMG_WITHOUT_ALT = re.compile(r"<img\b(?![^>]*\balt=)")


def accessible(page: str) -> str:
    """The page with the attributes HTMLExporter's pass adds: tabindex on cell inputs and outputs,
    an alt text on images without one."""
    page = _FOCUSABLE.sub(lambda m: f'{m.group(0)} tabindex="0"', page)
    return _IMG_WITHOUT_ALT.sub('<img alt="No description has been provided for this image"', page)


class PageExporter(HTMLExporter):
    # the notebook is validated once, after the preprocessors, not after each of the eleven (0.5 s a run)
    optimistic_validation = Bool(True).tag(config=True)

    def from_notebook_node(self, nb, resources=None, **kw):
        # what HTMLExporter.from_notebook_node does before its template, then the template alone
        lang = nb.metadata.get("language_info", {})
        lexer = lang.get("pygments_lexer", lang.get("name"))
        resources = self._init_resources(resources)
        self.register_filter("highlight_code", self.filters.get("highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)))
        data_types = WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata, parent=self, resources=resources)
        self.register_filter("filter_data_type", data_types)
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return accessible(page), resources
