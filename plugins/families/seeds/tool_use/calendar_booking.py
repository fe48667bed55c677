"""Tool use, multi-step in the SPADE multi-turn format: the program writes its own
_advance_if_done() and calls it from every tool; instructions are revealed one at a time."""

import random
from typing import Tuple

DAYS = ["2025-03-03", "2025-03-04", "2025-03-05", "2025-03-06", "2025-03-07"]


class CalendarBookingEnv(ToolUseBaseEnv):
    def reset(self, seed=None) -> Tuple[str, dict]:
        self.turn_count = 0
        self._call_history = []
        if seed is not None:
            random.seed(seed)
        self.day = random.choice(DAYS)
        events = {}
        for k in range(6):
            day = random.choice(DAYS)
            start = random.randint(8, 16)
            if day == self.day and start < 11:
                start = random.randint(11, 15)
            events[f"EV{k + 1}"] = {"title": random.choice(
                ["standup", "review", "lunch", "1:1", "planning", "demo"]),
                "date": day, "start": start, "hours": random.randint(1, 2), "priority": "normal"}
        self.clash = f"EV{len(events) + 1}"
        events[self.clash] = {"title": "vendor call", "date": self.day, "start": 9,
                              "hours": 1, "priority": "low"}
        self.title = random.choice(["budget sync", "hiring panel", "design critique"])
        self._state = {"events": events, "created": [], "listed": []}
        self._tools = {
            "list_events": {"description": "Events on a date (YYYY-MM-DD).",
                            "parameters": {"type": "object", "properties": {
                                "date": {"type": "string"}}, "required": ["date"]}},
            "delete_event": {"description": "Delete an event by id.",
                             "parameters": {"type": "object", "properties": {
                                 "event_id": {"type": "string"}}, "required": ["event_id"]}},
            "create_event": {"description": "Create an event.",
                             "parameters": {"type": "object", "properties": {
                                 "title": {"type": "string"},
                                 "date": {"type": "string"},
                                 "start": {"type": "integer", "minimum": 0, "maximum": 23},
                                 "hours": {"type": "integer", "minimum": 1, "maximum": 8},
                                 "priority": {"type": "string",
                                              "enum": ["low", "normal", "high"]}},
                                 "required": ["title", "date", "start", "hours", "priority"]}},
            "send_invite": {"description": "Email an invitation for an event.",
                            "parameters": {"type": "object", "properties": {
                                "event_id": {"type": "string"}, "email": {"type": "string"}},
                                "required": ["event_id", "email"]}},
        }
        self._user_messages = [
            f"What do I have on {self.day}?",
            "Cancel the low-priority vendor call that day.",
            f"Book a high-priority '{self.title}' that day at 9 for 2 hours.",
        ]
        self._message_criteria = [
            lambda s: self.day in s["listed"],
            lambda s: self.clash not in s["events"],
            lambda s: any(e["title"] == self.title and e["date"] == self.day and e["start"] == 9
                          and e["hours"] == 2 and e["priority"] == "high"
                          for e in s["events"].values()),
        ]
        self._current_msg = 0
        self._expected_answer = "done"
        return (self._user_messages[0], {})

    def _advance_if_done(self) -> str:
        if self._current_msg >= len(self._user_messages):
            return ""
        if self._message_criteria[self._current_msg](self._state):
            self._current_msg += 1
            if self._current_msg >= len(self._user_messages):
                return "\n\n[ALL STEPS COMPLETE] Submit <answer>done</answer>."
            return f"\n\n[STEP {self._current_msg} COMPLETE] {self._user_messages[self._current_msg]}"
        return ""

    def _check_answer(self, answer: str) -> bool:
        return answer.strip().lower() == "done" and self._current_msg >= len(self._user_messages)

    def tool_list_events(self, date=""):
        self._state["listed"].append(date)
        rows = [f"{k}: {e['title']} {e['start']}:00-{e['start'] + e['hours']}:00 "
                f"({e['priority']})" for k, e in sorted(self._state["events"].items())
                if e["date"] == date]
        return ("\n".join(rows) if rows else "No events") + self._advance_if_done()

    def tool_delete_event(self, event_id=""):
        if event_id not in self._state["events"]:
            return f"Error: no event {event_id}" + self._advance_if_done()
        del self._state["events"][event_id]
        return f"Deleted {event_id}" + self._advance_if_done()

    def tool_create_event(self, title="", date="", start=9, hours=1, priority="normal"):
        for k, e in self._state["events"].items():
            if e["date"] == date and start < e["start"] + e["hours"] and e["start"] < start + hours:
                return f"Error: overlaps {k} ({e['title']})" + self._advance_if_done()
        event_id = f"EV{len(self._state['events']) + len(self._state['created']) + 10}"
        self._state["events"][event_id] = {"title": title, "date": date, "start": start,
                                           "hours": hours, "priority": priority}
        self._state["created"].append(event_id)
        return f"Created {event_id}" + self._advance_if_done()

    def tool_send_invite(self, event_id="", email=""):
        return f"Invitation for {event_id} sent to {email}" + self._advance_if_done()

    def solution(self) -> str:
        steps = [f"list_events(date='{self.day}')", f"delete_event(event_id='{self.clash}')",
                 f"create_event(title='{self.title}', date='{self.day}', start=9, hours=2, "
                 f"priority='high')", "<answer>done</answer>"]
        return " ".join(f"{k + 1}. {s}" for k, s in enumerate(steps))
