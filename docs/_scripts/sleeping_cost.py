"""The physics page's figure of what sleeping saves: the cost of a world step against the share
of bodies at rest, with sleeping on and off.

    python benchmarks/crowd.py --at-rest --csv docs/data/physics/sleeping_cost.csv
    python docs/_scripts/sleeping_cost.py

Reads the CSV the benchmark writes (microseconds of CPU per step, min / median / max over its
rounds, per share at rest and sleeping on or off) and draws
``docs/_static/physics/sleeping_cost.png``: the median as a line, min to max as a band.
Needs matplotlib (the ``[train]`` or ``[docs]`` extra).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

DOCS = Path(__file__).resolve().parent.parent
CSV = DOCS / "data" / "physics" / "sleeping_cost.csv"
PNG = DOCS / "_static" / "physics" / "sleeping_cost.png"


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(CSV, newline="") as fh:
        rows = list(csv.DictReader(fh))
    fig, ax = plt.subplots(figsize=(6.0, 3.6))
    for sleeping, label, colour in (("1", "sleeping on", "C0"), ("0", "sleeping off", "C1")):
        pts = sorted((float(r["at_rest"]), float(r["us_per_step_min"]),
                      float(r["us_per_step_median"]), float(r["us_per_step_max"]))
                     for r in rows if r["sleeping"] == sleeping)
        x = [100 * p[0] for p in pts]
        ax.fill_between(x, [p[1] for p in pts], [p[3] for p in pts], color=colour, alpha=0.2,
                        linewidth=0)
        ax.plot(x, [p[2] for p in pts], "o-", color=colour, label=label)
    ax.set_xlabel("bodies at rest [%] (of 1000 boxes; the others spin in place)")
    ax.set_ylabel("CPU per world step [µs]")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    PNG.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PNG, dpi=120)
    print(f"wrote {PNG.relative_to(DOCS.parent)}")


if __name__ == "__main__":
    main()
