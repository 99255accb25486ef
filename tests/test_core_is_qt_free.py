import subprocess
import sys


def test_load_and_evaluate_from_python_import_no_qt(tmp_path):
    script = f"""
import sys
from designer import load, evaluate, save
from designer.topologies import generate
save(generate("rail-fat-tree", nodes=32), {str(tmp_path / 'x.cluster.json')!r})
result = evaluate(load({str(tmp_path / 'x.cluster.json')!r}))
assert result.inventory.accelerators == 256
qt = sorted(m for m in sys.modules if m.split(".")[0] in ("PySide6", "shiboken6", "pyqtgraph"))
print(qt)
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
