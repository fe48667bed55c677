"""Playing environments (spade_core.selfplay.rollouts) on the fake in-process sandbox with a
scripted backend: episodes and conversations come back per request in order, the hint in the
first observation, a program that cannot open ends its episodes with the error."""

from __future__ import annotations

from spade_core.interfaces import Generation, GenerationBackend
from spade_core.selfplay.rollouts import RolloutRequest, episode_reward, run_rollouts

from fakes.selfplay import FakeFamily, FakeInProcessSandbox

#: Asks for the seed back: the agent is right when it repeats the number in the question.
PROGRAM = '''
class EchoEnv:
    def reset(self, seed=None):
        self.seed = seed
        return f"Say {seed}.", {}

    def step(self, action):
        ok = action.strip() == str(self.seed)
        return ("right" if ok else "wrong"), (1.0 if ok else 0.0), True, False, {}
'''


class _Echo(GenerationBackend):
    """Replies with the number asked for when the question carries a hint, else "no"."""

    def generate(self, conversations, **kwargs):
        out = []
        for messages in conversations:
            question = messages[-1]["content"]
            number = question.split()[1].rstrip(".")
            out.append(Generation(text=number if "HINT" in question else "no"))
        return out


def test_rewards_and_conversations_come_back_per_request_in_order():
    done = []
    requests = [RolloutRequest("a", PROGRAM, FakeFamily(), seeds=[3, 4]),
                RolloutRequest("a", PROGRAM, FakeFamily(), seeds=[5], hint="Repeat it."),
                RolloutRequest("b", "raise ValueError('broken')", FakeFamily(), seeds=[1])]
    episodes, conversations = run_rollouts(
        FakeInProcessSandbox(), _Echo(), requests, max_turns=2, max_new_tokens=8,
        temperature=1.0, seed=0, on_done=done.append)
    assert [[e.seed for e in group] for group in episodes] == [[3, 4], [5], [1]]
    assert [[e.reward for e in group] for group in episodes[:2]] == [[0.0, 0.0], [1.0]]
    assert episodes[1][0].hinted and episodes[1][0].first_observation.endswith("Repeat it.")
    assert conversations[0][1] == [
        {"role": "system", "content": "Answer with \\boxed{...}."},
        {"role": "user", "content": "Say 4."}, {"role": "assistant", "content": "no"}]
    [broken] = episodes[2]
    assert "broken" in broken.error and broken.reward == 0.0 and conversations[2] == [[]]
    assert sum(done) == 4  # every episode reported ended once


def test_the_reward_is_the_last_steps_clipped_only_when_terminated():
    from spade_core.records import Turn

    assert episode_reward([Turn("a", "", 5.0, terminated=True)]) == 1.0
    assert episode_reward([Turn("a", "", -3.0, terminated=True)]) == -1.0
    assert episode_reward([Turn("a", "", 1.0, truncated=True)]) == 0.0
    assert episode_reward([]) == 0.0
