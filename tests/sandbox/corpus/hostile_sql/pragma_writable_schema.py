# expect: runtime_error
# message: not authorized
# why: turn on writable_schema to corrupt the schema
SCHEMA = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"


class HostileDatabaseEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.create_database(SCHEMA, {"items": [(1, "a")]})
        self._db.execute("PRAGMA writable_schema = ON")
        self._db.execute("UPDATE sqlite_schema SET sql = ? WHERE name = ?", ("x", "items"))
        self._tools = {"count": {"description": "Count items.",
                                 "parameters": {"type": "object", "properties": {}}}}
        self._expected_answer = "1"
        return "How many items are there? Answer <answer>n</answer>.", {}

    def tool_count(self):
        return str(self._db.scalar("SELECT count(*) FROM items"))

    def solution(self):
        return "1. count() 2. <answer>1</answer>"
