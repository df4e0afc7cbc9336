"""Shared test setup: pytester for end-to-end runs of ``pytest evals``."""

pytest_plugins = ["pytester"]
