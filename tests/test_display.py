"""The single switch between live widgets and static figures."""

from __future__ import annotations

import base64
import json
import re

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given

from posenc_lib import display


def _figure() -> go.Figure:
    return go.Figure(go.Scatter(x=[0, 1, 2], y=[1.0, 0.5, 0.25]))


def test_static_mode_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(display.STATIC_ENV_VAR, raising=False)
    assert not display.static_mode()
    for value in ("1", "true", "YES"):
        monkeypatch.setenv(display.STATIC_ENV_VAR, value)
        assert display.static_mode()
    monkeypatch.setenv(display.STATIC_ENV_VAR, "0")
    assert not display.static_mode()


def test_static_figure_is_html_that_uses_the_page_plotly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(display.STATIC_ENV_VAR, "1")
    shown = display.show(_figure())
    assert isinstance(shown, display.StaticFigure)
    bundle = shown._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}  # no plotly mime type for myst-nb to drop
    html = bundle["text/html"]
    assert "plotly-graph-div" in html and display.FIGURE_DATA_ATTR in html
    assert "<script src" not in html and "cdn" not in html.lower()  # plotly.js is not embedded
    # Nothing executes: the figure is JSON that the page's figures.js draws.
    (div_id,) = re.findall(r'<div id="([^"]+)" class="plotly-graph-div"', html)
    payload = re.search(
        rf'<script type="application/json" {display.FIGURE_DATA_ATTR}="{div_id}">(.*)</script>',
        html, re.S,
    )
    assert payload is not None
    figure = json.loads(payload.group(1))
    assert set(figure) >= {"data", "layout", "config"}


def test_static_figure_json_cannot_close_its_script_or_carry_nan() -> None:
    fig = go.Figure(go.Scatter(x=[0, 1], y=[float("nan"), 1.0], name="</script><b>x"))
    html = display.StaticFigure(fig).to_html()
    assert html.count("</script>") == 1 and "NaN" not in html
    text = html[html.index(">{") + 1 : html.rindex("</script>")]
    assert json.loads(text)["data"][0]["y"] == [None, 1.0]


def test_live_mode_returns_a_notebook_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(display.STATIC_ENV_VAR, raising=False)
    fig = _figure()
    shown = display.show(fig)
    assert isinstance(shown, display.NotebookFigure) and shown.figure is fig


def test_notebook_figure_draws_in_every_front_end(monkeypatch: pytest.MonkeyPatch) -> None:
    # plotly's own mime type (JupyterLab, VS Code) and a self-drawing text/html (Colab, a plain
    # notebook): plotly.js inline in the kernel's first figure only, the CDN as a last resort.
    monkeypatch.setattr(display.NotebookFigure, "library_sent", False)
    source, version = display.plotly_bundle()
    first = display.NotebookFigure(_figure())._repr_mimebundle_()
    second = display.NotebookFigure(_figure())._repr_mimebundle_()
    for bundle in (first, second):
        assert bundle["application/vnd.plotly.v1+json"]["data"][0]["y"] == [1, 0.5, 0.25]
        assert "Plotly.newPlot(el, figure.data" in bundle["text/html"]
        assert f'"https://cdn.plot.ly/plotly-{version}.min.js"' in bundle["text/html"]
        assert bundle["text/html"].count("</script>") == 1  # nothing inside closes it early
    assert len(first["text/html"]) > len(source) > 10 * len(second["text/html"])
    assert "source = null;" in second["text/html"]
    assert version == re.search(r"plotly\.js v([\d.]+)", source[:300]).group(1)  # type: ignore[union-attr]


@pytest.mark.browser
def test_notebook_figures_draw_in_chromium(tmp_path: pytest.TempPathFactory) -> None:
    # Two figures in one page, as a notebook front-end shows them: the first brings plotly.js,
    # the second reuses it; both draw (no network: the CDN is never needed here).
    import shutil
    import subprocess
    from pathlib import Path

    display.NotebookFigure.library_sent = False
    html = "".join(display.NotebookFigure(_figure())._repr_mimebundle_()["text/html"]
                   for _ in range(2))
    page = Path(str(tmp_path)) / "figures.html"
    page.write_text(f"<!doctype html><html><body>{html}</body></html>", encoding="utf-8")
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    result = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
         "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=False,
    )
    drawn = re.findall(r'<div id="fig-[0-9a-f]+" class="plotly-graph-div[^"]*js-plotly-plot',
                       result.stdout)
    assert len(drawn) == 2, result.stdout[-2000:]


def test_explorer_builds_only_what_the_mode_needs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def static() -> go.Figure:
        calls.append("static")
        return _figure()

    def live() -> str:
        calls.append("live")
        return "widget"

    monkeypatch.setenv(display.STATIC_ENV_VAR, "1")
    assert isinstance(display.explorer(static, live), display.StaticFigure)
    monkeypatch.delenv(display.STATIC_ENV_VAR)
    assert display.explorer(static, live) == "widget"
    assert calls == ["static", "live"]


def test_static_figure_rejects_non_figures() -> None:
    with pytest.raises(TypeError, match="figure"):
        display.StaticFigure({"data": []})  # type: ignore[arg-type]


# Compact figure JSON: what the page carries is the figure to the eye, in fewer bytes.
finite_floats = st.floats(allow_nan=False, allow_infinity=False, width=64)


@given(finite_floats)
def test_compact_keeps_six_significant_digits(value: float) -> None:
    packed = display.compact(value)
    if value.is_integer() and abs(value) < 2**53:  # whole numbers (positions…) stay exact
        assert type(packed) is int and packed == value
        return
    assert isinstance(packed, float)
    assert abs(packed - value) <= 5e-6 * abs(value)
    mantissa = repr(packed).lstrip("-").split("e")[0].replace(".", "").strip("0")
    assert len(mantissa) <= display.SIGNIFICANT_DIGITS, repr(packed)


def test_compact_leaves_everything_but_floats_alone() -> None:
    value = {"a": [1, True, "0.123456789", None], "b": (2.0, np.int64(7)), "c": np.float32(0.5)}
    packed = display.compact(value)
    assert packed == {"a": [1, True, "0.123456789", None], "b": [2, 7], "c": 0.5}
    assert packed["a"][1] is True and type(packed["b"][0]) is int  # "2", not "2.0", in JSON
    assert display.compact(float("nan")) != display.compact(float("nan"))  # NaN stays NaN
    assert display.compact(float("inf")) == float("inf")
    assert display.compact(np.array([[1 / 3, 2.5]])) == [[0.333333, 2.5]]


def _binary(values: np.ndarray) -> dict[str, str]:
    return {"dtype": "f8", "bdata": base64.b64encode(values.astype("<f8").tobytes()).decode()}


def _decoded(spec: dict[str, str]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(spec["bdata"]), dtype="<" + spec["dtype"])


@given(hnp.arrays(np.float64, st.integers(0, 50), elements=st.floats(-1e30, 1e30, width=64)))
def test_binary_float64_arrays_go_out_as_float32(values: np.ndarray) -> None:
    packed = display.compact({"x": _binary(values)})["x"]
    tiny = values[(values != 0) & (np.abs(values) < np.finfo(np.float32).tiny)]
    if tiny.size:  # float32 would lose these exponents: the array stays float64, bit for bit
        assert packed == _binary(values)
        return
    assert packed["dtype"] == "f4"
    decoded = _decoded(packed)
    assert decoded.shape == values.shape
    np.testing.assert_allclose(decoded, values, rtol=np.finfo(np.float32).eps, atol=0)


def test_binary_arrays_that_overflow_float32_stay_float64_and_gaps_stay_gaps() -> None:
    big = np.array([1.0, 1e300])
    assert display.compact(_binary(big)) == _binary(big)
    gaps = display.compact(_binary(np.array([np.nan, 1.0, np.inf])))
    decoded = _decoded(gaps)
    assert gaps["dtype"] == "f4"
    assert np.isnan(decoded[0]) and decoded[1] == 1 and np.isinf(decoded[2])


def test_figure_json_is_smaller_and_draws_the_same_numbers() -> None:
    x = np.linspace(0, 1, 2000)
    fig = go.Figure(go.Scatter(x=x, y=np.sin(40 * x)))
    fig.update_layout(sliders=[{"steps": [{"args": [{"y": [np.cos(40 * x).tolist()]}]}]}])
    text = display.figure_json(fig)
    plain = fig.to_json()
    assert len(text) < 0.6 * len(plain), (len(text), len(plain))
    assert "\\u002f" not in text  # base64's "/" is not inflated to six characters
    payload = json.loads(text)
    drawn_y = _decoded(payload["data"][0]["y"])
    np.testing.assert_allclose(drawn_y, np.sin(40 * x), rtol=1e-6, atol=1e-7)
    step_y = payload["layout"]["sliders"][0]["steps"][0]["args"][0]["y"][0]
    np.testing.assert_allclose(step_y, np.cos(40 * x), rtol=5e-6, atol=0)
