"""The reader who runs the book: every live explorer in a real JupyterLab, in Debian's chromium.

A notebook calling every explorer of ``posenc_lib.widgets`` at its default sizes is executed in
JupyterLab (served on 127.0.0.1, every other request blocked). Each explorer must draw its plotly
figure, and moving its first slider with the keyboard must round-trip through the kernel and redraw
the figure. Warnings are errors in that kernel, and any stderr output in the notebook, or a
traceback in the kernel's log, fails the test.

Every wait is bounded and says what it waited for: a busy machine makes the test slow, never hung.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from posenc_lib import widgets as Wd

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
JUPYTER = Path(sys.executable).with_name("jupyter")
ROOT = Path(__file__).resolve().parent.parent
# The project's JupyterLab settings, as `make live` passes them.
JUPYTER_CONFIG = ROOT / "jupyter_config"
# A chapter opened, run and saved as a reader would during `make live`.
CHAPTER = ROOT / "chapters" / "preface.md"
TOKEN = "posenc-live-test"
# Every explorer a chapter can call: the public callables that are not the ``*_live`` builders.
# ``config_checker`` is a text tool (a pasted config.json in, a report out): no figure, no slider.
NOT_EXPLORERS = {"LiveExplorer", "config_checker"}
EXPLORERS = sorted(
    name for name in Wd.__all__ if not name.endswith("_live") and name not in NOT_EXPLORERS
)
SETUP = "import warnings\nwarnings.simplefilter('error')\nfrom posenc_lib import widgets as Wd"
# Generous for 2 busy cores; a slower step is a failure that names what it waited for.
LAB_START_S = 120
KERNEL_S = 120
RUN_ALL_S = 300
REDRAW_S = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_notebook(folder: Path) -> None:
    sources = [SETUP, *(f"Wd.{name}()" for name in EXPLORERS)]
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": f"cell-{i}",
            "metadata": {},
            "outputs": [],
            "source": source,
        }
        for i, source in enumerate(sources)
    ]
    notebook = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (folder / "live.ipynb").write_text(json.dumps(notebook), encoding="utf-8")


def _poll(
    check: Callable[[], object], seconds: float, what: str, context: Callable[[], str]
) -> None:
    """Wait until ``check()`` is truthy, at most ``seconds``; else fail saying what was awaited."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {seconds:.0f} s for {what}; {context()}")
        time.sleep(0.25)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    folder = tmp_path_factory.mktemp("live")
    _write_notebook(folder)
    for twin in (CHAPTER, CHAPTER.with_suffix(".ipynb")):
        shutil.copyfile(twin, folder / twin.name)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "POSENC_STATIC"}  # live mode
    env["JUPYTER_CONFIG_PATH"] = str(JUPYTER_CONFIG)  # as `make live` does
    log_path = folder / "server.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [
            str(JUPYTER), "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
            f"--port={port}", f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={folder}", "--LabApp.expose_app_in_browser=True",
            f"--LabApp.workspaces_dir={folder / 'workspaces'}",  # no state kept between pages
        ],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )

    def up() -> bool:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited: {log_path.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return True
        except OSError:
            return False

    try:
        _poll(up, LAB_START_S, "JupyterLab to listen", lambda: log_path.read_text()[-2000:])
        yield f"http://127.0.0.1:{port}", log_path
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=20)
        log.close()


# JavaScript state probes: each returns at once (no promise is awaited).
LAB_READY = "() => !!(window.jupyterapp && document.querySelector('.jp-Notebook'))"
KERNEL_IDLE = (
    "() => { const w = window.jupyterapp.shell.currentWidget;"
    " const k = w && w.sessionContext && w.sessionContext.session"
    " && w.sessionContext.session.kernel;"
    " return !!k && k.connectionStatus === 'connected' && k.status === 'idle'; }"
)
RUN_ALL = "() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); return true; }"
N_PLOTS = "() => document.querySelectorAll('.jp-Cell-outputArea .js-plotly-plot').length"
STDERR = (
    "() => Array.from(document.querySelectorAll("
    "'.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.stderr\"]'))"
    ".map(e => e.innerText.slice(0, 500))"
)
EXECUTION_COUNTS = (
    "() => Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'))"
    ".map(e => e.innerText.trim())"
)


def test_every_live_explorer_renders_and_recomputes_on_a_slider_move(
    lab: tuple[str, Path],
) -> None:
    from playwright.sync_api import sync_playwright

    url, log_path = lab
    external: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 1000})
            page.set_default_timeout(60_000)  # no Playwright call may wait forever

            def route(route: object) -> None:
                request_url = route.request.url  # type: ignore[attr-defined]
                if request_url.startswith((url, "data:", "blob:", "ws://127.0.0.1")):
                    route.continue_()  # type: ignore[attr-defined]
                else:
                    external.append(request_url)
                    route.abort()  # type: ignore[attr-defined]

            page.route("**/*", route)
            page.goto(f"{url}/lab/tree/live.ipynb?reset&token={TOKEN}")  # no restored tabs

            def js(expression: str) -> Callable[[], object]:
                return lambda: page.evaluate(expression)

            def state() -> str:
                return (
                    f"prompts {page.evaluate(EXECUTION_COUNTS)}, "
                    f"plots drawn {page.evaluate(N_PLOTS)} of {len(EXPLORERS)}, "
                    f"stderr {page.evaluate(STDERR)}, "
                    f"server log tail: {log_path.read_text()[-1500:]}"
                )

            _poll(js(LAB_READY), LAB_START_S, "JupyterLab to open the notebook", lambda: "")
            _poll(js(KERNEL_IDLE), KERNEL_S, "the kernel to connect and be idle", state)
            page.evaluate(RUN_ALL)  # fire and forget: progress is polled below
            _poll(  # stops early on stderr, which fails just below
                lambda: page.evaluate(N_PLOTS) >= len(EXPLORERS) or page.evaluate(STDERR),
                RUN_ALL_S,
                f"all {len(EXPLORERS)} explorers to draw after run-all",
                state,
            )
            _poll(js(KERNEL_IDLE), KERNEL_S, "the kernel to finish run-all", state)
            assert page.evaluate(STDERR) == [], f"stderr in the notebook: {page.evaluate(STDERR)}"

            cells = page.locator(".jp-CodeCell")
            for index, name in enumerate(EXPLORERS, start=1):
                output = cells.nth(index).locator(".jp-Cell-outputArea")
                output.scroll_into_view_if_needed()
                plot = output.locator(".js-plotly-plot").first
                page.wait_for_timeout(300)
                before = plot.screenshot()
                readout = output.locator(".widget-readout").first
                value_before = readout.inner_text()
                output.locator(".noUi-handle").first.focus()
                for _ in range(5):
                    page.keyboard.press("ArrowRight")
                # The kernel recomputes and the figure redraws: wait for the pixels to change.
                _poll(
                    lambda plot=plot, before=before: plot.screenshot() != before,
                    REDRAW_S,
                    f"{name}: the figure to redraw after a slider move",
                    state,
                )
                assert readout.inner_text() != value_before, f"{name}: the slider did not move"
            _poll(js(KERNEL_IDLE), KERNEL_S, "the kernel to be idle after the slider moves", state)
            assert page.evaluate(STDERR) == [], f"stderr in the notebook: {page.evaluate(STDERR)}"
        finally:
            browser.close()
    log = log_path.read_text()
    assert "Traceback" not in log, f"an error in the kernel or server: {log[-3000:]}"
    assert external == [], f"requests leaving the machine: {external[:5]}"


def _open_lab(pw: object, url: str) -> tuple[object, object]:
    browser = pw.chromium.launch(  # type: ignore[attr-defined]
        executable_path=CHROMIUM,
        args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
    )
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    page.set_default_timeout(60_000)
    return browser, page


ALL_RUN = (
    "() => { const w = window.jupyterapp.shell.currentWidget;"
    " if (!w || !w.content || !w.content.widgets) return false;"
    " const code = w.content.widgets.filter(c => c.model.type === 'code');"
    " return code.length > 0 && code.every(c => c.model.executionCount !== null); }"
)
VIEWER = (
    "() => { const w = window.jupyterapp.shell.currentWidget;"
    " return w ? (w.context && w.context.path) + ' ' + (w.content && w.content.constructor.name)"
    " + ' ' + !!w.node.querySelector('.jp-Notebook') : 'none'; }"
)


@pytest.mark.parametrize("name", [CHAPTER.name, CHAPTER.with_suffix(".ipynb").name])
def test_a_live_session_leaves_the_chapter_and_its_twin_as_committed(
    lab: tuple[str, Path], name: str
) -> None:
    """`make live`: a chapter opens as a notebook, runs, saves, and nothing committed changes."""
    from playwright.sync_api import sync_playwright

    url, log_path = lab
    folder = log_path.parent
    committed = {p.name: p.read_bytes() for p in (folder / CHAPTER.name,
                                                   folder / CHAPTER.with_suffix(".ipynb").name)}
    with sync_playwright() as pw:
        browser, page = _open_lab(pw, url)
        try:
            page.goto(f"{url}/lab/tree/{name}?reset&token={TOKEN}")  # no restored tabs

            def state() -> str:
                page.screenshot(path=str(folder / f"{name}.png"))
                return (
                    f"screenshot {folder / f'{name}.png'}; current widget: "
                    f"{page.evaluate(VIEWER)}; log: {log_path.read_text()[-1500:]}"
                )

            _poll(lambda: page.evaluate(LAB_READY), LAB_START_S,
                  f"{name} to open as a notebook (jupytext's viewer for .md)", state)
            _poll(lambda: page.evaluate(KERNEL_IDLE), KERNEL_S, "the kernel to be idle", state)
            page.evaluate(RUN_ALL)
            _poll(lambda: page.evaluate(ALL_RUN), RUN_ALL_S, f"every cell of {name} to run", state)
            _poll(lambda: page.evaluate(KERNEL_IDLE), KERNEL_S, "the kernel to finish", state)
            assert page.evaluate(STDERR) == [], f"stderr in {name}: {page.evaluate(STDERR)}"
            page.evaluate("() => { window.jupyterapp.commands.execute('docmanager:save'); }")
            _poll(lambda: f"Saving file at /{name}" in log_path.read_text(),
                  60, f"{name} to be saved", state)
            time.sleep(1)
        finally:
            browser.close()
    for file_name, before in committed.items():
        assert (folder / file_name).read_bytes() == before, f"saving {name} changed {file_name}"


# The Jupyter server as `make live` configures it, initialised but not started: what it prints.
SERVER_INIT = """
import warnings
warnings.simplefilter("default")
from jupyter_server.serverapp import ServerApp
app = ServerApp()
app.initialize(["--no-browser", "--port=0", "--allow-root", "--ServerApp.root_dir=chapters"])
print("pre_save_hook:", app.contents_manager.pre_save_hook.__name__)
"""


def test_the_live_server_keeps_twins_clean_without_a_warning() -> None:
    """jupyter_config's hook is installed, and `make live` no longer prints, twice, "Overriding
    existing pre_save_hook (keep_twin_output_free) with a new one (keep_twin_output_free)"."""
    env = {k: v for k, v in os.environ.items() if k != "POSENC_STATIC"}
    env["JUPYTER_CONFIG_PATH"] = str(JUPYTER_CONFIG)
    done = subprocess.run(
        [sys.executable, "-c", SERVER_INIT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "pre_save_hook: keep_twin_output_free" in done.stdout
    assert "pre_save_hook" not in done.stderr, done.stderr[-2000:]
