"""The code base is ruff clean: library, tests, benchmarks, scripts and the chapters' notebooks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    targets = [t for t in ("posenc_lib", "tests", "benchmarks", "scripts", "_ext", "chapters")
               if (ROOT / t).exists()]
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", *targets],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
