"""The reader who runs the book: live explorers in a real JupyterLab, driven by Debian's chromium.

A notebook with explorers is executed in JupyterLab (served on 127.0.0.1, every other request
blocked). Each explorer must render its plotly FigureWidget through anywidget, and moving one of
its ipywidgets sliders with the keyboard must round-trip through the kernel and redraw the figure.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
JUPYTER = Path(sys.executable).with_name("jupyter")
TOKEN = "posenc-live-test"
# (explorer call, index of the slider to move within that explorer's controls)
EXPLORERS = [
    ("heatmap_explorer(seq_len=32, dim=16)", 1),
    ("decay_explorer(dim=64)", 1),
    ("euler_explorer(theta=1.0, n_terms=4)", 0),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _write_notebook(folder: Path) -> None:
    cells = [
        {
            "cell_type": "code",
            "execution_count": None,
            "id": f"explorer-{i}",
            "metadata": {},
            "outputs": [],
            "source": [f"from posenc_lib.widgets import *\n{call}"],
        }
        for i, (call, _) in enumerate(EXPLORERS)
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


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("live")
    _write_notebook(folder)
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "POSENC_STATIC"}  # live mode
    log = (folder / "server.log").open("w")
    server = subprocess.Popen(
        [
            str(JUPYTER), "lab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
            f"--port={port}", f"--IdentityProvider.token={TOKEN}",
            f"--ServerApp.root_dir={folder}", "--LabApp.expose_app_in_browser=True",
        ],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), 0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"JupyterLab did not start: {(folder / 'server.log').read_text()}")
                time.sleep(0.5)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


def test_live_explorers_render_and_recompute_on_a_slider_move(lab: str) -> None:
    from playwright.sync_api import sync_playwright

    external: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1300, "height": 1000})

        def route(route: object) -> None:
            url = route.request.url  # type: ignore[attr-defined]
            if url.startswith(lab) or url.startswith(("data:", "blob:", "ws://127.0.0.1")):
                route.continue_()  # type: ignore[attr-defined]
            else:
                external.append(url)
                route.abort()  # type: ignore[attr-defined]

        page.route("**/*", route)
        page.goto(f"{lab}/lab/tree/live.ipynb?token={TOKEN}")
        page.wait_for_function(
            "() => window.jupyterapp && document.querySelector('.jp-Notebook')", timeout=90_000
        )
        page.wait_for_timeout(1500)  # let the kernel connect
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
        outputs = page.locator(".jp-Cell-outputArea")
        page.wait_for_function(
            f"() => document.querySelectorAll('.jp-Cell-outputArea .js-plotly-plot').length"
            f" >= {len(EXPLORERS)}",
            timeout=120_000,
        )
        for index, (call, slider_index) in enumerate(EXPLORERS):
            output = outputs.nth(index)
            output.scroll_into_view_if_needed()
            plot = output.locator(".js-plotly-plot").first
            page.wait_for_timeout(500)
            before = plot.screenshot()
            readout = output.locator(".widget-readout").nth(slider_index)
            value_before = readout.inner_text()
            output.locator(".noUi-handle").nth(slider_index).focus()
            for _ in range(5):
                page.keyboard.press("ArrowRight")
            # The kernel recomputes and the FigureWidget redraws: wait for the pixels to change.
            deadline = time.monotonic() + 20
            while plot.screenshot() == before:
                assert time.monotonic() < deadline, f"{call}: the figure did not redraw"
                page.wait_for_timeout(250)
            assert readout.inner_text() != value_before, f"{call}: the slider did not move"
        browser.close()
    assert external == [], f"requests leaving the machine: {external[:5]}"
