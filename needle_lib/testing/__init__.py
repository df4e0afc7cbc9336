"""Loopback test doubles with real sockets, for tests, benchmarks and smoke checks."""
