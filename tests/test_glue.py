"""posenc_lib.glue: values reach the prose as plain numbers that a format spec can read."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib.glue import glue


@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_numpy_scalars_become_floats_a_format_spec_reads(x: float) -> None:
    stored = glue("x", np.float64(x))
    assert type(stored) is float and stored == x
    # myst-nb formats from the text/plain repr: it must parse back as a float.
    assert float(repr(stored)) == x


def test_integers_tensors_and_strings() -> None:
    assert glue("n", np.int64(47117)) == 47117 and type(glue("n", np.int64(3))) is int
    assert glue("t", torch.tensor(0.25)) == 0.25
    assert glue("t1", torch.tensor([2.0])) == 2.0
    assert glue("s", "half") == "half"


@pytest.mark.parametrize("bad", [math.nan, math.inf, np.float32("nan"), torch.tensor(-math.inf)])
def test_non_finite_values_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="finite"):
        glue("bad", bad)


@pytest.mark.parametrize("bad", [np.zeros(3), torch.zeros(2, 2), [1.0], None, True])
def test_non_scalars_are_refused(bad: object) -> None:
    with pytest.raises(TypeError, match="value must be"):
        glue("bad", bad)


@pytest.mark.parametrize("name", ["", "2l", "copy acc", "a-b", 3])
def test_names_must_be_identifiers(name: object) -> None:
    with pytest.raises(ValueError, match="identifier"):
        glue(name, 1.0)  # type: ignore[arg-type]
