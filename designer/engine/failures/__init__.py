"""Failure what-ifs: take parts out of service and evaluate what is left.

One module per job, each importing only those before it:

- `marks`: a failure as text, record and setting, marks of one target merged, and its wording;
- `degrade`: the degraded design, built on a copy (split-out copies, dead ends dropped, the job
  shrunk to the largest connected set);
- `bisection`: the scale-out bisection of a degraded design whose copies differ;
- `compare`: the healthy and degraded figures side by side;
- `slices`: a torus of reconfigurable blocks and the largest slice of intact blocks;
- `blast`: what one failed copy of an item cuts off and slows, from the drawn graph alone;
- `run`: the what-if run: the degraded design evaluated with the healthy job (`degraded`).

The names other packages use are re-exported here: `from designer.engine.failures import X`.
"""

from designer.engine.failures.bisection import _level_value, uneven_bisection
from designer.engine.failures.blast import BLAST_CONNECTIVITY_MAX_ITEMS, BlastIndex, BlastRadius, blast_radius
from designer.engine.failures.compare import comparisons
from designer.engine.failures.degrade import (
    SPLIT_TAG,
    components,
    connected_job,
    degraded_design,
    unbuildable,
    weakened_accelerators,
)
from designer.engine.failures.marks import (
    Failure,
    MediumFailure,
    failed_targets,
    failure_words,
    failures_of,
    medium_links,
    merged_failures,
    parse_failure,
)
from designer.engine.failures.run import DegradedRun, degraded, run_degraded
from designer.engine.failures.slices import (
    Blocks,
    intact_blocks,
    largest_slice,
    reconfigurable_blocks,
    slice_design,
)

__all__ = [
    "BLAST_CONNECTIVITY_MAX_ITEMS",
    "SPLIT_TAG",
    "BlastIndex",
    "BlastRadius",
    "Blocks",
    "DegradedRun",
    "Failure",
    "MediumFailure",
    "_level_value",
    "blast_radius",
    "comparisons",
    "components",
    "connected_job",
    "degraded",
    "degraded_design",
    "failed_targets",
    "failure_words",
    "failures_of",
    "intact_blocks",
    "largest_slice",
    "medium_links",
    "merged_failures",
    "parse_failure",
    "reconfigurable_blocks",
    "run_degraded",
    "slice_design",
    "unbuildable",
    "uneven_bisection",
    "weakened_accelerators",
]
