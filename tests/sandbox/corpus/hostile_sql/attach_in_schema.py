# expect: runtime_error
# message: not authorized
# why: ATTACH hidden in the schema script
SCHEMA = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"


class HostileDatabaseEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.create_database(SCHEMA, {"items": [(1, "a")]})
        self.create_database("ATTACH DATABASE '{{CANARY_DIR}}/schema.db' AS s; CREATE TABLE s.t (x);")
        self._tools = {"count": {"description": "Count items.",
                                 "parameters": {"type": "object", "properties": {}}}}
        self._expected_answer = "1"
        return "How many items are there? Answer <answer>n</answer>.", {}

    def tool_count(self):
        return str(self._db.scalar("SELECT count(*) FROM items"))

    def solution(self):
        return "1. count() 2. <answer>1</answer>"
