"""Constraint files of the benchmark suites that run in environments of their own."""
