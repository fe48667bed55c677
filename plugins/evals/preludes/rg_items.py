"""``ReasoningGymItems``: the held-out items of one reasoning-gym dataset kept in ONE environment
instance, so that each item is generated once and every reply to it is scored there.

Trusted prelude source of the ``reasoning-gym`` eval suite, run in a sandbox worker after the
reasoning-gym family's prelude (``plugins/families/preludes/reasoning_gym_base.py``), whose
globals it uses (``ReasoningGymEnv``, ``_dataset_spec``, ``_reasoning_gym``, ``extract_boxed``).
A program subclasses it and names the dataset, as a family program does::

    class LegCountingEnv(ReasoningGymItems):
        dataset = "leg_counting"
        config = {"min_animals": 20}

``reset(seed)`` generates the item at ``seed`` (once; a second reset of the same seed reads it
back) and returns its question, with the oracle answer in ``info["oracle"]``; a generator that
raises leaves the instance alive and says why in ``info["error"]``. ``step(request)`` takes the
JSON the host built, ``{"replies": [[seed, reply], ...]}``, scores each reply with the dataset's
own ``score_answer`` against the item at its seed (generating it first if this instance has not)
and returns the scores in ``info["scores"]``. The dataset objects and entries stay in this
module's ``_ITEMS`` table, never on the instance (as in the family's prelude).

Two ways to number items: ``dataset_seed = None`` (the default) makes the item at seed ``s`` the
first entry of the dataset built with ``seed=s``; ``dataset_seed = 42`` reads the entry that
``random.seed(s); random.choice(dataset)`` picks from ONE dataset built with ``seed=42`` and
``size=dataset_size``, which is how the SPADE reference draws the episodes of its hard split.
``extraction`` chooses how a reply's answer is read: ``"boxed"`` (the family's order: the last
``\\boxed{}``, else the last ``<answer>``) or ``"answer_tag"`` (the reference's: the last
``<answer>...</answer>``, any case, else the last ``\\boxed{...}``, else no answer).
"""

import json as _items_json
import random as _items_random
import re as _items_re

__all__ = list(globals().get("__all__", [])) + ["ReasoningGymItems"]

#: id(env) -> {"datasets": {seed or None: dataset}, "entries": {seed: (dataset, entry)}}.
_ITEMS = {}
_TAG_ANY_CASE = _items_re.compile(r"<answer>\s*(.*?)\s*</answer>", _items_re.DOTALL |
                                  _items_re.IGNORECASE)
#: Longest oracle sent back in ``info`` (longer ones are left out: the item has no gold reply).
_MAX_ORACLE = 16_000


def _table(env):
    return _ITEMS.setdefault(id(env), {"datasets": {}, "entries": {}})


def _entry(env, seed):
    """``(dataset, entry)`` of the item at ``seed``, generated on first use."""
    table = _table(env)
    found = table["entries"].get(seed)
    if found is not None:
        return found
    name, config = _dataset_spec(type(env))
    shared = type(env).dataset_seed
    if shared is None:
        dataset = _reasoning_gym.create_dataset(name, seed=seed, size=1, **config)
        found = (dataset, dataset[0])
    else:
        dataset = table["datasets"].get(None)
        if dataset is None:
            dataset = _reasoning_gym.create_dataset(name, seed=shared,
                                                    size=type(env).dataset_size, **config)
            table["datasets"][None] = dataset
        index = _items_random.Random(seed).choice(range(len(dataset)))
        found = (dataset, dataset[index])
    table["entries"][seed] = found
    return found


def _last_boxed_braced(text):
    """The content of the last ``\\boxed{...}`` with balanced braces, else ``None`` (an
    unclosed or brace-less last box reads as no answer)."""
    start = text.rfind("\\boxed")
    if start < 0 or not text.startswith("\\boxed{", start):
        return None
    depth = 0
    for i in range(start + len("\\boxed"), len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[start + len("\\boxed{"):i]
    return None


def _read_answer(env, reply):
    if type(env).extraction == "answer_tag":
        tags = _TAG_ANY_CASE.findall(reply)
        if tags:
            return tags[-1].strip()
        return _last_boxed_braced(reply)
    return _answer_text(reply)


def _score(env, seed, reply):
    try:
        dataset, entry = _entry(env, seed)
        score = float(dataset.score_answer(_read_answer(env, reply), entry))
    except Exception:  # noqa: BLE001 - a reply the scorer cannot read scores 0
        return 0.0
    return min(max(score, 0.0), 1.0) if score == score else 0.0


class ReasoningGymItems(ReasoningGymEnv):
    """Items of one dataset in one instance: ``reset(seed)`` generates an item, ``step`` scores
    a batch of replies to items of this instance (see the module docstring)."""

    dataset_seed = None
    dataset_size = 500
    extraction = "boxed"

    def reset(self, seed=None):
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError("reset(seed): seed must be an int")
        try:
            _, entry = _entry(self, seed)
            question = str(entry["question"]).rstrip()
        except Exception as exc:  # noqa: BLE001 - reported, the instance keeps its other items
            return "", {"error": (type(exc).__name__ + ": " + str(exc))[:500], "seed": seed}
        if self.answer_instruction:
            question += "\n\n" + self.answer_instruction
        answer = entry.get("answer")
        oracle = None if answer is None or len(str(answer)) > _MAX_ORACLE else str(answer)
        return question, {"seed": seed, "oracle": oracle}

    def step(self, action):
        request = _items_json.loads(action)
        scores = [_score(self, int(seed), str(reply)) for seed, reply in request["replies"]]
        mean = sum(scores) / len(scores) if scores else 0.0
        return "Scored.", mean, False, False, {"scores": scores}

    def solution(self):
        return None

    def close(self):
        _ITEMS.pop(id(self), None)
