"""Design files and exports (Qt-free)."""

from designer.io.files import DesignFileError, dumps, load_design, loads, save_design

__all__ = ["DesignFileError", "dumps", "load_design", "loads", "save_design"]
