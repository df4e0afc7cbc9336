"""The runner under the pytest plugin: pieces both benchmark families share that need no
pytest (look-ahead lanes, the event-loop thread, the run state every process shares, the
run journal, merge's checks, the latest-view rule, and the ``Benchmark`` protocol both
families implement).

``needle_lib.plugin`` adapts them to pytest; nothing here imports pytest.
"""
