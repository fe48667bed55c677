"""Tool use over a database: move a clashing meeting in a calendar (SQLite) to a free slot and
report its new start; success is checked on the final state and on the answer."""

import random

SCHEMA = """
CREATE TABLE rooms (name TEXT PRIMARY KEY, seats INTEGER NOT NULL CHECK (seats > 0));
CREATE TABLE meetings (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    room TEXT NOT NULL REFERENCES rooms(name),
    day TEXT NOT NULL,
    start_hour INTEGER NOT NULL CHECK (start_hour BETWEEN 8 AND 17),
    hours INTEGER NOT NULL CHECK (hours BETWEEN 1 AND 3)
);
"""
DAYS = ["2025-06-02", "2025-06-03", "2025-06-04"]
TITLES = ["standup", "design review", "budget sync", "hiring panel", "retro", "vendor call"]


class CalendarDatabaseEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        rng = random.Random(seed)
        rooms = [("Aster", 6), ("Birch", 10), ("Cedar", 4)]
        self._day = rng.choice(DAYS)
        self._room = rng.choice(rooms)[0]
        busy = sorted(rng.sample(range(8, 16), 3))
        meetings = [(k + 1, TITLES[k], self._room, self._day, hour, 1)
                    for k, hour in enumerate(busy)]
        # The meeting to move overlaps the first busy slot.
        self._moving = len(meetings) + 1
        self._title = rng.choice(TITLES[3:])
        meetings.append((self._moving, self._title, self._room, self._day, busy[0], 1))
        free = [h for h in range(8, 17) if h not in busy]
        self._new_start = min(h for h in free if h > busy[0])
        self.create_database(SCHEMA, {"rooms": rooms, "meetings": meetings})
        self._tools = {
            "list_meetings": {"description": "Meetings of a room on a day (YYYY-MM-DD).",
                              "parameters": {"type": "object", "properties": {
                                  "room": {"type": "string"}, "day": {"type": "string"}},
                                  "required": ["room", "day"]}},
            "move_meeting": {"description": "Move a meeting to a new start hour the same day; "
                                            "refused if the room is busy then.",
                             "parameters": {"type": "object", "properties": {
                                 "meeting_id": {"type": "integer"},
                                 "start_hour": {"type": "integer", "minimum": 8,
                                                "maximum": 17}},
                                 "required": ["meeting_id", "start_hour"]}},
            "cancel_meeting": {"description": "Delete a meeting.",
                               "parameters": {"type": "object", "properties": {
                                   "meeting_id": {"type": "integer"}},
                                   "required": ["meeting_id"]}},
            "list_rooms": {"description": "Rooms and their seats.",
                           "parameters": {"type": "object", "properties": {}}},
        }
        self._expected_answer = str(self._new_start)
        return (f"The '{self._title}' in room {self._room} on {self._day} clashes with another "
                "meeting. Move it to the earliest free hour after its current start (same room, "
                "same day) and answer with the new start hour, e.g. <answer>14</answer>.", {})

    def tool_list_meetings(self, room, day):
        rows = self._db.query("SELECT id, title, start_hour, hours FROM meetings "
                              "WHERE room = ? AND day = ? ORDER BY start_hour, id", (room, day))
        return "\n".join(f"#{r['id']} {r['title']}: {r['start_hour']}:00 for {r['hours']}h"
                         for r in rows) or "No meetings."

    def tool_move_meeting(self, meeting_id, start_hour):
        row = self._db.query_one("SELECT room, day, hours FROM meetings WHERE id = ?",
                                 (meeting_id,))
        if row is None:
            return f"Error: no meeting #{meeting_id}."
        clash = self._db.scalar(
            "SELECT count(*) FROM meetings WHERE room = ? AND day = ? AND id != ? "
            "AND start_hour < ? + ? AND ? < start_hour + hours",
            (row["room"], row["day"], meeting_id, start_hour, row["hours"], start_hour))
        if clash:
            return f"Error: room {row['room']} is busy at {start_hour}:00."
        try:
            self._db.execute("UPDATE meetings SET start_hour = ? WHERE id = ?",
                             (start_hour, meeting_id))
        except DatabaseError as exc:
            return f"Error: {exc}"
        return f"Meeting #{meeting_id} now starts at {start_hour}:00."

    def tool_cancel_meeting(self, meeting_id):
        changed = self._db.execute("DELETE FROM meetings WHERE id = ?", (meeting_id,))
        return f"Cancelled #{meeting_id}." if changed else f"Error: no meeting #{meeting_id}."

    def tool_list_rooms(self):
        return ", ".join(f"{r['name']} ({r['seats']} seats)"
                         for r in self._db.query("SELECT name, seats FROM rooms ORDER BY name"))

    def goal_reached(self):
        count = self._db.scalar("SELECT count(*) FROM meetings")
        start = self._db.scalar("SELECT start_hour FROM meetings WHERE id = ?", (self._moving,))
        return count == self._moving and start == self._new_start

    def solution(self):
        return (f"1. list_meetings(room='{self._room}', day='{self._day}') "
                f"2. move_meeting(meeting_id={self._moving}, start_hour={self._new_start}) "
                f"3. <answer>{self._new_start}</answer>")
