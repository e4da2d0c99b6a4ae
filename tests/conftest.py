"""Shared pytest configuration: a lean hypothesis profile for a small shared machine."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# Deadlines are disabled because timing on a shared 2-core machine is noisy; the example count is
# kept small because each example runs real tensor code.
settings.register_profile(
    "posenc",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("posenc")
