"""Leaving one data set out: the selection the issue-33 studies share (auto_rule_lodo.py,
private_tree_depth_lodo.py, nb_bins_lodo.py).

A case is a dict with at least "set"; a family is a list of parameter tuples; loss(case, params) is what a choice
costs on one case. For each data set, the parameters are chosen on the cases of the other sets alone."""
import json
import statistics
from pathlib import Path


def leave_one_out(cases, family, loss):
    """Yield (held-out set, the parameters minimising the mean loss on the other sets, the held-out set's cases),
    sets in name order; ties go to the first parameters of the family."""
    for held in sorted({c["set"] for c in cases}):
        train = [c for c in cases if c["set"] != held]
        best = min(family, key=lambda p: statistics.mean(loss(c, p) for c in train))
        yield held, best, [c for c in cases if c["set"] == held]


def cached_grid(path, measure):
    """The measured grid from the JSON at `path`, or measure() written there first."""
    path = Path(path)
    if path.is_file():
        return json.loads(path.read_text())
    grid = measure()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(grid))
    return grid
