"""Tool use, multi-step (BFCL style): tidy a small file system; each instruction is revealed
once the previous one is done, and the final answer is "done"."""

import random


class FileOrganizerEnv(ToolUseBaseEnv):
    def reset(self, seed=None):
        rng = random.Random(seed)
        project = rng.choice(["apollo", "borealis", "cygnus", "delta"])
        reports = rng.sample(["q1.txt", "q2.txt", "q3.txt", "q4.txt", "summary.txt"], 3)
        drafts = rng.sample(["draft_a.md", "draft_b.md", "notes.md", "todo.md"], 2)
        self.project = project
        self.report = rng.choice(reports)
        self.archive = rng.choice(["archive", "old", "done"])
        root = f"/home/{project}"
        self._state = {
            "cwd": "/home",
            "tree": {"/home": [project, "readme.txt"], root: reports + drafts},
            "files": {f"{root}/{name}": f"contents of {name}" for name in reports + drafts},
            "last_read": None,
        }
        self._tools = {
            "pwd": {"description": "Print the current directory.",
                    "parameters": {"type": "object", "properties": {}}},
            "ls": {"description": "List a directory (absolute path).",
                   "parameters": {"type": "object", "properties": {
                       "path": {"type": "string", "description": "absolute directory path"}},
                       "required": ["path"]}},
            "cd": {"description": "Change the current directory (absolute path).",
                   "parameters": {"type": "object", "properties": {
                       "path": {"type": "string"}}, "required": ["path"]}},
            "mkdir": {"description": "Create a subdirectory in the current directory.",
                      "parameters": {"type": "object", "properties": {
                          "name": {"type": "string"}}, "required": ["name"]}},
            "mv": {"description": "Move a file from the current directory into a subdirectory "
                                  "of it.",
                   "parameters": {"type": "object", "properties": {
                       "file": {"type": "string"}, "destination": {"type": "string"}},
                       "required": ["file", "destination"]}},
            "cat": {"description": "Read a file in the current directory.",
                    "parameters": {"type": "object", "properties": {
                        "file": {"type": "string"}}, "required": ["file"]}},
        }
        self._user_messages = [
            f"Go to the {project} project folder.",
            f"Make a folder called '{self.archive}' there and move {self.report} into it.",
            f"Now move every markdown file of the project into '{self.archive}' as well.",
            "Finally, open the readme in /home so I can check it.",
        ]
        archive_path = f"{root}/{self.archive}"
        self._message_criteria = [
            lambda s: s["cwd"] == root,
            lambda s: self.report in s["tree"].get(archive_path, []),
            lambda s: all(d in s["tree"].get(archive_path, []) for d in drafts),
            lambda s: s["last_read"] == "/home/readme.txt",
        ]
        self.drafts = drafts
        self._current_msg = 0
        self._expected_answer = "done"
        return self._user_messages[0], {}

    def tool_pwd(self):
        return self._state["cwd"]

    def tool_ls(self, path):
        if path not in self._state["tree"]:
            return f"Error: no directory {path}"
        return ", ".join(sorted(self._state["tree"][path])) or "(empty)"

    def tool_cd(self, path):
        if path not in self._state["tree"]:
            return f"Error: no directory {path}"
        self._state["cwd"] = path
        return f"Now in {path}"

    def tool_mkdir(self, name):
        if "/" in name or not name:
            return "Error: give a plain folder name"
        path = f"{self._state['cwd']}/{name}"
        if path in self._state["tree"]:
            return f"Error: {path} already exists"
        self._state["tree"][path] = []
        self._state["tree"][self._state["cwd"]].append(name)
        return f"Created {path}"

    def tool_mv(self, file, destination):
        here = self._state["tree"][self._state["cwd"]]
        target = f"{self._state['cwd']}/{destination}"
        if file not in here or f"{self._state['cwd']}/{file}" in self._state["tree"]:
            return f"Error: no file {file} in {self._state['cwd']}"
        if target not in self._state["tree"]:
            return f"Error: no folder {destination} in {self._state['cwd']}"
        here.remove(file)
        self._state["tree"][target].append(file)
        old = f"{self._state['cwd']}/{file}"
        self._state["files"][f"{target}/{file}"] = self._state["files"].pop(old, "")
        return f"Moved {file} to {target}"

    def tool_cat(self, file):
        path = f"{self._state['cwd']}/{file}"
        if file not in self._state["tree"][self._state["cwd"]]:
            return f"Error: no file {file} in {self._state['cwd']}"
        self._state["last_read"] = path
        return self._state["files"].get(path, "Welcome to the shared drive.")

    def solution(self):
        root = f"/home/{self.project}"
        steps = [f"cd(path='{root}')", f"mkdir(name='{self.archive}')",
                 f"mv(file='{self.report}', destination='{self.archive}')"]
        steps += [f"mv(file='{d}', destination='{self.archive}')" for d in self.drafts]
        steps += ["cd(path='/home')", "cat(file='readme.txt')", "<answer>done</answer>"]
        return " ".join(f"{k + 1}. {s}" for k, s in enumerate(steps))
