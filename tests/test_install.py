"""The library as others install it: a light core, a `widgets` extra, typed, SPDX-licensed."""

from __future__ import annotations

import email
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WIDGET_MODULES = ("plotly", "ipywidgets", "anywidget", "IPython")


def test_import_posenc_lib_needs_none_of_the_widget_packages() -> None:
    # Those packages are made unimportable: the core must import and work without them.
    code = (
        "import sys\n"
        f"for name in {WIDGET_MODULES!r}:\n"
        "    sys.modules[name] = None\n"
        "import posenc_lib\n"
        "assert posenc_lib.sinusoidal_table(4, 8).shape == (4, 8)\n"
        f"loaded = [m for m in {WIDGET_MODULES!r} if sys.modules.get(m) is not None]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(("module", "blocked"), [
    ("posenc_lib.widgets", "anywidget"), ("posenc_lib.widgets", "ipywidgets"),
    ("posenc_lib.viz.heatmap", "plotly"), ("posenc_lib.display", "plotly"),
])
def test_figures_and_widgets_without_the_extra_say_how_to_install_it(
    module: str, blocked: str
) -> None:
    # The package made unimportable: the import names it and the pip command of the extra.
    code = (
        "import sys\n"
        f"sys.modules[{blocked!r}] = None\n"
        "try:\n"
        f"    import {module}\n"
        "except ImportError as error:\n"
        "    print(error)\n"
        "else:\n"
        "    raise SystemExit('imported without the extra')\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert f"'{blocked}'" in result.stdout
    assert 'pip install "posenc_lib[widgets]"' in result.stdout


def test_nothing_in_the_library_reaches_outside_the_package() -> None:
    # A wheel install has no repository around the package: no path may climb out of it.
    climbing = re.compile(r"""parents\[\d+\]|\.parent\.parent\.parent|["']\.\.["']|["']\.\./""")
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in (ROOT / "posenc_lib").rglob("*.py")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if climbing.search(line)
    ]
    assert not offenders, offenders


def test_wheel_has_an_spdx_license_a_widgets_extra_and_a_typed_marker(tmp_path: Path) -> None:
    # Built from a copy, so that setuptools' build/ never lands in the working tree.
    source = tmp_path / "src"
    shutil.copytree(ROOT / "posenc_lib", source / "posenc_lib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copyfile(ROOT / name, source / name)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = (tmp_path / "dist").glob("posenc_lib-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_string(archive.read(metadata_name).decode())
    assert "posenc_lib/py.typed" in names
    assert metadata["License-Expression"] == "MIT"
    assert sorted(metadata.get_all("Provides-Extra")) == ["book", "widgets"]
    requires = metadata.get_all("Requires-Dist")
    core = [r for r in requires if "extra ==" not in r]
    extra = [r for r in requires if 'extra == "widgets"' in r]
    book = [r.split(";")[0].replace(" ", "") for r in requires if 'extra == "book"' in r]
    assert sorted(r.split(">")[0] for r in core) == ["numpy", "torch"]
    assert sorted(r.split(">")[0] for r in extra) == ["anywidget", "ipywidgets", "plotly"]
    # The book extra is the widgets plus transformers 5 (the chapters use its v5 API) and Pillow
    # (transformers' image processors: chapter 11 reads Gemma 4's patch ids from its own).
    assert sorted(re.split("[<>=]", r)[0] for r in book) == ["anywidget", "ipywidgets", "pillow",
                                                               "plotly", "transformers"]
    assert "transformers<6,>=5.25" in book or "transformers>=5.25,<6" in book, book
    # Chapter 9's lab results ship inside the package: a wheel install finds them.
    assert "posenc_lib/lab/data/lab_results.json" in names
    assert "posenc_lib/lab/data/lab_artifacts.npz" in names
    assert "posenc_lib/lab/data/lab_ablations.json" in names


def test_the_library_type_checks() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"], cwd=ROOT, capture_output=True,
        text=True, timeout=600, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


STATIC = ROOT / "posenc_lib" / "static"
BUNDLE = STATIC / "plotly-3d.min.js"


def test_the_partial_plotly_bundles_draw_every_trace_the_figures_use() -> None:
    import re

    used = {
        name.lower()
        for path in (ROOT / "posenc_lib").rglob("*.py")
        for name in re.findall(r"\bgo\.([A-Z]\w*)\(", path.read_text(encoding="utf-8"))
        if name not in {"Figure", "FigureWidget"}
    }
    bundles = {"entry.js": "plotly.min.js", "entry-3d.js": "plotly-3d.min.js"}
    traces = {}
    for entry, bundle in bundles.items():
        source = (ROOT / "js" / "plotly-bundle" / entry).read_text(encoding="utf-8")
        lib = set(re.findall(r"require\('plotly\.js/lib/(\w+)'\)", source)) - {"core"}
        traces[bundle] = ["scatter", *sorted(lib)]  # scatter is in plotly's core
        header = (STATIC / bundle).read_text(encoding="utf-8")[:400]
        assert f"Partial bundle: {', '.join(traces[bundle])}." in header, (
            f"posenc_lib/static/{bundle} is stale: run `make plotly-bundle`"
        )
    missing = used - set(traces["plotly-3d.min.js"])
    assert not missing, f"traces missing from js/plotly-bundle/entry-3d.js: {missing}"
    assert used - {"scatter3d"} <= set(traces["plotly.min.js"])


def test_the_bundle_is_the_plotly_js_version_of_the_python_package() -> None:
    import re

    import plotly

    full = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    version = re.compile(r"plotly\.js v(\d+\.\d+\.\d+)")
    expected = version.search(full.read_text(encoding="utf-8")[:300])
    ours = version.search(BUNDLE.read_text(encoding="utf-8")[:300])
    assert expected and ours and ours.group(1) == expected.group(1)
    package = (ROOT / "js" / "plotly-bundle" / "package.json").read_text(encoding="utf-8")
    assert f'"plotly.js": "{expected.group(1)}"' in package
