"""Tool-use programs and helpers shared by the tests of the tool-use family and of its prelude
(``plugins/families/preludes/tool_use_base.py``): a small notes program, the family's seeds by
name, and a tool call written as a model writes it."""

from __future__ import annotations

from plugins.families.solutions import tool_call_action
from plugins.families.tool_use import ToolUseFamily

FAMILY = ToolUseFamily()

# A single-task program written the way SPADE's generated tool-use programs are: typing import,
# random.seed, a description-style solution with "->" results and "ANSWER:".
NOTES_PROGRAM = '''
import random
from typing import Tuple


class NoteFinderEnv(ToolUseBaseEnv):
    def reset(self, seed=None) -> Tuple[str, dict]:
        if seed is not None:
            random.seed(seed)
        topics = ["rivers", "comets", "ferns", "glaciers", "owls"]
        random.shuffle(topics)
        self._state = {"notes": {i + 1: t for i, t in enumerate(topics)}, "tags": {}}
        self.topic = topics[2]
        self._expected_answer = "3"
        self._tools = {
            "list_notes": {"description": "List note ids.",
                           "parameters": {"type": "object", "properties": {}}},
            "read_note": {"description": "Read one note.",
                          "parameters": {"type": "object",
                                         "properties": {"note_id": {"type": "integer"}},
                                         "required": ["note_id"]}},
            "tag_note": {"description": "Tag a note.",
                         "parameters": {"type": "object", "properties": {
                             "note_id": {"type": "integer"},
                             "tag": {"type": "string", "enum": ["keep", "drop"]}},
                             "required": ["note_id", "tag"]}},
        }
        return (f"Find the note about {self.topic} and answer its id.", {})

    def tool_list_notes(self):
        return ", ".join(str(k) for k in self._state["notes"])

    def tool_read_note(self, note_id):
        return f"Note {note_id}: about {self._state['notes'][note_id]}"

    def tool_tag_note(self, note_id, tag):
        self._state["tags"][note_id] = tag
        return f"Tagged {note_id} as {tag}"

    def solution(self) -> str:
        return ('1. list_notes() -> 1, 2, 3, 4, 5 '
                '2. read_note(note_id=3) -> Note 3: about ' + self.topic + ' '
                'ANSWER: 3')
'''



def call(name, **arguments) -> str:
    """A tool call action, as the model would write it."""
    return tool_call_action(name, arguments)


def seed_program(name: str) -> str:
    """The source of the family's seed program whose description starts with ``name``."""
    return next(p.source for p in FAMILY.seed_programs() if p.description.startswith(name))
