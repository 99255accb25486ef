"""The results panel: one module per tab, with the panel, text formatting and plot styling."""

from designer.ui.results.panel import ResultsPanel

__all__ = ["ResultsPanel"]
