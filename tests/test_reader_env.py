"""The book as a Colab or Binder reader gets it: a fresh venv, a wheel, every chapter notebook.

A new virtual environment gets exactly what a reader installs: torch (pinned), the reader's set
(``requirements/reader.txt``) and the library as a NON-editable wheel with its ``book`` extra.
Every generated chapter notebook (the ``.ipynb`` twin a launch button opens) then runs top to
bottom in that environment with live explorers (``POSENC_STATIC`` unset), from a working directory
outside the repository, and no cell may raise. This is what catches a chapter importing a package
the reader's set lacks, or the library reading a file that only exists in a checkout.

The environment is cached under ``_build/reader-env/<hash>``, keyed by the requirements, the
``book`` extra and the Python version, so a warm re-run only reinstalls the wheel (seconds).
Only the wheel is rebuilt each time: the library under test is always this tree's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import chapters  # noqa: E402  (scripts/ is not a package; it is put on the path above)

pytestmark = pytest.mark.reader_env

READER = ROOT / "requirements" / "reader.txt"
BINDER = ROOT / ".binder" / "requirements.txt"
CACHE = ROOT / "_build" / "reader-env"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
NOTEBOOK_CHAPTERS = chapters.notebook_chapters()
IDS = [str(p.relative_to(ROOT / "chapters")) for p in NOTEBOOK_CHAPTERS]
# The kernel of the fresh venv runs this: executes one notebook and saves it with its outputs.
RUNNER = """
import sys, time
import nbformat
from nbclient import NotebookClient

source, target, workdir = sys.argv[1:4]
nb = nbformat.read(source, as_version=4)
start = time.perf_counter()
NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": workdir}}).execute()
nb.metadata["posenc_seconds"] = time.perf_counter() - start
nbformat.write(nb, target)
"""


def requirement_names(lines: list[str]) -> dict[str, str]:
    """``{name: specifier}`` of requirement lines (options, comments and paths left out)."""
    found = {}
    for line in lines:
        line = line.split("#")[0].strip()
        if not line or line.startswith(("-", ".")):
            continue
        match = re.match(r"([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)", line)
        assert match, line
        found[match.group(1).lower().replace("_", "-")] = match.group(3).replace(" ", "")
    return found


def book_extra() -> dict[str, str]:
    # A regex, not tomllib: the tests run on Python 3.10 too (tomllib is 3.11+).
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    block = re.search(r"^book = \[(.*?)\]", pyproject, re.M | re.S)
    assert block is not None, "pyproject.toml has no `book` extra"
    return requirement_names(re.findall(r'"([^"]+)"', block.group(1)))


def test_the_reader_set_binder_and_the_book_extra_agree() -> None:
    # One reader environment: everything the `book` extra needs is in the reader's set and in
    # Binder's file, with the same transformers range (the chapters use its v5 API).
    reader = requirement_names(READER.read_text(encoding="utf-8").splitlines())
    binder = requirement_names(BINDER.read_text(encoding="utf-8").splitlines())
    for name in book_extra():
        assert name in reader, f"requirements/reader.txt lacks {name}"
        assert name in binder, f".binder/requirements.txt lacks {name}"
    assert reader["transformers"] == binder["transformers"] == book_extra()["transformers"]
    assert reader["transformers"] in {">=5.25,<6", "<6,>=5.25"}
    assert reader["torch"] == "==2.13.0" and binder["torch"] == "==2.13.0+cpu"
    assert "-e .[book]" in BINDER.read_text(encoding="utf-8")
    # The developer's set includes the reader's and does not pin transformers differently.
    developer = requirement_names((ROOT / "requirements.txt").read_text().splitlines())
    assert "-r requirements/reader.txt" in (ROOT / "requirements.txt").read_text()
    assert "transformers" not in developer or developer["transformers"] == reader["transformers"]
    # And the setup cell checks each package the extra brings that a chapter imports.
    assert {"plotly", "anywidget", "transformers"} <= set(chapters.BOOK_MODULES)


def _run(command: list[str | Path], timeout: float, **kwargs: object) -> str:
    result = subprocess.run(
        [str(c) for c in command], capture_output=True, text=True, timeout=timeout, check=False,
        **kwargs,  # type: ignore[arg-type]
    )
    assert result.returncode == 0, f"{command}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


def _environment() -> dict[str, str]:
    """The reader's process environment: nothing from this checkout or from the book build."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"POSENC_STATIC", "PYTHONPATH", "JUPYTER_CONFIG_PATH", "VIRTUAL_ENV"}}
    env["OMP_NUM_THREADS"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _env_key() -> str:
    digest = hashlib.sha256()
    for path in (READER, ROOT / "pyproject.toml"):
        digest.update(path.read_bytes())
    digest.update(sys.version.encode())
    return digest.hexdigest()[:16]


@pytest.fixture(scope="module")
def reader_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The python of a venv with torch, the reader's set and this tree's wheel (non-editable)."""
    env = _environment()
    venv = CACHE / _env_key()
    python = venv / "bin" / "python"
    stamp = venv / ".complete"
    if not stamp.exists():
        shutil.rmtree(venv, ignore_errors=True)
        start = time.perf_counter()
        _run([sys.executable, "-m", "venv", venv], 300, env=env)
        (torch,) = [line for line in READER.read_text().splitlines()
                    if line.startswith("torch==")]
        # The CPU build, as the Makefile installs it; where that index is out of reach pip takes
        # the same pinned version from its configured indexes (a local CPU wheel here).
        cpu = subprocess.run(
            [python, "-m", "pip", "install", "-q", "--retries", "0", "--timeout", "15",
             "--index-url", TORCH_CPU_INDEX, torch], capture_output=True, env=env, timeout=900,
            check=False,
        )
        if cpu.returncode != 0:
            _run([python, "-m", "pip", "install", "-q", torch], 900, env=env)
        _run([python, "-m", "pip", "install", "-q", "-r", READER, "nbclient"], 900, env=env)
        seconds = time.perf_counter() - start
        (venv / "install-seconds.txt").write_text(f"{seconds:.0f}\n")
        stamp.touch()
    # The wheel of this tree, built from a copy so that setuptools' build/ stays out of it.
    source = tmp_path_factory.mktemp("wheel-src")
    shutil.copytree(ROOT / "posenc_lib", source / "posenc_lib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copyfile(ROOT / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "--wheel-dir", dist, source], 300, env=env)
    (wheel,) = dist.glob("posenc_lib-*.whl")
    _run([python, "-m", "pip", "uninstall", "-q", "-y", "posenc_lib"], 300, env=env)
    # With its `book` extra: pip must find every requirement of the extra already satisfied.
    _run([python, "-m", "pip", "install", "-q", f"posenc_lib[book] @ {wheel.as_uri()}"], 600,
         env=env)
    return python


# The first test to use the environment builds it (cold: a few minutes of pip): a longer bound.
@pytest.mark.timeout(1800)
def test_the_library_is_installed_not_the_checkout(reader_python: Path, tmp_path: Path) -> None:
    # From outside the repository, posenc_lib is the wheel's copy in site-packages, with its data.
    code = ("import posenc_lib, posenc_lib.lab.results as r, transformers;"
            "print(posenc_lib.__file__); print(r.load_results()['settings_digest']);"
            "print(transformers.__version__)")
    out = _run([reader_python, "-c", code], 300, cwd=tmp_path, env=_environment()).split()
    venv = reader_python.parent.parent
    assert Path(out[0]).is_relative_to(venv) and "site-packages" in out[0], out[0]
    assert len(out[1]) >= 8
    assert out[2].startswith("5."), out[2]


@pytest.mark.timeout(1800)  # also builds the environment when run on its own (-k)
@pytest.mark.parametrize("md", NOTEBOOK_CHAPTERS, ids=IDS)
def test_every_chapter_notebook_runs_in_the_reader_env(
    md: Path, reader_python: Path, tmp_path: Path
) -> None:
    ipynb = md.with_suffix(".ipynb")
    workdir = tmp_path / "reader"  # outside the repository: nothing relative to it resolves
    workdir.mkdir()
    source = workdir / ipynb.name
    shutil.copyfile(ipynb, source)
    runner = tmp_path / "run_notebook.py"
    runner.write_text(RUNNER, encoding="utf-8")
    executed = tmp_path / "executed.ipynb"
    _run([reader_python, runner, source, executed, workdir], 840, cwd=workdir,
         env=_environment())
    nb = nbformat.read(executed, as_version=4)
    errors = [
        (index, out.get("ename"), out.get("evalue"))
        for index, cell in enumerate(nb.cells) if cell.cell_type == "code"
        for out in cell.outputs if out.output_type == "error"
    ]
    assert not errors, f"{ipynb.name}: cells raised {errors}"
    code = [c for c in nb.cells if c.cell_type == "code"]
    # The setup cell installed nothing (the wheel is there; no network) and said what runs.
    setup_text = "".join(o.get("text", "") for o in code[0].outputs)
    assert "Installing" not in setup_text and "transformers 5." in setup_text, setup_text
    # Every explorer and every figure drew something a front-end can render: a live widget
    # (anywidget/ipywidgets) or plotly's own bundle.
    # (nbclient, like the book build, skips cells tagged skip-execution: nothing to check there.)
    figure_cells = [c for c in code if "skip-execution" not in c.metadata.get("tags", [])
                    and re.search(r"_explorer\(|\bshow\(|rope_calculator\(",
                                  c.source.splitlines()[-1] if c.source else "")]
    for cell in figure_cells:
        kinds = {key for out in cell.outputs for key in out.get("data", {})}
        assert kinds & {"application/vnd.jupyter.widget-view+json",
                        "application/vnd.plotly.v1+json"}, (ipynb.name, cell.source[-200:])
    seconds = nb.metadata["posenc_seconds"]
    log = CACHE / "run-seconds.json"
    times = json.loads(log.read_text()) if log.exists() else {}
    times[str(md.relative_to(ROOT / "chapters"))] = round(seconds, 1)
    log.write_text(json.dumps(times, indent=1, sort_keys=True) + "\n")
