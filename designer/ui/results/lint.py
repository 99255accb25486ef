"""The Lint tab: the design's findings; clicking one selects its item on the canvas. The tab's
title carries the counts, in red when there are errors."""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QHeaderView, QStyle, QTabWidget, QTreeWidget, QTreeWidgetItem

from designer.engine.result import Result
from designer.style import colors
from designer.ui.results.placeholder import Placeholder


class LintTab(QObject):
    title = "Lint"
    subject = "Lint"
    findingActivated = Signal(str)  # the item id of a clicked finding

    def __init__(self, tabs: QTabWidget) -> None:
        super().__init__()
        self.tabs = tabs
        tree = QTreeWidget()
        tree.setColumnCount(3)
        tree.setHeaderLabels(["Severity", "Item", "Finding"])
        tree.setRootIsDecorated(False)
        tree.setUniformRowHeights(True)
        tree.setAlternatingRowColors(True)
        tree.setWordWrap(True)
        tree.header().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        tree.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        tree.header().setStretchLastSection(True)
        tree.setToolTip("Click a finding to select its item on the canvas")
        tree.itemClicked.connect(self._clicked)
        tree.itemActivated.connect(self._clicked)
        self.tree = tree
        self.page = Placeholder(tree)
        self.message_page = self.page
        style = tree.style()
        self._icons = {
            "error": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxCritical),
            "warning": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning),
            "info": style.standardIcon(QStyle.StandardPixmap.SP_MessageBoxInformation),
        }

    def _clicked(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        item_id = item.data(0, Qt.ItemDataRole.UserRole)
        if item_id:  # findings about the whole design name no item
            self.findingActivated.emit(item_id)

    def show(self, result: Result) -> None:
        findings = result.lint
        tree = self.tree
        tree.clear()
        index = self.tabs.indexOf(self.page)
        if not findings:
            self.page.show_message("No findings: the design passes every rule.")
            self.tabs.setTabText(index, self.title)
            self.tabs.tabBar().setTabTextColor(index, tree.palette().color(QPalette.ColorRole.WindowText))
            return
        for finding in findings:
            row = QTreeWidgetItem([finding.severity, finding.item, finding.message])
            row.setIcon(0, self._icons[finding.severity])
            row.setData(0, Qt.ItemDataRole.UserRole, finding.item)
            row.setToolTip(2, finding.message)
            tree.addTopLevelItem(row)
        self.page.show_content()
        errors = sum(1 for f in findings if f.severity == "error")
        warnings = sum(1 for f in findings if f.severity == "warning")
        counts = [f"{errors} error{'s' if errors != 1 else ''}"] if errors else []
        counts += [f"{warnings} warning{'s' if warnings != 1 else ''}"] if warnings else []
        self.tabs.setTabText(index, f"Lint ({', '.join(counts) or len(findings)})")
        color = QColor(colors.ERROR) if errors else tree.palette().color(QPalette.ColorRole.WindowText)
        self.tabs.tabBar().setTabTextColor(index, color)

    def findings_shown(self) -> list[tuple[str, str, str]]:
        t = self.tree
        return [tuple(t.topLevelItem(i).text(c) for c in range(3)) for i in range(t.topLevelItemCount())]
