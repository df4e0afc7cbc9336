"""Loads Needle's pytest plugin: this directory's tests are evaluations, and only a run
of them loads it (``pytest evals …``, ``pytest evals/test_recall.py …``, ``cd evals &&
pytest …``). Needle's own tests (``pytest``, ``pytest tests/…``) never see it.

pytest accepts ``pytest_plugins`` in an *initial* conftest: one in (or above) a path the
command line names, which pytest loads before it parses the command line, so the plugin's
options (``--model``, ``--corpus`` …) are known by then. A run that reaches ``evals/``
only by collecting a parent directory (``pytest .``) is refused by pytest for that reason:
name ``evals`` on the command line.
"""

pytest_plugins = ["needle_lib.plugin"]
