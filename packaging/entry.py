"""PyInstaller entry script for the Cluster Designer bundle.

The frozen executable runs this file as __main__; it hands over to the same function the
`cluster-designer` console script calls. cluster-designer.spec checks ENTRY_POINT against
[project.scripts] in pyproject.toml, so the two cannot drift apart silently.
"""

import sys

from designer.cli import main

ENTRY_POINT = "designer.cli:main"

if __name__ == "__main__":
    sys.exit(main())
