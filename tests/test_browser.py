"""The built book in a real browser: Debian's chromium, headless, with the network closed.

For every page: no console error, no request that leaves 127.0.0.1, math typeset by the local
MathJax, every plotly figure drawn, and moving a slider changes what is drawn. On a desktop
(1366 px) and on a phone (390×844, touch): no two text boxes of a figure overlap and none is cut
by its edge (tests/figure_boxes.js); on the phone no page is wider than the screen and a wide
equation scrolls in its own box with a cue. The sidebar toggles open the navigation (phone) and
collapse the sidebar (desktop); a swipe over a figure scrolls the page; figures follow the dark
theme; sliders and dropdown menus can be worked from the keyboard. Every wait is bounded: a hung
chromium fails.

What the reader sees, not the settings: in the dark theme every piece of figure text against the
pixels painted behind it (>= 4.5:1, tests/figure_contrast.js); an arrow key on every slider changes
the figure's data (gd.data), not only the knob, and on every dropdown menu its data or axes; at
390 px no table cell breaks inside a word or wraps in a crushed column, no inline formula is cut at
the edge, no figure has a blank band above its title or an axis title over another panel; search
highlights whole words on the result page only, and its snippets show the query with plain math.
"""

from __future__ import annotations

import base64
import functools
import http.server
import json
import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bookpages import HTML, ROOT, built_pages, require_build

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
# Every wait in this file is bounded by these (milliseconds).
TIMEOUT_MS = 30_000
DESKTOP = {"viewport": {"width": 1366, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True}
FIGURE_BOXES_JS = (Path(__file__).parent / "figure_boxes.js").read_text(encoding="utf-8")
FIGURE_CONTRAST_JS = (Path(__file__).parent / "figure_contrast.js").read_text(encoding="utf-8")
SCREENSHOTS = ROOT / "_build" / "screenshots"
PAGES = built_pages()
IDS = [p.relative_to(HTML).as_posix() for p in PAGES]
# Flags that keep chromium from phoning home on a closed network (each refused connection is noise).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--enable-unsafe-swiftshader",  # software WebGL, for 3-D plotly figures
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    require_build()
    handler = functools.partial(_QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: `make test` installs it with apt-get")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@dataclass
class PageVisit:
    console_errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    # Bytes of every response body (routing turns chromium's cache off: a cold visit).
    fetched: dict[str, int] = field(default_factory=dict)


# A cold visit read to the end (every figure drawn, so plotly.js fetched), uncompressed:
# a chapter at most 4.2 MB (benchmarks/pages.py prints the figures); the appendix pages 5 MB.
CHAPTER_TRANSFER_BYTES = 4_200_000
OTHER_TRANSFER_BYTES = 5_000_000


def _open(
    browser: object,
    base_url: str,
    page_path: Path,
    device: dict | None = None,
    theme: str | None = None,
) -> tuple[object, PageVisit]:
    context = browser.new_context(**(device or DESKTOP))  # type: ignore[attr-defined]
    context.set_default_timeout(TIMEOUT_MS)
    if theme is not None:  # the reader's stored choice, as the theme switch leaves it
        context.add_init_script(f"localStorage.setItem('mode', '{theme}')")  # type: ignore[attr-defined]
    page = context.new_page()
    visit = PageVisit()

    def route(route: object) -> None:
        url = route.request.url  # type: ignore[attr-defined]
        if url.startswith(base_url) or url.startswith("data:") or url.startswith("blob:"):
            route.continue_()  # type: ignore[attr-defined]
        else:
            visit.external_requests.append(url)
            route.abort()  # type: ignore[attr-defined]

    page.route("**/*", route)
    page.on("console", lambda m: m.type == "error" and visit.console_errors.append(m.text))
    page.on("pageerror", lambda e: visit.console_errors.append(f"uncaught: {e}"))
    page.on("requestfailed", lambda r: visit.failed_requests.append(r.url))
    page.on(
        "requestfinished",
        lambda r: visit.fetched.__setitem__(r.url, r.sizes()["responseBodySize"]),
    )
    # A missing file (a 404, e.g. /favicon.ico) is a failed request too.
    page.on("response", lambda r: r.status >= 400 and visit.failed_requests.append(r.url))
    url = f"{base_url}/{page_path.relative_to(HTML).as_posix()}"
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")  # late requests (icons, fonts) have been made
    return page, visit


def _wait_for_math(page: object) -> int:
    has_math = page.evaluate("document.querySelectorAll('.math, div.math, span.math').length")
    if has_math:
        page.wait_for_selector("mjx-container", state="attached", timeout=20_000)
    return int(page.evaluate("document.querySelectorAll('mjx-container').length"))


# Drawn, and fitted to the screen by figures.js (data-fitted is set last).
DRAWN = (
    "gd => !!(gd._fullLayout && gd.querySelector('.main-svg') && gd.getAttribute('data-fitted'))"
)


def _wait_for_figures(page: object) -> int:
    """Scroll to every figure (each is drawn when it nears the viewport) and wait until drawn."""
    figures = page.locator(".plotly-graph-div")  # type: ignore[attr-defined]
    count = int(figures.count())
    for index in range(count):
        figure = figures.nth(index)
        figure.scroll_into_view_if_needed()
        page.wait_for_function(DRAWN, arg=figure.element_handle(), timeout=30_000)  # type: ignore[attr-defined]
    page.evaluate("window.scrollTo(0, 0)")  # type: ignore[attr-defined]
    return count


def _move_slider(page: object, figure_index: int, slider_index: int) -> bool:
    """Click along one slider's rail; True if the slider moved and the drawing changed."""
    figure = page.locator(".plotly-graph-div").nth(figure_index)
    figure.scroll_into_view_if_needed()
    handle = figure.element_handle()
    active = f"gd => gd._fullLayout.sliders[{slider_index}].active"
    active_before = page.evaluate(active, handle)
    box = figure.locator(".slider-group").nth(slider_index).locator(".slider-rail-rect")
    box = box.bounding_box()
    assert box is not None, "slider rail not drawn"
    before = figure.screenshot()
    # Click near the far end of the rail, or near its start if the slider already sits at the end.
    n_steps = page.evaluate(f"gd => gd._fullLayout.sliders[{slider_index}].steps.length", handle)
    fraction = 0.2 if active_before >= n_steps / 2 else 0.85
    page.mouse.click(box["x"] + box["width"] * fraction, box["y"] + box["height"] / 2)
    page.wait_for_timeout(400)
    active_after = page.evaluate(active, handle)
    after = figure.screenshot()
    return active_after != active_before and after != before


def _use_menu(page: object, figure_index: int) -> bool:
    """Pick another entry of the figure's first dropdown menu; True if the drawing changed."""
    figure = page.locator(".plotly-graph-div").nth(figure_index)
    figure.scroll_into_view_if_needed()
    before = figure.screenshot()
    header = figure.locator(".updatemenu-header").first
    header.click()
    page.wait_for_timeout(200)
    buttons = figure.locator(".updatemenu-dropdown-button")
    assert buttons.count() >= 2, "a dropdown menu with fewer than two entries"
    active = page.evaluate("gd => gd._fullLayout.updatemenus[0].active", figure.element_handle())
    buttons.nth(1 if active != 1 else 0).click()
    page.wait_for_timeout(400)
    return figure.screenshot() != before


@pytest.mark.parametrize("page_path", PAGES, ids=IDS)
def test_page_renders_offline_without_errors(
    browser: object, base_url: str, page_path: Path
) -> None:
    page, visit = _open(browser, base_url, page_path)
    try:
        _wait_for_math(page)
        _wait_for_figures(page)
        page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
        page.wait_for_timeout(300)  # let late console errors surface
        budget = OTHER_TRANSFER_BYTES if "appendix" in page_path.parts else CHAPTER_TRANSFER_BYTES
        total = sum(visit.fetched.values())
        largest = sorted(visit.fetched.items(), key=lambda item: -item[1])[:4]
        assert total <= budget, f"{total} bytes fetched read through; largest: {largest}"
        assert visit.external_requests == [], f"requests off the machine: {visit.external_requests}"
        assert visit.failed_requests == [], f"failed requests: {visit.failed_requests}"
        assert visit.console_errors == [], f"console errors: {visit.console_errors}"
        # At 1366 px: no two text boxes of a figure overlap, none is cut by its edge.
        assert _figure_problems(page) == [], "figures whose text collides on a desktop"
    finally:
        page.context.close()


@pytest.mark.parametrize("page_path", PAGES, ids=IDS)
def test_math_is_typeset_and_figures_respond_to_sliders(
    browser: object, base_url: str, page_path: Path
) -> None:
    page, visit = _open(browser, base_url, page_path)
    try:
        source = page_path.read_text(encoding="utf-8")
        typeset = _wait_for_math(page)
        if 'class="math' in source:
            assert typeset > 0, "math present but not typeset by MathJax"
        figures = _wait_for_figures(page)
        assert figures == source.count('class="plotly-graph-div"')
        if page_path.name == "preface.html":
            # The README's pictures: the top of the preface, and its first figure.
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "preface.png"), full_page=False)
            page.locator(".plotly-graph-div").first.screenshot(
                path=str(SCREENSHOTS / "preface-figure.png")
            )
        slider_counts = page.evaluate(
            "Array.from(document.querySelectorAll('.plotly-graph-div'))"
            ".map(gd => (gd._fullLayout.sliders || []).length)"
        )
        for figure_index, n_sliders in enumerate(slider_counts):
            for slider_index in range(n_sliders):
                assert _move_slider(page, figure_index, slider_index), (
                    f"figure {figure_index}, slider {slider_index}: the drawing did not change"
                )
        menu_figures = page.evaluate(
            "Array.from(document.querySelectorAll('.plotly-graph-div'))"
            ".map((gd, i) => (gd._fullLayout.updatemenus || []).some(m => m.type !== 'buttons')"
            " ? i : -1).filter(i => i >= 0)"
        )
        for figure_index in menu_figures:
            assert _use_menu(page, figure_index), f"figure {figure_index}: menu changed nothing"
        assert visit.console_errors == [], f"console errors on interaction: {visit.console_errors}"
    finally:
        page.context.close()


def test_figures_below_the_fold_wait_until_scrolled_to(browser: object, base_url: str) -> None:
    # The playground has figures far down the page: loaded, they are not drawn until scrolled to.
    page_path = HTML / "chapters" / "appendix" / "playground.html"
    page, visit = _open(browser, base_url, page_path)
    try:
        drawn = page.evaluate(  # type: ignore[attr-defined]
            f"Array.from(document.querySelectorAll('.plotly-graph-div')).map({DRAWN})"
        )
        assert len(drawn) >= 3 and not drawn[-1], f"drawn before scrolling: {drawn}"
        last = page.locator(".plotly-graph-div").last  # type: ignore[attr-defined]
        last.scroll_into_view_if_needed()
        page.wait_for_function(DRAWN, arg=last.element_handle(), timeout=30_000)  # type: ignore[attr-defined]
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


def test_search_from_a_chapter_finds_the_chapters(browser: object, base_url: str) -> None:
    # Chapter pages no longer load the search index; their search box must still find things.
    page, visit = _open(browser, base_url, HTML / "chapters" / "07_alibi.html")
    try:
        page.keyboard.press("Control+k")  # type: ignore[attr-defined]
        field = page.locator("form.bd-search input[name='q']:visible").first  # type: ignore[attr-defined]
        field.fill("rotary")
        field.press("Enter")
        page.wait_for_url("**/search.html?q=rotary*", timeout=20_000)  # type: ignore[attr-defined]
        # Results are appended one by one; the summary says when the search has finished.
        summary = page.locator("#search-results .search-summary")  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            "el => /found [1-9]/.test(el.innerText)",
            arg=summary.element_handle(timeout=30_000),
            timeout=30_000,
        )
        results = page.locator("#search-results ul.search li")  # type: ignore[attr-defined]
        titles = " ".join(results.all_inner_texts())
        assert "RoPE" in titles, titles[:300]
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


# --- the phone reader (390×844, touch) and the desktop reader's controls ----------------------


def _figure_problems(page: object) -> list[str]:
    """Every figure's text-box problems (tests/figure_boxes.js), one line per figure."""
    figures = page.evaluate(FIGURE_BOXES_JS)  # type: ignore[attr-defined]
    return [
        f"figure {f['index']} ({f['title'][:60]!r}): " + "; ".join(f["problems"][:6])
        for f in figures
        if f["problems"]
    ]


# The page's width; each display equation's [scrollWidth, clientWidth, overflow-x, background].
PAGE_WIDTH_JS = "[document.documentElement.scrollWidth, window.innerWidth]"
EQUATIONS_JS = """Array.from(document.querySelectorAll('div.math mjx-container')).map(el => {
  const style = getComputedStyle(el);
  const box = el.getBoundingClientRect();
  return [el.scrollWidth, el.clientWidth, style.overflowX, style.backgroundImage, box.right];
})"""


# Inline math past the screen's right edge that does not scroll in its own box: [TeX, right].
INLINE_MATH_CUT_JS = """() => Array.from(
  document.querySelectorAll('.bd-article mjx-container:not([display="true"])')).filter(el => {
  if (el.closest('.pst-scrollable-table-container, details:not([open]), .cell_output')) {
    return false;
  }
  const r = el.getBoundingClientRect();
  const scrolls = ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  return r.width > 0 && r.right > innerWidth + 1 && !scrolls;
}).map(el => {
  const item = MathJax.startup.document.getMathItemsWithin(el)[0];
  return [item ? item.math.slice(0, 60) : '?', Math.round(el.getBoundingClientRect().right)];
})"""


# On a phone: a figure's title at its top (no blank band above it), and no axis title over the
# plot area of another panel (a side panel's y-axis title over its neighbour's data).
PHONE_FIGURE_GLITCHES_JS = """() => Array.from(document.querySelectorAll('.plotly-graph-div'))
  .flatMap((gd, index) => {
  const frame = gd.getBoundingClientRect();
  const problems = [];
  const title = gd.querySelector('.infolayer .g-gtitle text');
  if (title && title.textContent.trim()) {
    const gap = title.getBoundingClientRect().top - frame.top;
    if (gap > 24) problems.push(`figure ${index}: ${Math.round(gap)} px blank above the title`);
  }
  const areas = Array.from(gd.querySelectorAll('.draglayer .nsewdrag')).map(el => {
    const r = el.getBoundingClientRect();
    const sub = el.parentNode.getAttribute('class').split(' ').find(c => /^x\\d*y\\d*$/.test(c));
    return { sub, x0: r.left, x1: r.right, y0: r.top, y1: r.bottom };
  });
  gd.querySelectorAll('.infolayer > g[class^="g-y"][class$="title"] text').forEach(t => {
    const r = t.getBoundingClientRect();
    if (r.width < 1 || !t.textContent.trim()) return;
    const axis = t.parentNode.getAttribute('class').replace(/^g-|title$/g, '');
    areas.forEach(a => {
      const own = a.sub && a.sub.endsWith(axis) && a.sub.slice(a.sub.indexOf('y')) === axis;
      const w = Math.min(r.right, a.x1) - Math.max(r.left, a.x0);
      const h = Math.min(r.bottom, a.y1) - Math.max(r.top, a.y0);
      if (!own && w > 2 && h > 2) {
        problems.push(`figure ${index}: ${axis} title over the plot of ${a.sub}`);
      }
    });
  });
  return problems;
})"""


@pytest.mark.parametrize("page_path", PAGES, ids=IDS)
def test_phone_page_fits_the_screen_and_its_figures_do_not_overlap(
    browser: object, base_url: str, page_path: Path
) -> None:
    page, visit = _open(browser, base_url, page_path, PHONE)
    try:
        _wait_for_math(page)
        _wait_for_figures(page)
        scroll_width, inner_width = page.evaluate(PAGE_WIDTH_JS)  # type: ignore[attr-defined]
        assert scroll_width <= inner_width, f"{scroll_width} px wide on a {inner_width} px screen"
        for scroll, client, overflow, background, right in page.evaluate(EQUATIONS_JS):  # type: ignore[attr-defined]
            assert right <= inner_width + 1, f"an equation's box ends at {right} px"
            if scroll > client + 1:  # wider than its box: it scrolls there, and shows it does
                assert overflow in ("auto", "scroll"), overflow
                assert "gradient" in background, "a wide equation without a scroll cue"
        assert page.evaluate(INLINE_MATH_CUT_JS) == [], "inline math cut at the screen's edge"  # type: ignore[attr-defined]
        assert _figure_problems(page) == [], "figures whose text collides on a phone"
        assert page.evaluate(PHONE_FIGURE_GLITCHES_JS) == []  # type: ignore[attr-defined]
        assert visit.console_errors == [], f"console errors: {visit.console_errors}"
    finally:
        page.context.close()  # type: ignore[attr-defined]


FIGURE_IDS = re.compile(r'data-plotly-figure="(fig-[0-9a-f]+)"')


def _first_page_with(marker: str) -> Path:
    """The first built page with a figure whose JSON (in _figures/<id>.js) contains ``marker``."""
    for page_path in PAGES:
        if not page_path.exists():
            continue
        for figure_id in FIGURE_IDS.findall(page_path.read_text(encoding="utf-8")):
            data = HTML / "_figures" / f"{figure_id}.js"
            if data.exists() and marker in data.read_text(encoding="utf-8"):
                return page_path
    pytest.fail(f"no built page has a figure with {marker!r}")


def _a_chapter() -> Path:
    return _first_page_with('"layout"')


def test_phone_navigation_toggles_open_their_drawers(browser: object, base_url: str) -> None:
    page, visit = _open(browser, base_url, _a_chapter(), PHONE)
    try:
        for kind, dialog_id in (
            ("primary", "pst-primary-sidebar-modal"),
            ("secondary", "pst-secondary-sidebar-modal"),
        ):
            toggle = page.locator(f".{kind}-toggle:visible").first  # type: ignore[attr-defined]
            toggle.tap()
            dialog = page.locator(f"#{dialog_id}")  # type: ignore[attr-defined]
            page.wait_for_function(  # type: ignore[attr-defined]
                "el => el.open", arg=dialog.element_handle(), timeout=5_000
            )
            links = dialog.locator("a:visible")
            assert links.count() >= 3, f"the {kind} drawer opened with {links.count()} links"
            page.keyboard.press("Escape")  # type: ignore[attr-defined]
            page.wait_for_function("el => !el.open", arg=dialog.element_handle(), timeout=5_000)  # type: ignore[attr-defined]
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


def test_desktop_hamburger_collapses_and_restores_the_sidebar(
    browser: object, base_url: str
) -> None:
    page, visit = _open(browser, base_url, _a_chapter(), DESKTOP)
    try:
        sidebar = page.locator("#pst-primary-sidebar")  # type: ignore[attr-defined]
        hidden = "el => getComputedStyle(el).visibility === 'hidden'"
        assert not page.evaluate(hidden, sidebar.element_handle())  # type: ignore[attr-defined]
        toggle = page.locator(".primary-toggle:visible").first  # type: ignore[attr-defined]
        toggle.click()
        page.wait_for_function(hidden, arg=sidebar.element_handle(), timeout=5_000)  # type: ignore[attr-defined]
        toggle.click()
        page.wait_for_function(  # type: ignore[attr-defined]
            f"el => !({hidden})(el)", arg=sidebar.element_handle(), timeout=5_000
        )
        assert not page.locator("dialog[open]").count()  # type: ignore[attr-defined]
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


RANGES_JS = """gd => Object.keys(gd._fullLayout).filter(k => /^[xy]axis\\d*$/.test(k))
  .map(k => gd._fullLayout[k].range.map(Number))"""


def test_a_swipe_over_a_figure_scrolls_the_page(browser: object, base_url: str) -> None:
    page, visit = _open(browser, base_url, _first_page_with('"xaxis"'), PHONE)
    try:
        _wait_for_figures(page)
        figures = page.locator(".plotly-graph-div")  # type: ignore[attr-defined]
        index = page.evaluate(  # type: ignore[attr-defined]
            "Array.from(document.querySelectorAll('.plotly-graph-div'))"
            ".findIndex(gd => gd._fullLayout.xaxis && !gd._fullLayout.scene)"
        )
        assert index >= 0, "no 2-D figure on the page"
        figure = figures.nth(index)
        handle = figure.element_handle()
        page.evaluate(  # type: ignore[attr-defined]
            "gd => window.scrollTo(0, gd.getBoundingClientRect().top + scrollY - 150)", handle
        )
        page.wait_for_timeout(200)  # type: ignore[attr-defined]
        plot = figure.locator(".nsewdrag").first.bounding_box()
        assert plot is not None
        x, y = plot["x"] + plot["width"] / 2, plot["y"] + plot["height"] * 0.8
        before = page.evaluate("window.scrollY")  # type: ignore[attr-defined]
        ranges = page.evaluate(RANGES_JS, handle)  # type: ignore[attr-defined]
        cdp = page.context.new_cdp_session(page)  # type: ignore[attr-defined]
        cdp.send(
            "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]}
        )
        for step in range(1, 11):  # an upward swipe of 250 px
            cdp.send(
                "Input.dispatchTouchEvent",
                {"type": "touchMove", "touchPoints": [{"x": x, "y": y - 25 * step}]},
            )
        cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        page.wait_for_timeout(600)  # type: ignore[attr-defined]
        after = page.evaluate("window.scrollY")  # type: ignore[attr-defined]
        assert after > before + 50, f"the page moved {after - before} px under a 250 px swipe"
        assert page.evaluate(RANGES_JS, handle) == ranges, "the swipe changed the axes' ranges"
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


COLOURS_JS = "gd => [gd._fullLayout.paper_bgcolor, gd._fullLayout.font.color]"


def test_figures_follow_the_dark_theme(browser: object, base_url: str) -> None:
    page, visit = _open(browser, base_url, _a_chapter(), DESKTOP)
    try:
        _wait_for_figures(page)
        handle = page.locator(".plotly-graph-div").first.element_handle()  # type: ignore[attr-defined]
        light = page.evaluate(COLOURS_JS, handle)  # type: ignore[attr-defined]
        switch = page.locator(".theme-switch-button:visible").first  # type: ignore[attr-defined]
        for _ in range(3):  # the switch cycles light → dark → auto
            if page.evaluate("document.documentElement.dataset.theme") == "dark":  # type: ignore[attr-defined]
                break
            switch.click()
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            "gd => gd.getAttribute('data-figure-theme') === 'dark'", arg=handle, timeout=10_000
        )
        page.wait_for_timeout(300)  # type: ignore[attr-defined]
        paper, ink = page.evaluate(COLOURS_JS, handle)  # type: ignore[attr-defined]
        assert (paper, ink) != tuple(light)
        assert paper in ("rgba(0,0,0,0)", "rgba(0, 0, 0, 0)"), paper  # the page's dark shows
        assert ink.lower() == "#e6edf3", ink  # light text
        page.evaluate("document.documentElement.dataset.theme = 'light'")  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            "gd => gd.getAttribute('data-figure-theme') === 'light'", arg=handle, timeout=10_000
        )
        page.wait_for_timeout(300)  # type: ignore[attr-defined]
        assert page.evaluate(COLOURS_JS, handle) == light  # type: ignore[attr-defined]
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


def test_sliders_are_reachable_and_moved_by_keyboard(browser: object, base_url: str) -> None:
    page, visit = _open(browser, base_url, _first_page_with('"sliders"'), DESKTOP)
    try:
        _wait_for_figures(page)
        index = page.evaluate(  # type: ignore[attr-defined]
            "Array.from(document.querySelectorAll('.plotly-graph-div'))"
            ".findIndex(gd => (gd._fullLayout.sliders || []).length > 0)"
        )
        figure = page.locator(".plotly-graph-div").nth(index)  # type: ignore[attr-defined]
        handle = figure.element_handle()
        figure.scroll_into_view_if_needed()
        # Start the keyboard's walk at the figure (as a click there would), then Tab to the slider.
        page.evaluate(  # type: ignore[attr-defined]
            "gd => { gd.tabIndex = -1; gd.focus(); gd.removeAttribute('tabindex'); }", handle
        )
        focused = (
            "gd => document.activeElement.matches(`.posenc-slider-input[data-figure='${gd.id}']`)"
        )
        for _ in range(5):
            page.keyboard.press("Tab")  # type: ignore[attr-defined]
            if page.evaluate(focused, handle):  # type: ignore[attr-defined]
                break
        assert page.evaluate(focused, handle), "Tab did not reach the figure's slider"  # type: ignore[attr-defined]
        slider = int(page.evaluate("document.activeElement.dataset.slider"))  # type: ignore[attr-defined]
        active = f"gd => gd._fullLayout.sliders[{slider}].active"
        steps = page.evaluate(f"gd => gd._fullLayout.sliders[{slider}].steps.length", handle)  # type: ignore[attr-defined]
        before_active = page.evaluate(active, handle)  # type: ignore[attr-defined]
        before = page.evaluate(DATA_JS, handle)  # type: ignore[attr-defined]
        key = "ArrowLeft" if before_active == steps - 1 else "ArrowRight"
        page.keyboard.press(key)  # type: ignore[attr-defined]
        expected = before_active + (-1 if key == "ArrowLeft" else 1)
        page.wait_for_function(f"gd => ({active})(gd) === {expected}", arg=handle, timeout=10_000)  # type: ignore[attr-defined]
        # The knob moving is not enough: the step's restyle/update must have changed the data.
        assert page.evaluate(DATA_JS, handle) != before, "the key moved the knob, not the data"  # type: ignore[attr-defined]
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


# What every slider step of the book changes: the figure's traces (its restyle or update).
DATA_JS = "gd => JSON.stringify(gd.data)"


@dataclass(frozen=True)
class _KeyboardControl:
    """A kind of plotly control (slider or dropdown menu) and its keyboard twin in figures.js."""

    name: str  # "slider" / "menu": the <input>/<select> class is posenc-{name}-input
    layout_key: str  # where plotly keeps the controls: gd._fullLayout[layout_key]
    items: str  # a control's steps or buttons: control[items]
    back: str  # the key that moves one item back (used at the last item)
    forward: str
    state_js: str  # what a step must change (the traces; a menu may relayout the axes)

    def inputs_js(self) -> str:
        """Each keyboard control: its figure (index, id), control index, items, active item."""
        return f"""() => Array.from(document.querySelectorAll('.posenc-{self.name}-input'))
  .map(el => {{
  const gd = document.getElementById(el.dataset.figure);
  const control = gd._fullLayout.{self.layout_key}[+el.dataset.{self.name}];
  const index = Array.from(document.querySelectorAll('.plotly-graph-div')).indexOf(gd);
  return [index, gd.id, +el.dataset.{self.name}, control.{self.items}.length, control.active || 0];
}})"""


SLIDER = _KeyboardControl("slider", "sliders", "steps", "ArrowLeft", "ArrowRight", DATA_JS)
MENU = _KeyboardControl("menu", "updatemenus", "buttons", "ArrowUp", "ArrowDown",
                        "gd => JSON.stringify([gd.data, gd.layout.xaxis, gd.layout.yaxis])")


def _unmoved_by_the_keyboard(page: object, control: _KeyboardControl) -> list[str]:
    """Press an arrow key on every keyboard twin of ``control`` on the page; the controls whose
    figure state did not change (the knob or the active button moved, the picture did not)."""
    n_controls = page.evaluate(  # type: ignore[attr-defined]
        "Array.from(document.querySelectorAll('.plotly-graph-div'))"
        f".reduce((n, gd) => n + (gd._fullLayout.{control.layout_key} || []).length, 0)"
    )
    inputs = page.evaluate(control.inputs_js())  # type: ignore[attr-defined]
    assert len(inputs) == n_controls, (
        f"{n_controls} {control.name}s but {len(inputs)} keyboard controls")
    if not inputs:
        pytest.skip(f"no {control.name} on this page")
    figures = page.locator(".plotly-graph-div")  # type: ignore[attr-defined]
    unmoved = []
    for figure_index, figure_id, index, items, active in inputs:
        figure = figures.nth(figure_index)
        figure.scroll_into_view_if_needed()
        handle = figure.element_handle()
        page.locator(  # type: ignore[attr-defined]
            f".posenc-{control.name}-input[data-figure='{figure_id}']"
            f"[data-{control.name}='{index}']"
        ).focus()
        before = page.evaluate(control.state_js, handle)  # type: ignore[attr-defined]
        at_end = active == items - 1
        key, expected = (control.back, active - 1) if at_end else (control.forward, active + 1)
        page.keyboard.press(key)  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            f"gd => gd._fullLayout.{control.layout_key}[{index}].active === {expected}",
            arg=handle,
            timeout=10_000,
        )
        if page.evaluate(control.state_js, handle) == before:  # type: ignore[attr-defined]
            unmoved.append(f"figure {figure_index}, {control.name} {index}")
    return unmoved


@pytest.mark.parametrize("page_path", PAGES, ids=IDS)
def test_every_slider_steps_its_figures_data_from_the_keyboard(
    browser: object, base_url: str, page_path: Path
) -> None:
    """An arrow key on each slider's keyboard control runs the step: gd.data changes, not the knob
    alone (its restyle/update must run with what the partial plotly bundle has)."""
    page, visit = _open(browser, base_url, page_path)
    try:
        _wait_for_figures(page)
        unmoved = _unmoved_by_the_keyboard(page, SLIDER)
        assert unmoved == [], f"the arrow key moved the knob but not the data: {unmoved}"
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize("page_path", PAGES, ids=IDS)
def test_every_menu_changes_its_figures_data_from_the_keyboard(
    browser: object, base_url: str, page_path: Path
) -> None:
    """Each dropdown menu has a <select> that Tab reaches; an arrow key on it runs the next (or
    previous) button's method: the figure changes (a button may restyle the traces or relayout
    the axes, as chapter 9's views do) and the menu's active button follows."""
    page, visit = _open(browser, base_url, page_path)
    try:
        _wait_for_figures(page)
        unmoved = _unmoved_by_the_keyboard(page, MENU)
        assert unmoved == [], f"the arrow key changed the menu but not the figure: {unmoved}"
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


# WCAG 2.x: 4.5:1 for text (plotly's tick labels and notes are 10-14 px, "normal" text).
MIN_CONTRAST = 4.5


def _text_contrasts(page: object, figure: object) -> list[dict]:
    """Every text piece of a figure with its contrast against the pixels painted behind it."""
    page.evaluate(f"() => {{ window.posencContrast = {FIGURE_CONTRAST_JS}; }}")  # type: ignore[attr-defined]
    figure.scroll_into_view_if_needed()  # type: ignore[attr-defined]
    handle = figure.element_handle()  # type: ignore[attr-defined]
    pieces = page.evaluate("gd => window.posencContrast.collect(gd)", handle)  # type: ignore[attr-defined]
    backdrop = base64.b64encode(figure.screenshot()).decode("ascii")  # type: ignore[attr-defined]
    return page.evaluate(  # type: ignore[attr-defined]
        "args => window.posencContrast.measure(args)", ["[data-contrast-probe]", pieces, backdrop]
    )


@pytest.mark.parametrize("page_path", PAGES, ids=IDS)
def test_figure_text_is_readable_in_the_dark_theme(
    browser: object, base_url: str, page_path: Path
) -> None:
    """Every piece of every figure's text against the colour actually painted behind it: >= 4.5:1.

    The backdrop is a screenshot of the figure with its text hidden, so it is what the reader sees
    behind the text: the page, the theme's output box, the plot area, a legend, a heatmap cell.
    """
    page, visit = _open(browser, base_url, page_path, DESKTOP, theme="dark")
    try:
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"  # type: ignore[attr-defined]
        count = _wait_for_figures(page)
        if not count:
            pytest.skip("no figure on this page")
        page.wait_for_function(  # type: ignore[attr-defined]
            "Array.from(document.querySelectorAll('.plotly-graph-div'))"
            ".every(gd => gd.getAttribute('data-figure-theme') === 'dark')",
            timeout=10_000,
        )
        figures = page.locator(".plotly-graph-div")  # type: ignore[attr-defined]
        low = []
        for index in range(count):
            pieces = _text_contrasts(page, figures.nth(index))
            assert len(pieces) >= 3, f"figure {index}: only {len(pieces)} pieces of text measured"
            low += [
                f"figure {index} {p['kind']} {p['text']!r}: {p['ratio']:.2f}:1 "
                f"(ink {p['colour']} on {p['backdrop']})"
                for p in sorted(pieces, key=lambda p: p["ratio"])
                if p["ratio"] < MIN_CONTRAST
            ]
        assert low == [], f"{len(low)} text pieces below {MIN_CONTRAST}:1: {json.dumps(low[:8])}"
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


# Each table on the page: [height, width, its box's width, the box's overflow-x, the words split
# across two lines, the cells of more than one line narrower than WRAPPED_CELL_MIN_PX].
# A "word" runs between spaces and hyphens (a line may break after a hyphen, as in print); text in
# Chinese or Japanese has no spaces and breaks between any two characters, so it is not checked.
WRAPPED_CELL_MIN_PX = 160  # 10em: a cell that wraps does so because its text is long
TABLES_JS = """min => Array.from(document.querySelectorAll('.bd-article table')).map(table => {
  const box = table.closest('.pst-scrollable-table-container') || table.parentElement;
  const split = [], crushed = [];
  // Lines as the rows of text boxes: two boxes whose middles are 8 px apart or more (half a line;
  // code and prose on one line differ by a pixel or two) are on two lines.
  const lineCount = (middles) => middles.sort((a, b) => a - b)
    .filter((y, i, all) => i === 0 || y - all[i - 1] >= 8).length;
  table.querySelectorAll('td, th').forEach(cell => {
    const middles = [];
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('mjx-container')) continue;
      for (const m of node.data.matchAll(/[^\\s\\-\u2010-\u2014]+[\\-\u2010-\u2014]?/g)) {
        if (/[\u3000-\u9fff\uff00-\uffef]/.test(m[0])) continue;  // CJK breaks between characters
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const mids = Array.from(range.getClientRects()).filter(r => r.width > 0)
          .map(r => (r.top + r.bottom) / 2);
        middles.push(...mids);
        if (lineCount(mids) > 1) split.push(m[0]);
      }
    }
    const lines = { size: lineCount(middles) };
    const style = getComputedStyle(cell);
    const inner = cell.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    if (lines.size > 1 && inner < min) crushed.push(`${cell.innerText.slice(0, 30)} (${inner} px)`);
  });
  const rect = table.getBoundingClientRect();
  return [Math.round(rect.height), Math.round(rect.width), box.clientWidth,
          getComputedStyle(box).overflowX, split, crushed];
})"""


@pytest.mark.parametrize("page_path", PAGES, ids=IDS)
def test_phone_tables_keep_their_words_whole_and_scroll_sideways(
    browser: object, base_url: str, page_path: Path
) -> None:
    """At 390 px no table cell breaks inside a word or wraps in a crushed column; a table wider
    than the screen scrolls in its own box (chapter 8's presets table was 4 543 px tall)."""
    if "<table" not in page_path.read_text(encoding="utf-8"):
        pytest.skip("no table on this page")
    page, visit = _open(browser, base_url, page_path, PHONE)
    try:
        _wait_for_math(page)
        problems = []
        for index, (height, width, box_width, overflow, split, crushed) in enumerate(
            page.evaluate(TABLES_JS, WRAPPED_CELL_MIN_PX)  # type: ignore[attr-defined]
        ):
            where = f"table {index} ({width}×{height} px)"
            if split:
                problems.append(f"{where}: words split across lines: {split[:5]}")
            if crushed:
                problems.append(f"{where}: wrapped in a crushed column: {crushed[:3]}")
            if width > box_width + 1 and overflow not in ("auto", "scroll"):
                problems.append(f"{where}: wider than its {box_width} px box, not scrolling")
        assert problems == []
        scroll_width, inner_width = page.evaluate(PAGE_WIDTH_JS)  # type: ignore[attr-defined]
        assert scroll_width <= inner_width, f"{scroll_width} px wide on a {inner_width} px screen"
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


IN_WORD_HIGHLIGHTS_JS = """() => Array.from(document.querySelectorAll('span.highlighted'))
  .filter(s => {
  const word = /[\\p{L}\\p{N}_]/u;
  const b = s.previousSibling, a = s.nextSibling;
  return (b && b.nodeType === 3 && word.test(b.data.slice(-1))) ||
         (a && a.nodeType === 3 && word.test(a.data.charAt(0)));
}).map(s => s.parentNode.textContent.slice(0, 60))"""


def test_search_matches_are_whole_words_and_stay_on_the_result_page(
    browser: object, base_url: str
) -> None:
    """A search result opens with its matches highlighted, none inside a longer word ("rope" in
    "properties"); the next page the reader goes to shows no highlight left from the search."""
    page, visit = _open(browser, base_url, HTML / "search.html")
    try:
        page.goto(f"{base_url}/search.html?q=rope")  # type: ignore[attr-defined]
        summary = page.locator("#search-results .search-summary")  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            "el => /found [1-9]/.test(el.innerText)",
            arg=summary.element_handle(timeout=30_000),
            timeout=30_000,
        )
        page.locator("#search-results ul.search li a").first.click()  # type: ignore[attr-defined]
        page.wait_for_load_state("load")  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            "document.querySelectorAll('span.highlighted').length > 0", timeout=10_000
        )
        page.wait_for_timeout(3_500)  # type: ignore[attr-defined]  # navigation.js's last look
        inside = page.evaluate(IN_WORD_HIGHLIGHTS_JS)  # type: ignore[attr-defined]
        assert inside == [], f"{page.url}: {len(inside)} matches inside words: {inside[:5]}"  # type: ignore[attr-defined]
        # Leave for another page (not from the search page): nothing highlighted there.
        page.evaluate(  # type: ignore[attr-defined]
            "localStorage.setItem('sphinx_highlight_terms', 'rope')"  # as a search left it
        )
        page.goto(f"{base_url}/chapters/03_sinusoidal.html")  # type: ignore[attr-defined]
        page.wait_for_timeout(500)  # type: ignore[attr-defined]
        left = page.evaluate("document.querySelectorAll('span.highlighted').length")  # type: ignore[attr-defined]
        assert left == 0, f"{left} matches of an earlier search highlighted on a later page"
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]


SNIPPETS_JS = (
    "Array.from(document.querySelectorAll('#search-results p.context')).map(p => p.innerText)"
)
# The visible search box: [where its text starts, where the magnifier icon ends] (px).
SEARCH_BOX_JS = """() => {
  const input = Array.from(document.querySelectorAll('form.bd-search input'))
    .find(el => el.getBoundingClientRect().width > 0);
  const icon = input.closest('form').querySelector('.fa-magnifying-glass');
  return [input.getBoundingClientRect().left + parseFloat(getComputedStyle(input).paddingLeft),
          icon.getBoundingClientRect().right]; }"""


@pytest.mark.parametrize("query", ["rotary", "theta"])
def test_search_snippets_show_the_query_in_plain_text(
    browser: object, base_url: str, query: str
) -> None:
    """Each result's snippet is cut around the query (not the page header's "...Binder"), its
    math written plainly (θ, not \\theta); the magnifier does not cover the box's first letter."""
    page, visit = _open(browser, base_url, HTML / "search.html", PHONE)
    try:
        page.goto(f"{base_url}/search.html?q={query}")  # type: ignore[attr-defined]
        summary = page.locator("#search-results .search-summary")  # type: ignore[attr-defined]
        page.wait_for_function(  # type: ignore[attr-defined]
            "el => /found [1-9]/.test(el.innerText)",
            arg=summary.element_handle(timeout=30_000),
            timeout=30_000,
        )
        snippets = page.evaluate(SNIPPETS_JS)  # type: ignore[attr-defined]
        assert len(snippets) >= 3, snippets
        tex = [s for s in snippets if re.search(r"\\[a-zA-Z]+|\\\(|\\\[", s)]
        assert tex == [], f"raw TeX in snippets: {tex[:3]}"
        # θ is how "theta" reads once the math is plain; a result may match by title only.
        words = (query, "θ") if query == "theta" else (query,)
        with_query = [s for s in snippets if any(w in s.lower() for w in words)]
        assert len(with_query) >= 0.8 * len(snippets), f"snippets without {query!r}: {snippets}"
        text_start, icon_end = page.evaluate(SEARCH_BOX_JS)  # type: ignore[attr-defined]
        assert text_start >= icon_end + 2, f"text at {text_start} px, magnifier to {icon_end} px"
        assert visit.console_errors == [], visit.console_errors
    finally:
        page.context.close()  # type: ignore[attr-defined]
