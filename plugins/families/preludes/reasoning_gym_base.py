"""``ReasoningGymEnv``: the base class of reasoning-gym environment programs.

Trusted prelude source: the sandbox runs it unrestricted in its worker (after the answer helpers of
``plugins/families/answers.py``) and injects the names in ``__all__`` into each program of the
``reasoning-gym`` family. A program only names a registered reasoning-gym dataset and its options::

    class LegCountingEnv(ReasoningGymEnv):
        dataset = "leg_counting"
        config = {"min_animals": 3, "max_animals": 6}

``reset(seed)`` generates the dataset's instance for that seed, ``step(answer)`` scores the answer
with the dataset's own ``score_answer`` and ``solution()`` gives the oracle answer. The library
objects (dataset, entry) live in this module's ``_EPISODES`` table, never on the instance, and no
method returns one: program code may read private attributes and call private methods of its own
objects (and of this prelude's), but it cannot reach this module's unexported globals, so it
never holds a reasoning-gym object.
"""

import random as _random
import re as _re

import reasoning_gym as _reasoning_gym
from reasoning_gym.factory import DATASETS as _DATASETS

if "extract_boxed" not in globals():  # imported as a module rather than run as a prelude
    from plugins.families.answers import extract_boxed

# Run as a prelude after the answer helpers, the exported names add to theirs.
__all__ = list(globals().get("__all__", [])) + ["ReasoningGymEnv"]

_ANSWER_TAG = _re.compile(r"<answer>(.*?)</answer>", _re.DOTALL)
#: Config fields the base class sets itself (one instance per seed).
_RESERVED = ("seed", "size")
#: Options that name a file, a folder or a URL (``spell_backward``'s ``data_file``): trusted
#: library code would read whatever a program names there, so programs may not set them.
_FILE_OPTION = _re.compile(r"(^|_)(file|files|path|paths|dir|dirs|directory|url)$")
#: The live episode of each environment instance, keyed by ``id(env)``: trusted state that
#: program code cannot reach (it is not exported and the prelude's globals are not readable).
_EPISODES = {}


class _Episode:
    """One generated instance: the dataset object, its entry and how the agent did so far."""

    __slots__ = ("dataset", "entry", "seed", "attempts", "done", "best")

    def __init__(self, dataset, entry, seed):
        self.dataset = dataset
        self.entry = entry
        self.seed = seed
        self.attempts = 0
        self.done = False
        self.best = 0.0


def _dataset_spec(cls):
    """``(name, config dict)`` of an environment class, checked against the registry; raises
    ``ValueError`` saying what would be right."""
    name = getattr(cls, "dataset", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{cls.__name__}.dataset must name a reasoning-gym dataset, e.g. "
                         "dataset = \"leg_counting\"")
    if name not in _DATASETS:
        close = [n for n in sorted(_DATASETS) if n[:3] == name[:3]][:5] or sorted(_DATASETS)[:8]
        raise ValueError(f"{cls.__name__}.dataset {name!r} is not a reasoning-gym dataset "
                         f"(reasoning-gym {_reasoning_gym.__version__}); e.g. {', '.join(close)}")
    config = getattr(cls, "config", None) or {}
    if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
        raise ValueError(f"{cls.__name__}.config must be a dict of {name} options")
    reserved = [k for k in config if k in _RESERVED]
    if reserved:
        raise ValueError(f"{cls.__name__}.config must not set {', '.join(reserved)}: the seed "
                         "comes from reset(seed) and each environment is one instance")
    config_cls = _DATASETS[name][1]
    known = [f for f in config_cls.__dataclass_fields__ if f not in _RESERVED]
    unknown = [k for k in config if k not in known]
    if unknown:
        raise ValueError(f"{cls.__name__}.config: {name} has no option {', '.join(unknown)}; "
                         f"its options are {', '.join(known)}")
    files = [k for k in config if _FILE_OPTION.search(k)]
    if files:
        raise ValueError(f"{cls.__name__}.config must not set {', '.join(files)}: options that "
                         "name files are not available to programs (the dataset's default is used)")
    return name, dict(config)


def _episode_of(env):
    """The live episode of ``env`` (a module function, not a method: program code can call its
    own objects' private methods, and must never receive the dataset or its entry)."""
    episode = _EPISODES.get(id(env))
    if episode is None:
        raise RuntimeError("call reset(seed) before step() or solution()")
    return episode


def _answer_text(action):
    """The agent's answer: the last ``\\boxed{}``, else the last ``<answer>...</answer>``, else
    the whole reply."""
    boxed = extract_boxed(action)
    if boxed is not None:
        return boxed.strip()
    tags = _ANSWER_TAG.findall(action)
    if tags:
        return tags[-1].strip()
    return action.strip()


def _oracle_action(answer):
    """An action whose answer text is exactly ``answer``: boxed when the box reads back
    unchanged (balanced braces), else in answer tags, else the bare text."""
    boxed = "\\boxed{" + answer + "}"
    if extract_boxed(boxed) == answer and answer == answer.strip():
        return boxed
    tagged = "<answer>" + answer + "</answer>"
    if "</answer>" not in answer and "\\boxed" not in answer and answer == answer.strip():
        return tagged
    return answer


class ReasoningGymEnv:
    """One reasoning-gym dataset as an environment: each seed is one generated question.

    Programs set ``dataset`` (a registered reasoning-gym name), optionally ``config`` (options
    of that dataset's config class; ``seed`` and ``size`` are set here) and ``max_attempts``
    (answers allowed; the reward of the last one counts). Rewards are the dataset's own
    ``score_answer`` in [0, 1]; an episode terminates on a full score or when the attempts are
    used up.
    """

    dataset = None
    config = {}
    max_attempts = 1
    #: Appended to every question (reasoning-gym questions do not all state an answer format).
    answer_instruction = ("Give your final answer inside \\boxed{...} (or <answer>...</answer> "
                          "for answers with braces or several lines).")

    def __init__(self, max_attempts=None, **kwargs):
        _dataset_spec(type(self))  # a wrong dataset name or option fails at load, clearly
        if max_attempts is not None:
            self.max_attempts = max_attempts
        if not isinstance(self.max_attempts, int) or self.max_attempts < 1:
            raise ValueError("max_attempts must be a positive int")

    def reset(self, seed=None):
        """Generate the dataset's instance for ``seed`` (a random one when ``None``)."""
        name, config = _dataset_spec(type(self))
        if seed is None:
            seed = _random.randrange(1 << 31)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError("seed must be an int or None")
        dataset = _reasoning_gym.create_dataset(name, seed=seed, size=1, **config)
        entry = dataset[0]
        _EPISODES[id(self)] = _Episode(dataset, entry, seed)
        question = str(entry["question"]).rstrip()
        if self.answer_instruction:
            question += "\n\n" + self.answer_instruction
        return question, {"dataset": name, "seed": seed, "attempts_left": self.max_attempts}

    def step(self, action):
        """Score ``action``'s answer with the dataset's ``score_answer``."""
        episode = _episode_of(self)
        name = type(self).dataset
        if episode.done:
            return "The episode is over; call reset().", 0.0, True, False, {"dataset": name}
        episode.attempts += 1
        answer = _answer_text(action if isinstance(action, str) else str(action))
        try:
            score = float(episode.dataset.score_answer(answer, episode.entry))
        except Exception:  # noqa: BLE001 - agent text the scorer cannot read scores 0
            score = 0.0
        score = min(max(score, 0.0), 1.0) if score == score else 0.0
        episode.best = max(episode.best, score)
        left = self.max_attempts - episode.attempts
        info = {"dataset": name, "score": score, "attempts_left": left}
        if score >= 1.0:
            episode.done = True
            return "Correct!", 1.0, True, False, info
        if left <= 0:
            episode.done = True
            return ("Not fully correct (score {:.2f}).".format(score), score, True, False, info)
        return ("Not correct (score {:.2f}). {} attempt{} left; answer again.".format(
            score, left, "" if left == 1 else "s"), score, False, False, info)

    def solution(self):
        """The oracle answer as an action (``\\boxed{answer}``), or ``None`` for datasets that
        score answers without a single oracle (then solvability is unverified)."""
        answer = _episode_of(self).entry.get("answer")
        if answer is None:
            return None
        return _oracle_action(str(answer))

    def close(self):
        _EPISODES.pop(id(self), None)
