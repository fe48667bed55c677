"""Fakes for unit tests of the self-play loop: a scripted backend, an in-process sandbox for
trusted test programs, a dict memory, a list corpus and a two-slot family. Never used outside tests.
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace

from spade_core.errors import SandboxError
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import (
    CorpusSampler,
    EnvFamily,
    Generation,
    GenerationBackend,
    Sandbox,
    SandboxSession,
    TrainableBackend,
)
from spade_core.interfaces.memory import EnvMemory
from spade_core.records import (DesignTarget, Document, EnvIteration, EnvRecord, Episode,
                                StepResult, Verdict)

FAKE_SKELETON = '''
# {{QUESTION}}: the question
# {{ANSWER}}: the exact answer
class QAEnv:
    def reset(self, seed=None):
        return "Question: " + {{QUESTION}}, {}

    def step(self, action):
        ok = action.strip() == "\\\\boxed{" + {{ANSWER}} + "}"
        return ("correct" if ok else "wrong"), (1.0 if ok else 0.0), True, False, {}

    def solution(self):
        return "\\\\boxed{" + {{ANSWER}} + "}"
'''


class FakeFamily(EnvFamily):
    name = "fake-qa"
    prelude = ""

    def designer_guide(self):
        return "Write a question."

    def skeleton(self):
        return FAKE_SKELETON

    def agent_instructions(self):
        return "Answer with \\boxed{...}."

    def seed_programs(self):
        return []

    def solution_actions(self, solution, tools=None):
        return [solution] if isinstance(solution, str) else solution


class FakeCheckingFamily(FakeFamily):
    """The fake family, able to tell when a hint claims another answer than its solution's."""

    def hint_contradicts(self, hint, solution_actions):
        from spade_core.selfplay.hint_writer import contradicts_answer

        return contradicts_answer(hint, solution_actions, lambda a, b: a.strip() == b.strip())


class FakeSkilledFamily(FakeFamily):
    """The fake family with two skills and three levels, rotated like the built-in families."""

    name = "fake-qa"
    skills = ("alpha", "beta")

    def designer_guide(self, skill=None):
        return f"Write a question about {skill or 'anything'}."

    def design_target(self, n):
        return DesignTarget(skill=self.skills[n % 2], level=1 + n % 3)

    def target_brief(self, target):
        return f"LEVEL {target.level} of 3."


class FakeScriptedBackend(GenerationBackend):
    """Designer: a fixed question per document; hints: fixed text; agent: right only when hinted
    (so regret is 1), or always right when ``always_right`` (so the env gets mastered)."""

    HINT = "Think, then box the number. ```code``` The answer is 42."

    def __init__(self, always_right=False, repairable=False, learn_after=None, hint=HINT,
                 validator=None):
        self.always_right = always_right
        #: How LLM validator calls are answered: ``validator(program text)`` gives the reply
        #: (default ``\\boxed{yes}``); ``validator_prompts`` records each such conversation.
        self.validator = validator or (lambda program: "\\boxed{yes}")
        self.validator_prompts = []
        #: What every hint call answers; ``hint_prompts`` records each hint call's conversation.
        self.hint = hint
        self.hint_prompts = []
        #: When set, the agent answers a question right once it has started more than this many
        #: episodes of it: success that rises with practice, for replay tests.
        self.learn_after = learn_after
        self.episodes_seen = {}
        #: A "broken" document gets a valid answer once the verdict came back (a repair turn).
        self.repairable = repairable
        self.designer_prompts = []
        self.calls = 0
        #: ``(role, temperature, top_p, top_k, chat_template_kwargs)`` of every prompt.
        self.sampling = []

    #: When true, every reply carries made-up log-probs (one per word), as vLLM's replies do.
    with_logprobs = False

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        self.calls += 1
        out = []
        for messages in conversations:
            system = messages[0]["content"]
            role = ("designer" if system.startswith("You are an environment designer") else
                    "hint" if system.startswith("You are a coach") else
                    "validator" if system.startswith("You review") else "agent")
            self.sampling.append((role, temperature, top_p, top_k, chat_template_kwargs))
            text = " ".join(m["content"] for m in messages)
            if system.startswith("You are an environment designer"):
                self.designer_prompts.append(messages)
                repaired = self.repairable and "no environment program found" in \
                    messages[-1]["content"]
                if "broken" in text and not repaired:
                    out.append(Generation(text="I cannot do that."))
                else:
                    first = next((m for m in messages if "Document:\n" in m["content"]), None)
                    doc = (first["content"].split("Document:\n")[1].split("\n")[0] if first
                           else f"undocumented {len(self.designer_prompts)}")  # corpus: none
                    out.append(Generation(text=f"QUESTION: what is {doc}?\nANSWER: 42"))
            elif role == "validator":
                self.validator_prompts.append(messages)
                out.append(Generation(text=self.validator(messages[1]["content"])))
            elif system.startswith("You are a coach"):
                self.hint_prompts.append(messages)
                out.append(Generation(text=self.hint))
            elif self.learn_after is not None:
                question = messages[1]["content"].split("\n")[0]
                if len(messages) == 2:  # the first turn of an episode
                    self.episodes_seen[question] = self.episodes_seen.get(question, 0) + 1
                right = self.episodes_seen.get(question, 0) > self.learn_after
                out.append(Generation(text="\\boxed{42}" if right else "\\boxed{7}"))
            else:
                right = self.always_right or "HINT:" in text
                out.append(Generation(text="\\boxed{42}" if right else "\\boxed{7}"))
        if self.with_logprobs:
            for generation in out:
                generation.logprobs = [-0.25] * max(1, len(generation.text.split()))
        return out

    def close(self):
        pass


class FakeScriptedDesignsOverEngine(TrainableBackend):
    """A real trainable engine (vLLM) that plays the agent, the scripted backend above writing
    every other reply (designs, hints, verdicts): the loop gets valid environments whatever the
    small model writes, and the agent's replies, their log-probabilities and the weight pushes
    are the engine's. Every ``right_every``-th agent reply of a call is replaced by the right
    answer, so that rewards differ within a group and an update moves the policy."""

    def __init__(self, engine, right_every=3):
        self.engine = engine
        self.scripted = FakeScriptedBackend()
        self.right_every = right_every

    @property
    def batch_size(self):
        return self.engine.batch_size

    def generate(self, conversations, **kwargs):
        agent = [not (c[0]["content"].startswith(("You are an environment designer",
                                                  "You are a coach", "You review")))
                 for c in conversations]
        played = iter(self.engine.generate([c for c, a in zip(conversations, agent) if a],
                                           **kwargs) if any(agent) else [])
        scripted = iter(self.scripted.generate(
            [c for c, a in zip(conversations, agent) if not a], **kwargs)
            if not all(agent) else [])
        out = [next(played) if a else next(scripted) for a in agent]
        for k, generation in enumerate(g for g, a in zip(out, agent) if a):
            if k % self.right_every == 0:
                generation.text, generation.logprobs = "\\boxed{42}", None
                generation.completion_ids = None
        return out

    def policy(self):
        return self.engine.policy()

    def update_weights(self, named_parameters):
        self.engine.update_weights(named_parameters)

    def close(self):
        pass


class _FakeSession(SandboxSession):
    def __init__(self, env):
        self.env = env

    def reset(self, seed=None):
        return self.env.reset(seed)

    def step(self, action):
        obs, reward, term, trunc, info = self.env.step(action)
        return StepResult(obs, float(reward), bool(term), bool(trunc), dict(info))

    def solution(self):
        return self.env.solution()

    def close(self):
        pass


class FakeInProcessSandbox(Sandbox):
    """Runs TRUSTED test programs with plain exec in this process: wiring tests only."""

    def isolation(self):
        return {"level": "none", "fake": True}

    def _load(self, program):
        namespace = {}
        exec(compile(program, "<test program>", "exec"), namespace)
        classes = [v for k, v in namespace.items() if k.endswith("Env") and isinstance(v, type)]
        return classes[0]()

    def open(self, program, family=None):
        try:
            return _FakeSession(self._load(program))
        except Exception as exc:
            raise SandboxError(Verdict(False, "runtime_error", str(exc))) from exc

    def close(self):
        pass


class FakeDictMemory(EnvMemory):
    """Records in a dict; checkpoints through the base class's default (JSON lines)."""

    def __init__(self, mastery_wins=1.0):
        self.by_id = {}
        self.mastery_wins = mastery_wins

    def find_duplicate(self, program):
        for record in self.by_id.values():
            if record.status == "mastered" and record.source == program.source:
                return record, 0.99
        return None

    def add(self, record):
        if record.id in self.by_id:
            self.by_id[record.id].times_proposed += 1
        else:
            self.by_id[record.id] = record

    def update_stats(self, env_id, iteration, hinted, unhinted, figures, designer_reward):
        record = self.by_id[env_id]
        wins = sum(r >= 1.0 for r in unhinted) / len(unhinted)
        status = "mastered" if wins >= self.mastery_wins else "frontier"
        earlier = [h for h in record.history if h.iteration == iteration]
        entry = EnvIteration(iteration, [*(x for h in earlier for x in h.hinted), *hinted],
                             [*(x for h in earlier for x in h.unhinted), *unhinted],
                             dict(figures), designer_reward)
        history = [h for h in record.history if h.iteration != iteration]
        record = replace(record, status=status, stats=dict(figures), history=[*history, entry])
        self.by_id[env_id] = record
        return record

    def get(self, env_id):
        return self.by_id.get(env_id)

    def frontier_examples(self, k, family=None):
        return [r for r in self.by_id.values() if r.status == "frontier"][:k]

    def negative_examples(self, k, family=None):
        return [r for r in self.by_id.values() if r.status == "mastered"][:k]

    def records(self):
        return iter(list(self.by_id.values()))

    def search(self, query, k=10, *, statuses=None, family=None):
        """Similarity 1.0 for the same source, else 0.0 (enough for loop tests)."""
        source = query if isinstance(query, str) else query.source
        own = query.id if isinstance(query, EnvRecord) else None
        hits = [(r, 1.0 if r.source == source else 0.0) for r in self.by_id.values()
                if r.id != own and (statuses is None or r.status in statuses)
                and (family is None or r.family == family)]
        return sorted(hits, key=lambda hit: -hit[1])[:k]

    def set_status(self, env_id, status):
        self.by_id[env_id] = replace(self.by_id[env_id], status=status)
        return self.by_id[env_id]

    def clear(self):
        self.by_id.clear()


class FakeListCorpus(CorpusSampler):
    def __init__(self, texts):
        self.texts = texts
        self.position = 0

    def sample(self, n):
        docs = []
        for _ in range(n):
            i = self.position % len(self.texts)
            docs.append(Document(id=f"d{i}", text=self.texts[i]))
            self.position += 1
        return docs

    def state_dict(self):
        return {"position": self.position}

    def load_state_dict(self, state):
        self.position = state["position"]


class FakeSelfPlayPlugin:
    def __init__(self, always_right=False, texts=("six times seven", "forty two"),
                 repairable=False, learn_after=None, family=FakeFamily,
                 hint=FakeScriptedBackend.HINT, validator=None):
        self.always_right = always_right
        self.hint = hint
        #: Backends built as ``fake-hint-backend`` (config ``hints.backend``).
        self.hint_backends = []
        #: The policy's answers to validator calls (``FakeScriptedBackend.validator``); backends
        #: built as ``fake-validator-backend`` (``validation.llm.backend``) never give a verdict.
        self.validator = validator
        self.validator_backends = []
        self.repairable = repairable
        self.learn_after = learn_after
        self.family = family
        self.texts = list(texts)
        self.backends = []

    def _backend(self, options, context):
        self.backends.append(FakeScriptedBackend(self.always_right, self.repairable,
                                                 self.learn_after, self.hint,
                                                 self.validator))
        return self.backends[-1]

    def _validator_backend(self, options, context):
        self.validator_backends.append(FakeScriptedBackend(
            validator=lambda program: "It looks playable to me."))
        return self.validator_backends[-1]

    def _hint_backend(self, options, context):
        self.hint_backends.append(FakeScriptedBackend(hint="Count carefully, then box it."))
        return self.hint_backends[-1]

    @hookimpl
    def register_generation_backends(self, register):
        register("fake-backend", self._backend)
        register("fake-hint-backend", self._hint_backend)
        register("fake-validator-backend", self._validator_backend)

    @hookimpl
    def register_sandboxes(self, register):
        register("fake-sandbox", lambda o, c: FakeInProcessSandbox())

    @hookimpl
    def register_env_memories(self, register):
        register("fake-memory", lambda o, c: FakeDictMemory())

    @hookimpl
    def register_corpus_samplers(self, register):
        register("fake-corpus", lambda o, c: FakeListCorpus(self.texts))

    @hookimpl
    def register_env_families(self, register):
        register("fake-qa", lambda o, c: self.family())


class RecordingPlugin:
    """Records every run event it receives."""

    def __init__(self):
        self.events = []

    @hookimpl
    def spade_run_start(self, run_info):
        self.events.append(("run_start", run_info.run_dir))

    @hookimpl
    def spade_iteration_end(self, run_info, iteration, metrics):
        self.events.append(("iteration_end", iteration, metrics))

    @hookimpl
    def spade_phase_progress(self, run_info, iteration, phase, completed, total):
        self.events.append(("phase_progress", iteration, phase, completed, total))

    @hookimpl
    def spade_env_accepted(self, run_info, record):
        self.events.append(("env_accepted", record.id))

    @hookimpl
    def spade_env_mastered(self, run_info, record):
        self.events.append(("env_mastered", record.id))

    @hookimpl
    def spade_run_end(self, run_info, status, error):
        self.events.append(("run_end", status, error))


FAKE_RUN_CONFIG = {
    "run": {"name": "t", "iterations": 2},
    "loop": {"envs_per_iteration": 2, "rollouts_per_env": 3, "max_turns": 2},
    "corpus": "fake-corpus", "designer": "skeleton", "families": ["fake-qa"],
    "sandbox": "fake-sandbox", "estimator": "regret", "memory": "fake-memory",
    "backend": "fake-backend", "trainer": "none",
}


def run_real_sandbox_and_memory(tmp_path, plugins, iterations, loop, **sections):
    """Run the real loop with the fakes above through the real ``process`` sandbox (one fork
    server) and the real ``faiss`` memory (hashing embedder, mastered after 2 wins); returns the
    run directory and its metrics rows. ``plugins`` are loaded beside the sandbox and memory
    plugins; ``sections`` replace whole config sections."""
    import json

    import envmemory.plugin as envmemory_plugin
    import sandbox.plugin as sandbox_plugin
    from spade_core.config.load import resolve_config
    from spade_core.selfplay.run_loop import run
    from spade_core.testing import load_test_plugins

    loaded = load_test_plugins(*plugins, envmemory_plugin, sandbox_plugin)
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"].update(dir=str(tmp_path / "run"), iterations=iterations)
    data["loop"] = loop
    data["sandbox"] = {"plugin": "process", "options": {"workers": 1}}
    data["memory"] = {"plugin": "faiss", "options": {
        "embedder": "hashing", "structural_match": False, "mastery_rollouts": 2,
        "too_hard_rollouts": 50}}
    data.update(sections)
    run_dir = run(resolve_config(data, loaded.registry, "test.yaml"), loaded,
                  report=lambda message: None)
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return run_dir, rows


def metrics(run_dir):
    """The rows of a run's ``metrics.jsonl``."""
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def one_iteration(tmp_path, plugin, **loop):
    """One iteration with ``plugin``'s fakes and ``loop`` overrides; returns the run directory."""
    import plugins.designer.plugin as designer_plugin
    import plugins.difficulty_estimators as estimators_plugin
    import plugins.trainers.plugin as trainers_plugin
    from spade_core.config.load import resolve_config
    from spade_core.selfplay.run_loop import run
    from spade_core.testing import load_test_plugins

    loaded = load_test_plugins(plugin, designer_plugin, estimators_plugin, trainers_plugin)
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"].update(dir=str(tmp_path / "run"), iterations=1)
    data["loop"] = {**data["loop"], **loop}
    return run(resolve_config(data, loaded.registry, "test.yaml"), loaded,
               report=lambda message: None)


def make_run(tmp_path, overrides=None, **plugin_kwargs):
    """A run of ``FAKE_RUN_CONFIG`` with ``FakeSelfPlayPlugin(**plugin_kwargs)`` and top-level
    config ``overrides``; returns the run directory and the ``RecordingPlugin`` that saw it."""
    import plugins.designer.plugin as designer_plugin
    import plugins.difficulty_estimators as estimators_plugin
    import plugins.trainers.plugin as trainers_plugin
    from spade_core.config.load import resolve_config
    from spade_core.selfplay.run_loop import run
    from spade_core.testing import load_test_plugins

    recorder = RecordingPlugin()
    loaded = load_test_plugins(FakeSelfPlayPlugin(**plugin_kwargs), designer_plugin,
                               estimators_plugin, trainers_plugin, recorder)
    assert not [p.error for p in loaded.plugins if p.error]
    data = copy.deepcopy(FAKE_RUN_CONFIG)
    data["run"]["dir"] = str(tmp_path / "run")
    for key, value in (overrides or {}).items():
        data[key] = value
    resolved = resolve_config(data, loaded.registry, "test.yaml")
    run_dir = run(resolved, loaded, report=lambda message: None)
    return run_dir, recorder


#: The replay scenario: iteration 0 proposes A; iteration 1 proposes B and replays A (now
#: learned: mastered); iteration 2 proposes C, a near-duplicate of A, which the memory refuses,
#: and replays B.
REPLAY_TEXTS = ("six times seven", "forty two", "six times seven!")


def replay_run(tmp_path, **loop):
    """Three frontier iterations of :data:`REPLAY_TEXTS` with the real process sandbox and the
    real FAISS memory (``loop`` overrides the loop keys); returns the run directory and rows."""
    import plugins.designer.plugin as designer_plugin
    import plugins.difficulty_estimators as estimators_plugin
    import plugins.trainers.plugin as trainers_plugin

    plugin = FakeSelfPlayPlugin(texts=REPLAY_TEXTS, learn_after=4)
    return run_real_sandbox_and_memory(
        tmp_path, (plugin, designer_plugin, estimators_plugin, trainers_plugin), 3,
        {"envs_per_iteration": 1, "rollouts_per_env": 2, "max_turns": 1, "replay_envs": 2,
         "schedule": "frontier", **loop})


def qa_program(question, answer="42"):
    """:data:`FAKE_SKELETON` filled in: a one-question environment."""
    return (FAKE_SKELETON.replace("{{QUESTION}}", json.dumps(question))
            .replace("{{ANSWER}}", json.dumps(answer)))


def accepted_proposal(program, family=None, index=0):
    """A proposal of ``program`` judged valid and accepted onto the frontier, as the design
    and dedupe steps leave it for the hint and play steps."""
    from spade_core.selfplay.proposal import Proposal

    p = Proposal(index=index, family=family or FakeFamily(),
                 document=Document(id=f"doc-{index}", text="six"), prompt=[],
                 completions=[program], program=program)
    p.verdict = Verdict(True, "ok", "valid")
    p.accept()
    return p


def played_proposal(program="class A: ..."):
    """An accepted proposal after play: two unhinted plays (rewards 1 and 0) and one hinted
    (1), each conversation a question and its one reply ("a", "b", "c"), designer reward 0.7."""
    p = accepted_proposal(program)
    p.prompt = [{"role": "user", "content": "Design."}]
    p.unhinted = [Episode(env_id="", seed=s, hinted=False, first_observation="", reward=r)
                  for s, r in ((0, 1.0), (1, 0.0))]
    p.hinted = [Episode(env_id="", seed=0, hinted=True, first_observation="", reward=1.0)]
    p.conversations = [[{"role": "user", "content": "Question"},
                        {"role": "assistant", "content": reply}] for reply in "abc"]
    p.designer_reward = 0.7
    return p
