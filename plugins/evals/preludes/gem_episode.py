"""One GEM game (``gem-llm``), played inside a sandbox worker.

Trusted prelude source of the ``gem`` suite's episodes (``plugins/evals/gem_suite.py`` drives
them from the host). GEM's games are third-party code that reads the model's replies (regular
expressions over the whole reply), so they run here, never in the host.

The episode environment (``GemEpisode``, injected; the program is a subclass with nothing of its
own) takes JSON requests as actions:

- ``{"op": "start", "game", "seed"}``: ``gem.make(game)`` reset at ``seed``; the observation is
  the game's first observation (its instructions, then its board as GEM's ``suffix``);
- ``{"op": "gold"}``: the observation is the JSON list of replies that win this game from its
  start (a scripted player reading the game's own state: the secret code, the solution grid, the
  tower, a shortest Sokoban solution). Test fakes answer with them;
- ``{"op": "move", "text"}``: the model's reply as GEM's ``step(action)``; the step's reward,
  ``terminated`` and ``truncated`` are GEM's, the observation is GEM's with its suffix.
"""

import collections as _collections
import importlib as _importlib
import json as _json

__all__ = list(globals().get("__all__", [])) + ["GemEpisode"]

#: Most Sokoban states the gold player searches before it gives up (a few seconds at most).
SOKOBAN_SEARCH_STATES = 400_000
_MOVES = {"up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


def _with_suffix(observation, info):
    suffix = (info or {}).get("suffix", "")
    return observation + "\n" + suffix if suffix else observation


def _boxed(text):
    return "\\boxed{" + text + "}"


def _hanoi(disks, source, target, spare, moves):
    if disks:
        _hanoi(disks - 1, source, spare, target, moves)
        moves.append(_boxed(f"{source} {target}"))
        _hanoi(disks - 1, spare, target, source, moves)
    return moves


def _sokoban(env):
    """A shortest move sequence that puts every box on a target (breadth-first over the player's
    square and the boxes' squares), or ``[]`` when none is found within the search budget."""
    fixed, state = env.room_fixed, env.room_state
    rows, cols = fixed.shape
    walls = {(r, c) for r in range(rows) for c in range(cols) if fixed[r, c] == 0}
    targets = frozenset((r, c) for r in range(rows) for c in range(cols) if fixed[r, c] == 2)
    boxes = frozenset((r, c) for r in range(rows) for c in range(cols) if state[r, c] in (3, 4))
    start = (tuple(int(v) for v in env.player_position), boxes)
    parents = {start: None}
    queue = _collections.deque([start])
    while queue and len(parents) < SOKOBAN_SEARCH_STATES:
        node = queue.popleft()
        (row, col), boxes = node
        if boxes <= targets:
            path = []
            while parents[node] is not None:
                node, move = parents[node]
                path.append(_boxed(move))
            return path[::-1]
        for move, (dr, dc) in _MOVES.items():
            ahead = (row + dr, col + dc)
            if not (0 <= ahead[0] < rows and 0 <= ahead[1] < cols) or ahead in walls:
                continue
            moved = boxes
            if ahead in boxes:
                beyond = (ahead[0] + dr, ahead[1] + dc)
                if (not (0 <= beyond[0] < rows and 0 <= beyond[1] < cols) or beyond in walls
                        or beyond in boxes):
                    continue
                moved = (boxes - {ahead}) | {beyond}
            child = (ahead, moved)
            if child not in parents:
                parents[child] = (node, move)
                queue.append(child)
    return []


def _gold(env):
    kind = type(env).__name__
    if kind == "MastermindEnv":
        return [_boxed(" ".join(str(d) for d in env.game_code))]
    if kind == "TowerofHanoiEnv":
        return _hanoi(env.num_disks, "A", "C", "B", [])
    if kind == "SokobanEnv":
        return _sokoban(env)
    if kind == "CrosswordsEnv":
        return [_boxed(f"{r} {c} {letter.upper()}") for r, row in enumerate(env.solution)
                for c, letter in enumerate(row) if letter != "."]
    raise ValueError(f"no gold player for {kind}")


class GemEpisode:
    """One GEM game, played once in this worker (see the module docstring)."""

    def reset(self, seed=None):
        self._env = None
        return "Send a request.", {}

    def step(self, action):
        request = _json.loads(action)
        op = request.get("op")
        if op == "start":
            gem = _importlib.import_module("gem")
            self._env = gem.make(str(request["game"]))
            observation, info = self._env.reset(seed=int(request["seed"]))
            return _with_suffix(observation, info), 0.0, False, False, {}
        if self._env is None:
            raise RuntimeError("start the episode first")
        if op == "gold":
            return _json.dumps(_gold(self._env)), 0.0, False, False, {}
        if op == "move":
            observation, reward, terminated, truncated, info = self._env.step(
                str(request["text"]))
            return (_with_suffix(str(observation), info), float(reward), bool(terminated),
                    bool(truncated), {})
        raise ValueError(f"unknown request {op!r}")

    def solution(self):
        return None

    def close(self):
        pass
