"""Draw the figures of the documentation (run by hand; the PNGs are committed).

The documentation build never runs the demo: ``python docs/make_figures.py`` runs
``jaxtests demo`` (the full run, seed 0, breast cancer) into ``docs/_static/figures/`` and
adds the critical-difference diagram and the Bayesian simplex of the user guide's
many-data-set example. It takes a few minutes on two cores.
"""

import os
import pathlib
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

OUT = pathlib.Path(__file__).resolve().parent / "_static" / "figures"


def demo_figures():
    cmd = [sys.executable, "-m", "jaxtests._cli", "demo", "--seed", "0", "--quiet", "--out", OUT]
    subprocess.run([str(c) for c in cmd], check=True, env=dict(os.environ, MPLBACKEND="Agg"))
    for name in OUT.glob("*.json"):  # the figures only
        name.unlink()


def score_figures():
    import jaxtests

    names = ["iris", "wine", "glass", "sonar", "heart"]
    acc = [0.96, 0.95, 0.94, 0.98, 0.96, 0.91, 0.70, 0.66, 0.69, 0.85, 0.83, 0.72, 0.84, 0.81]
    acc.append(0.77)
    table = jaxtests.read_scores(
        {
            "dataset": [d for d in names for _ in range(3)],
            "learner": ["svm", "knn", "tree"] * 5,
            "accuracy": acc,
        }
    )
    fig = jaxtests.plot.critical_difference(table.nemenyi(alpha=0.05))
    fig.savefig(OUT / "critical_difference.png", dpi=110)
    r = table.signrank("knn", "tree", rope=0.01, key=0, return_samples=True)
    fig = jaxtests.plot.simplex(r, names=("knn", "tree"))
    fig.savefig(OUT / "simplex.png", dpi=110)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    demo_figures()
    score_figures()
    print("\n".join(sorted(p.name for p in OUT.glob("*.png"))))
