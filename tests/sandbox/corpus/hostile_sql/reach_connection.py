# expect: forbidden
# message: __closure__
# why: walk from the database object to its sqlite3 connection
SCHEMA = "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"


class HostileDatabaseEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        self.create_database(SCHEMA, {"items": [(1, "a")]})
        run = self._db._run
        cells = getattr(run, "__closure__")
        cells[0].cell_contents.enable_load_extension(True)
        self._tools = {"count": {"description": "Count items.",
                                 "parameters": {"type": "object", "properties": {}}}}
        self._expected_answer = "1"
        return "How many items are there? Answer <answer>n</answer>.", {}

    def tool_count(self):
        return str(self._db.scalar("SELECT count(*) FROM items"))

    def solution(self):
        return "1. count() 2. <answer>1</answer>"
