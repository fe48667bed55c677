"""Tool-use style: a ToolUseBaseEnv subclass (the base class comes from the family prelude)."""

import json


class CalendarEnv(ToolUseBaseEnv):
    def __init__(self):
        super().__init__()
        self._tools = [
            {"type": "function", "function": {"name": "list_events", "parameters": {
                "type": "object", "properties": {"day": {"type": "string"}}}}},
        ]

    def reset(self, seed=None):
        seed = seed or 0
        self._state = {"events": {"mon": ["standup"], "tue": ["review", "lunch"][: 1 + seed % 2]}}
        self._expected_answer = str(len(self._state["events"]["tue"]))
        return self.task_prompt("How many events are on tuesday?"), {"tools": self._tools}

    def tool_list_events(self, day):
        return json.dumps(self._state["events"].get(day, []))

    def _check_answer(self, answer):
        return answer.strip() == self._expected_answer

    def solution(self):
        return ['<tool_call>{"name": "list_events", "arguments": {"day": "tue"}}</tool_call>',
                f"<answer>{self._expected_answer}</answer>"]
