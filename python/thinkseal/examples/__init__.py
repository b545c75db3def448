"""Bundled example conversations (used by ``python -m thinkseal``)."""
