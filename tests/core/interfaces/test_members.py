"""spade_core/interfaces/members.py: the required and optional members of each kind's base class."""

from __future__ import annotations

from spade_core.interfaces import BASES
from spade_core.interfaces.members import optional_members, required_members


def test_every_kind_has_a_base_class_with_required_and_optional_members():
    for kind, base in BASES.items():
        assert required_members(base), kind
        assert "close" in required_members(base) + optional_members(base), kind
