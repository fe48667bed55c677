"""Seed programs of the reasoning family (program sources, read as text)."""
