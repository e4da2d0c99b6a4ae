"""Optional dependencies: a clear ImportError that says which extra to install.

The core needs only torch and numpy. Figures (:mod:`posenc_lib.viz`, :mod:`posenc_lib.display`)
and live explorers (:mod:`posenc_lib.widgets`) need the ``widgets`` extra; without it their import
fails with a message that names the missing package and the pip command, not a bare
"No module named 'anywidget'".
"""

from __future__ import annotations

import importlib

WIDGETS_INSTALL = 'pip install "posenc_lib[widgets]"'


def require_widgets(module: str, *packages: str) -> None:
    """Import each of ``packages`` or raise an ImportError naming ``module`` and the extra.

    Parameters
    ----------
    module
        The posenc_lib module that needs them (named in the message).
    packages
        Top-level package names, e.g. ``"plotly"``, ``"anywidget"``.
    """
    for package in packages:
        try:
            importlib.import_module(package)
        except ImportError as error:
            raise ImportError(
                f"{module} needs the optional package {package!r}, which is not installed: "
                f"{WIDGETS_INSTALL}",
                name=package,
            ) from error
