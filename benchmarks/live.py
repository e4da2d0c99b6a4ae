"""Live notebooks: the size of each chapter executed in live mode, as a reader's Jupyter saves it.

Each chapter's ``.ipynb`` twin is executed by nbclient in a fresh kernel **without**
``POSENC_STATIC`` (so every explorer is a live widget), with the widget state stored in the
notebook as JupyterLab and Colab store it; the saved size is what a reader's notebook weighs and
what the browser must load to render it. Goals: a chapter <= 3 MB, the playground <= 10 MB.
Also printed: the largest widget model, and the seconds the execution took.

With ``--lab``, in a real JupyterLab driven by Debian's chromium instead: the seconds from running
a cell that shows an explorer (imports already done) to its figure drawn (goal <= 2 s), and from
"run all" on the playground to every figure of it drawn.

Run: ``.venv/bin/python benchmarks/live.py [--lab] [chapter.ipynb ...]`` (default: every chapter).
Set ``PYTHONPATH`` to a checkout to measure that checkout's library (e.g. an older one).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from chapters import notebook_chapters  # noqa: E402  (scripts/ is not a package)


def execute(path: Path) -> tuple[int, int, float]:
    """Executed size in bytes, largest widget model's state in bytes, seconds."""
    nb = nbformat.read(path, as_version=4)
    env_static = os.environ.pop("POSENC_STATIC", None)
    start = time.perf_counter()
    try:
        NotebookClient(
            nb, timeout=600, kernel_name="python3", store_widget_state=True,
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
    finally:
        if env_static is not None:
            os.environ["POSENC_STATIC"] = env_static
    seconds = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / path.name
        nbformat.write(nb, out)
        size = out.stat().st_size
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    models = state.get("state", {})
    largest = max((len(json.dumps(m)) for m in models.values()), default=0)
    return size, largest, seconds


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Figures drawn in the notebook in front (not in another open tab).
PLOTS = (
    "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
    " return w ? w.node.querySelectorAll('.jp-Cell-outputArea .js-plotly-plot').length : 0; }"
)
OPEN = (
    "name => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
    " return !!w && !!w.context && w.context.path === name; }"
)
IDLE = (
    "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
    " const k = w && w.sessionContext && w.sessionContext.session"
    " && w.sessionContext.session.kernel;"
    " return !!k && k.connectionStatus === 'connected' && k.status === 'idle'; }"
)


def _wait(page: object, expression: str, seconds: float) -> float:
    """Seconds until ``expression`` is truthy in the page (polled; bounded)."""
    start = time.perf_counter()
    page.wait_for_function(expression, timeout=seconds * 1000, polling=50)  # type: ignore[attr-defined]
    return time.perf_counter() - start


def lab() -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cells = ["from posenc_lib.widgets import heatmap_explorer", "heatmap_explorer()"]
        first = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        first.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                        "language": "python"}
        nbformat.write(first, folder / "first.ipynb")
        playground = ROOT / "chapters" / "appendix" / "playground.ipynb"
        shutil.copyfile(playground, folder / "playground.ipynb")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k != "POSENC_STATIC"}
        server = subprocess.Popen(
            [str(Path(sys.executable).with_name("jupyter")), "lab", "--no-browser",
             "--allow-root", "--ip=127.0.0.1", f"--port={port}",
             "--IdentityProvider.token=bench", f"--ServerApp.root_dir={folder}",
             "--LabApp.expose_app_in_browser=True", f"--LabApp.workspaces_dir={folder}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        )
        try:
            deadline = time.monotonic() + 120
            while True:  # wait (bounded) for the server to listen
                try:
                    socket.create_connection(("127.0.0.1", port), 0.5).close()
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        raise RuntimeError("JupyterLab did not start") from None
                    time.sleep(0.5)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM,
                                             args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page(viewport={"width": 1300, "height": 1000})
                page.goto(f"http://127.0.0.1:{port}/lab/tree/first.ipynb?token=bench")
                _wait(page, IDLE, 120)
                command = "() => {{ window.jupyterapp.commands.execute('notebook:{}'); }}"
                page.evaluate(command.format("run-cell-and-select-next"))  # the imports
                time.sleep(0.5)
                _wait(page, IDLE, 120)
                page.evaluate(command.format("run-cell"))  # the explorer
                shown = _wait(page, f"() => ({PLOTS})() >= 1", 120)
                print(f"first explorer drawn {shown:5.2f} s after its cell was run "
                      "(imports done; goal <= 2 s)")
                # A workspace of its own, so that the first notebook's tab is not restored in
                # front of the playground (then "run all" would run that one).
                page.goto(f"http://127.0.0.1:{port}/lab/workspaces/playground/tree/"
                          "playground.ipynb?token=bench&reset")
                page.wait_for_function(OPEN, arg="playground.ipynb", timeout=120_000)
                _wait(page, IDLE, 120)
                page.evaluate("() => { window.jupyterapp.commands.execute("
                              "'notebook:run-all-cells'); }")
                source = playground.read_text(encoding="utf-8")
                n = len(re.findall(r"\b(?:\w+_explorer|rope_calculator)\(", source))
                try:
                    drawn = _wait(page, f"() => ({PLOTS})() >= {n}", 300)
                except PlaywrightTimeout:
                    count = page.evaluate(PLOTS)
                    print(f"playground: only {count} of {n} explorers drawn after 300 s")
                else:
                    print(f"playground: run all to all {n} explorers drawn {drawn:5.1f} s")
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> None:
    if "--lab" in sys.argv:
        lab()
        return
    paths = [Path(p) for p in sys.argv[1:]] or [
        md.with_suffix(".ipynb") for md in notebook_chapters()
    ]
    print(f"{'notebook':40s} {'executed':>9s} {'largest model':>14s} {'run':>6s}")
    for path in paths:
        size, largest, seconds = execute(path.resolve())
        print(f"{path.name:40s} {size / 1e6:7.2f}MB {largest / 1e6:12.2f}MB {seconds:5.1f}s")


if __name__ == "__main__":
    main()
