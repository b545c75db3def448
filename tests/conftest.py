"""Shared test fixtures."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# LiteLLM fetches its model price map over the network when imported, unless told to use
# the copy it ships; set before any test module imports it (the framework adapters' tests).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# CI runs more examples; local runs stay quick.
settings.register_profile("ci", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
