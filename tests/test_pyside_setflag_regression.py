"""PySide6 6.12 corrupts None's reference count in QGraphicsItem.setFlag; creating many flagged items
then crashes the interpreter. This project pins 6.11; this test fails if a broken version sneaks in."""

import os
import subprocess
import sys

SCRIPT = """
import sys
from PySide6.QtWidgets import QApplication, QGraphicsRectItem, QGraphicsScene, QGraphicsItem
app = QApplication([])
scene = QGraphicsScene()
items = []
for i in range(20000):
    item = QGraphicsRectItem(0, 0, 10, 10)
    item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
    item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsMovable, True)
    item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemSendsGeometryChanges, False)
    scene.addItem(item)
    items.append(item)
before = sys.getrefcount(None)
for item in items:
    item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsFocusable)
assert abs(sys.getrefcount(None) - before) < 1000, (before, sys.getrefcount(None))
scene.clear()
print("ok")
"""


def test_setflag_on_20000_items_does_not_crash():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "ok"
