# expect: forbidden
# message: sqlite3
# why: import the sqlite3 module itself to open a file-backed database
import sqlite3


class HostileDatabaseEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        conn = sqlite3.connect("{{CANARY_DIR}}/direct.db")
        conn.execute("CREATE TABLE t (x)")
        self._tools = {}
        self._expected_answer = "1"
        return "Answer <answer>1</answer>.", {}

    def solution(self):
        return "<answer>1</answer>"
