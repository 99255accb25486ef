"""Build hook only: all metadata lives in pyproject.toml.

The shipped resources (parts catalogue, examples, icons) live at the repository's top-level
`resources/` so the source tree, the PyInstaller bundle and the docs share one copy. A wheel has
no top level of its own, so this copies them into the package as `designer/resources/`, where
designer.paths looks first. The sdist carries `resources/` through MANIFEST.in, so a wheel built
from the sdist (what `python -m build` does) gets them too. Editable installs skip the copy and
read the checkout's `resources/` directly.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
RESOURCES = HERE / "resources"
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".*")


class build_py_with_resources(build_py):
    """build_py, plus resources/ copied to <build_lib>/designer/resources/."""

    def _resource_files(self):
        return sorted(p for p in RESOURCES.rglob("*") if p.is_file() and not any(
            part.startswith(".") or part == "__pycache__" for part in p.relative_to(RESOURCES).parts
        ))

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if not (RESOURCES / "catalog").is_dir():
            raise SystemExit(f"{RESOURCES}/catalog not found: the package would ship without its catalogue")
        target = Path(self.build_lib) / "designer" / "resources"
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(RESOURCES, target, ignore=IGNORE)

    def get_outputs(self, include_bytecode=True):
        outputs = list(super().get_outputs(include_bytecode))
        if not getattr(self, "editable_mode", False) and RESOURCES.is_dir():
            target = Path(self.build_lib) / "designer" / "resources"
            outputs += [str(target / p.relative_to(RESOURCES)) for p in self._resource_files()]
        return outputs


setup(cmdclass={"build_py": build_py_with_resources})
