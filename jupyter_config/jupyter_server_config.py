"""JupyterLab settings for this project, read through ``JUPYTER_CONFIG_PATH`` (see ``make live``).

- ``labconfig/default_setting_overrides.json``: a double-click on a chapter ``.md`` opens it as a
  notebook (jupytext's viewer), not in the text editor.
- Here: the chapters' ``.ipynb`` twins stay as ``make sync`` writes them. A twin is generated from
  its ``.md`` and committed without outputs; a reader who opens and runs a twin must not dirty it.
  So before an ``.ipynb`` that has a ``.md`` beside it is saved, its outputs and execution counts
  are dropped and its notebook metadata is kept as committed. Other notebooks save as usual.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any


def keep_twin_output_free(
    model: dict[str, Any], path: str, contents_manager: Any, **_: Any
) -> None:
    if model.get("type") != "notebook" or not path.endswith(".ipynb"):
        return
    os_path = contents_manager._get_os_path(path)
    if not os.path.isfile(os_path[: -len(".ipynb")] + ".md"):
        return
    notebook = model["content"]
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        cell.get("metadata", {}).pop("execution", None)
    if os.path.isfile(os_path):
        with open(os_path, encoding="utf-8") as committed:
            notebook["metadata"] = json.load(committed).get("metadata", notebook["metadata"])


c = get_config()  # type: ignore[name-defined]  # noqa: F821
c.ContentsManager.pre_save_hook = keep_twin_output_free
# jupyter_server applies this setting once per contents-manager class in jupytext's class chain
# and warns each time it replaces the hook by itself ("Overriding existing pre_save_hook
# (keep_twin_output_free) with a new one (keep_twin_output_free)", twice at every `make live`).
# Only that self-replacement is silenced: a different hook replacing this one still warns.
warnings.filterwarnings(
    "ignore",
    message=r"Overriding existing pre_save_hook \(keep_twin_output_free\) "
    r"with a new one \(keep_twin_output_free\)",
    category=UserWarning,
)
