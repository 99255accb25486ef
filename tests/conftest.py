"""Shared test setup. Every test runs without a display: Qt's offscreen platform renders text and
grabs windows.

The GUI tests need a catalogue with a DGX H100, its parts and an InfiniBand switch. While the
shipped catalogue (resources/catalog/) is incomplete, `gui_catalog()` falls back to a small fixture
catalogue written here, with figures from the vendors' datasheets."""

import json
import os
import tempfile
from pathlib import Path

os.environ["QT_QPA_PLATFORM"] = "offscreen"

_SRC = "fixture catalogue for GUI tests (vendor datasheets)"
FIXTURE_PARTS = [
    {"id": "nvlink4", "kind": "medium", "name": "NVLink 4", "source": _SRC, "family": "nvlink", "tier": "scale-up",
     "lane_gb_per_s": 25, "latency_ns": 150, "lanes_per_cable": 0, "transceivers_per_cable": 0},
    {"id": "pcie-gen5", "kind": "medium", "name": "PCIe Gen5", "source": _SRC, "family": "pcie", "tier": "scale-up",
     "lane_gb_per_s": 4, "latency_ns": 300, "lanes_per_cable": 16, "transceivers_per_cable": 0},
    {"id": "ib-ndr", "kind": "medium", "name": "InfiniBand NDR", "source": _SRC, "family": "infiniband",
     "tier": "scale-out", "lane_gb_per_s": 50, "latency_ns": 600, "lanes_per_cable": 1, "transceivers_per_cable": 2},
    {"id": "eth-400g", "kind": "medium", "name": "Ethernet 400G", "source": _SRC, "family": "ethernet",
     "tier": "scale-out", "lane_gb_per_s": 50, "latency_ns": 900, "lanes_per_cable": 1, "transceivers_per_cable": 2},
    {"id": "h100-sxm", "kind": "accelerator", "name": "NVIDIA H100 SXM5 80GB", "vendor": "NVIDIA", "source": _SRC,
     "peak_tflops": {"fp64": 34, "fp64_tensor": 67, "tf32": 494.5, "bf16": 989.5, "bf16_sparse": 1979, "fp8": 1979,
                     "fp8_sparse": 3958, "int8": 1979},
     "memory_gb": 80, "memory_type": "hbm3", "memory_bw_tb_per_s": 3.35, "power_w": 700,
     "media": ["nvlink4", "pcie-gen5"], "scale_up_medium": "nvlink4", "scale_up_lanes": 18,
     "host_medium": "pcie-gen5", "host_lanes": 16, "price_usd": 30000, "price_source": _SRC},
    {"id": "xeon-8480", "kind": "cpu", "name": "Intel Xeon Platinum 8480C", "source": _SRC, "cores": 56,
     "power_w": 350, "media": ["pcie-gen5"]},
    {"id": "cx7", "kind": "nic", "name": "NVIDIA ConnectX-7 400G", "source": _SRC, "port_gbps": 400, "ports": 1,
     "media": ["ib-ndr", "eth-400g", "pcie-gen5"], "host_medium": "pcie-gen5", "host_lanes": 16, "power_w": 25},
    {"id": "nvswitch-gen3", "kind": "switch", "name": "NVSwitch gen 3", "source": _SRC, "ports": 64, "port_lanes": 1,
     "port_gbps": 200, "media": ["nvlink4"], "height_u": 0, "power_w": 100, "latency_ns": 100},
    {"id": "qm9700", "kind": "switch", "name": "NVIDIA Quantum-2 QM9700", "source": _SRC, "ports": 64,
     "port_lanes": 1, "port_gbps": 400, "media": ["ib-ndr"], "height_u": 1, "power_w": 1720, "latency_ns": 130,
     "price_usd": 30000, "price_source": _SRC},
    {"id": "sn5600", "kind": "switch", "name": "NVIDIA Spectrum-4 SN5600", "source": _SRC, "ports": 64,
     "port_lanes": 1, "port_gbps": 800, "media": ["eth-400g"], "height_u": 2, "power_w": 1800, "latency_ns": 700},
    {"id": "dgx-h100", "kind": "server", "name": "NVIDIA DGX H100", "source": _SRC, "height_u": 8,
     "system_power_w": 10200, "accelerator_slots": 8, "nic_slots": 8, "default_accelerator": "h100-sxm",
     "default_nic": "cx7", "default_nics": 8, "default_cpu": "xeon-8480", "default_cpus": 2,
     "scale_up": {"switch": "nvswitch-gen3", "switches": 4}, "media": ["pcie-gen5"]},
    {"id": "rack-48u", "kind": "rack", "name": "48U rack, 40 kW", "source": _SRC, "height_u": 48,
     "power_budget_kw": 40},
]


def fixture_catalog_path() -> Path:
    path = Path(tempfile.gettempdir()) / f"cluster-designer-gui-fixture-{os.getpid()}.json"
    if not path.exists():
        path.write_text(json.dumps({"format": "cluster-designer-catalog", "version": 1, "parts": FIXTURE_PARTS}))
    return path


def gui_catalog():
    """The shipped catalogue if it has what the GUI tests use, else the fixture catalogue (which is
    then also made the process default, so the app and the engine agree)."""
    from designer.model import catalog as catalog_module

    try:
        shipped = catalog_module.load_catalog(include_user=False)
    except Exception:  # noqa: BLE001 - the shipped catalogue may be mid-edit
        shipped = None
    needed = ("dgx-h100", "qm9700", "rack-48u", "h100-sxm", "ib-ndr")
    if shipped is not None and all(p in shipped for p in needed):
        catalog_module.set_default_catalog(shipped)
        return shipped
    catalog = catalog_module.Catalog([catalog_module.parse_part(p, "fixture", i) for i, p in enumerate(FIXTURE_PARTS)])
    catalog_module.set_default_catalog(catalog)
    return catalog


def write_big_design(path, side: int = 142, catalog=None) -> int:
    """A flat 2D torus of TPU v4 chips, every chip drawn: 142 × 142 = 20,164 items and 40,328 ICI
    links. (Flat on purpose: the canvas must cope with 20,000 items even where a design uses no
    replicated groups.) Returns the number of items."""
    from designer.io.files import save_design
    from designer.model.design import Design, Item, Link

    catalog = catalog or gui_catalog()
    chip, medium = ("tpu-v4", "tpu-ici") if "tpu-v4" in catalog else ("h100-sxm", "nvlink4")
    design = Design(name=f"{side}×{side} torus, flat", description="Stress test: every chip drawn")
    for i in range(side):
        for j in range(side):
            design.add_item(Item(f"c{i}-{j}", "accelerator", name=f"{i},{j}", part=chip, x=j * 80, y=i * 60))
    for i in range(side):
        for j in range(side):
            design.add_link(Link(f"h{i}-{j}", f"c{i}-{j}", f"c{i}-{(j + 1) % side}", medium, 1))
            design.add_link(Link(f"v{i}-{j}", f"c{i}-{j}", f"c{(i + 1) % side}-{j}", medium, 1))
    save_design(design, path)
    return len(design.items)


# --- GUI fixtures ---------------------------------------------------------------------------------
import pytest  # noqa: E402

os.environ.setdefault("XDG_CONFIG_HOME", tempfile.mkdtemp(prefix="cluster-designer-test-config-"))


@pytest.fixture
def make_window(qtbot, monkeypatch):
    """A shown main window (1400×900) on a design; closing never blocks on a question."""
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.StandardButton.Discard))
    windows = []

    def make(design=None, debounce_ms: int = 10):
        from designer.ui.main_window import MainWindow

        catalog = gui_catalog()
        window = MainWindow(catalog, debounce_ms=debounce_ms)
        qtbot.addWidget(window)
        window.resize(1400, 900)
        window.show()
        qtbot.waitExposed(window)
        if design is not None:
            window.document.reset(design, None)
            qtbot.waitUntil(lambda: not window.scene.building, timeout=60_000)
            window.view.zoom_to_fit()
        windows.append(window)
        return window

    yield make
    for window in windows:
        window.document.undo_stack.setClean()
        window.scheduler.shutdown(timeout_s=10)
