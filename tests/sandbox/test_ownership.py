"""Which objects are the program's own: classes (and their instances) defined under the program's
or the prelude's module name, never library ones."""

from __future__ import annotations

import json

from sandbox.ownership import PRELUDE_MODULE, PROGRAM_MODULE, PROGRAM_TYPES, is_program_object


def test_program_and_prelude_classes_are_the_programs_own():
    program_class = type("GameEnv", (), {"__module__": PROGRAM_MODULE})
    prelude_class = type("BaseEnv", (), {"__module__": PRELUDE_MODULE})
    assert is_program_object(program_class) and is_program_object(program_class())
    assert is_program_object(prelude_class)
    assert PROGRAM_TYPES[program_class] is True  # answered once per class, then cached


def test_library_and_builtin_objects_are_not():
    impostor = type("GameEnv", (), {"__module__": "__main__"})
    for obj in (json.JSONDecoder, json.JSONDecoder(), 3, int, "text", impostor()):
        assert not is_program_object(obj), obj
