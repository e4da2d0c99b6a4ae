"""The single switch between live widgets and static figures."""

from __future__ import annotations

import json
import re

import plotly.graph_objects as go
import pytest

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


def test_live_mode_returns_the_figure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(display.STATIC_ENV_VAR, raising=False)
    fig = _figure()
    assert display.show(fig) is fig


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
