# expect: runtime_error
# message: string or blob too big
# why: build a string past the length limit in SQL
SCHEMA = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"


class HostileDatabaseEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.create_database(SCHEMA, {"items": [(1, "a")]})
        self._db.query("WITH RECURSIVE s(x) AS (SELECT ? UNION ALL SELECT x || x FROM s) SELECT length(x) FROM s", ("abcdefgh",))
        self._tools = {"count": {"description": "Count items.",
                                 "parameters": {"type": "object", "properties": {}}}}
        self._expected_answer = "1"
        return "How many items are there? Answer <answer>n</answer>.", {}

    def tool_count(self):
        return str(self._db.scalar("SELECT count(*) FROM items"))

    def solution(self):
        return "1. count() 2. <answer>1</answer>"
