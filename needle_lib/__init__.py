"""Needle: pytest-native evaluation suite for long-context recall and search retrieval."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("needle-evals")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"
