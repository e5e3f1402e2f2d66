"""Moved to ``verifier.engines.minimize`` (the minimiser is an engine); this name stays until every caller
imports from there."""
from .engines.minimize import describe_size, minimize, simpler_numbers, size_of  # noqa: F401
