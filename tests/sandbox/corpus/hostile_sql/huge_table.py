# expect: runtime_error
# message: database or disk is full
# why: fill the database until memory runs out
SCHEMA = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"


class HostileDatabaseEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.create_database(SCHEMA, {"items": [(1, "a")]})
        self._db.execute("CREATE TABLE blob (x TEXT)")
        chunk = "x" * 500_000
        for _ in range(10_000):
            self._db.execute("INSERT INTO blob VALUES (?)", (chunk,))
        self._tools = {"count": {"description": "Count items.",
                                 "parameters": {"type": "object", "properties": {}}}}
        self._expected_answer = "1"
        return "How many items are there? Answer <answer>n</answer>.", {}

    def tool_count(self):
        return str(self._db.scalar("SELECT count(*) FROM items"))

    def solution(self):
        return "1. count() 2. <answer>1</answer>"
