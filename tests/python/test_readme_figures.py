"""The README's figures are the committed benchmark results (issue #10: a hand-typed size
table went stale). scripts/readme_figures.py regenerates them; this fails until it is run."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_figures_match_the_results():
    script = ROOT / "scripts" / "readme_figures.py"
    run = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
