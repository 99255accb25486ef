"""Actions declared in a table: an `ActionSpec` per action (name, text, slot, keys, tip, icon),
made into `QAction`s by `make_actions`; the window and the editor keep them in typed records
(dataclasses with one field per action), so a misspelt action name is a type error, not a
`getattr` at run time."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from PySide6.QtGui import QAction, QIcon, QKeySequence
from PySide6.QtWidgets import QWidget

from designer.paths import icons_dir

Shortcut = QKeySequence | QKeySequence.StandardKey | str | list[QKeySequence | str] | None  # a list: several keys


@dataclass(frozen=True)
class ActionSpec:
    """One action: `name` is its object name and its field in the record it goes to."""

    name: str
    text: str
    slot: Callable[..., Any]  # called with no argument, or with the new state if checkable
    shortcut: Shortcut = None
    tip: str = ""
    icon: str | None = None  # an icon of icons_dir(), without ".svg"
    checkable: bool = False


def make_action(host: QWidget, spec: ActionSpec) -> QAction:
    """The action, owned by `host` and listening for its keys there."""
    action = QAction(spec.text, host)
    action.setObjectName(spec.name)
    shortcut = spec.shortcut
    if shortcut is not None:
        if isinstance(shortcut, list):
            # Each key once: a platform's standard keys may hold one given beside them (Redo is
            # Ctrl+Shift+Z on X11), and a key bound twice to one action is ambiguous and does nothing.
            sequences = {QKeySequence(s).toString(): QKeySequence(s) for s in shortcut}
            action.setShortcuts(list(sequences.values()))
        else:
            action.setShortcut(QKeySequence(shortcut))
    if spec.tip:
        action.setStatusTip(spec.tip)
        action.setToolTip(spec.tip)
    if spec.icon:
        path = icons_dir() / f"{spec.icon}.svg"
        if path.exists():
            action.setIcon(QIcon(str(path)))
    action.setCheckable(spec.checkable)
    slot = spec.slot
    if spec.checkable:
        action.toggled.connect(slot)
    else:
        action.triggered.connect(lambda _checked=False: slot())
    host.addAction(action)
    return action


def make_actions(host: QWidget, specs: Iterable[ActionSpec]) -> dict[str, QAction]:
    """The table's actions by name, in its order (to be handed to a record's constructor)."""
    return {spec.name: make_action(host, spec) for spec in specs}


class ActionAttribute:
    """`window.act_NAME`, read from the record at the (dotted) attribute path `record` of the
    owner: the names the tests, the bulk edits and older code use, kept beside the typed records."""

    def __init__(self, record: str):
        self.record = attrgetter(record)
        self.field = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.field = name.removeprefix("act_")

    def __get__(self, obj: object, owner: type | None = None) -> QAction:
        if obj is None:
            return self  # type: ignore[return-value]  # the class's own attribute, for introspection
        return getattr(self.record(obj), self.field)
