"""What a reply becomes under the reference's episode protocols: the ``\\boxed{}`` action games are
stepped with (``action: boxed``), replies cut off without an end of sequence
(``loop.end_on_truncation``), and the malformed-tool-call check; the rollouts run in the real
sandbox."""

from __future__ import annotations

import pytest

from plugins.families.reasoning import ReasoningFamily
from plugins.families.replies import (
    after_thinking,
    boxed_action,
    boxed_content,
    boxed_instructions,
    malformed_tool_call,
    tool_calls,
)
from spade_core.interfaces.backend import Generation


@pytest.mark.parametrize("reply,action", [
    ("I think \\boxed{up}, no wait \\boxed{down}", "\\boxed{up}"),  # the first, not the last
    ("\\boxed{ 42 }", "\\boxed{42}"),
    ("\\boxed{{7}}", "\\boxed{7}"),  # brace-free content of the double-brace form
    ("so \\boxed{\\frac{1}{2}}.", "\\boxed{\\frac{1}{2}}"),  # nested: balanced content
    ("a \\boxed{\\frac{1}{2}} b \\boxed{\\sqrt{4}}", "\\boxed{\\sqrt{4}}"),  # nested: the last
    ("\\boxed{{{x^{2}}}}", "\\boxed{x^{2}}"),  # up to two outer layers stripped
    ("  no box here  ", "no box here"),  # nothing boxed: the whole reply, stripped
    ("\\boxed{ } then", "\\boxed{ } then"),  # empty content: the whole reply
    ("\\boxed{unclosed", "\\boxed{unclosed"),
    ("<think>\\boxed{1}</think>\n\\boxed{2}", "\\boxed{2}"),  # only after the last </think>
    ("<think>a</think><think>\\boxed{3}</think> plain", "plain"),
])
def test_boxed_action_as_the_reference_extracts_it(reply, action):
    assert boxed_action(reply) == action


def test_boxed_content_and_thinking():
    assert boxed_content("") is None and boxed_content("\\boxed") is None
    assert after_thinking("no thinking") == "no thinking"
    assert after_thinking("<think>x</think>y</think>z") == "z"


def test_boxed_instructions_say_the_first_box_counts():
    family = ReasoningFamily(action="boxed")
    assert "Only the first \\boxed{} of your reply counts." in " ".join(
        family.agent_instructions().split())
    assert ReasoningFamily().agent_instructions() == boxed_instructions(
        ReasoningFamily().agent_instructions(), "raw")
    assert family.action_from_reply("x \\boxed{1} \\boxed{2}") == "\\boxed{1}"
    assert ReasoningFamily().action_from_reply(" x \\boxed{1} ") == " x \\boxed{1} "


@pytest.mark.parametrize("reply,calls,malformed", [
    ('<tool_call>{"name": "a", "arguments": {"x": 1}}</tool_call>', [("a", {"x": 1})], False),
    ('<tool_call>{"arguments": {}, "name": "b"}</tool_call>', [("b", {})], False),
    ("<tool_call><function=c><parameter=n>3</parameter></function></tool_call>",
     [("c", {"n": 3})], False),
    ('<tool_call>{"name": "nope"}</tool_call>', [("nope", {})], False),  # unknown: still a call
    ("<tool_call>{not json}</tool_call>", [], True),
    ("<tool_call>[1, 2]</tool_call>", [], True),  # JSON, not an object
    ('<tool_call>{"name": "a", "arguments": {}}', [], True),  # never closed
    ("<tool_call>{bad}</tool_call> <answer>4</answer>", [], False),  # the answer comes first
    ("I will just talk.", [], False),  # no tag: costs -0.1 in the env, but is trained on
])
def test_tool_calls_and_the_malformed_check(reply, calls, malformed):
    assert tool_calls(reply) == calls
    assert malformed_tool_call(reply) is malformed


# ------------------------------------------------------------- rollouts in the real sandbox

ECHO_PROGRAM = '''
class EchoEnv:
    def __init__(self, max_turns=3, **kwargs):
        self.max_turns = max_turns
        self.reset()

    def reset(self, seed=None):
        self.turns = 0
        return "Say the number.", {}

    def step(self, action):
        self.turns += 1
        won = action == "\\\\boxed{7}"
        return "got " + action, 1.0 if won else 0.0, won, self.turns >= self.max_turns, {}

    def solution(self):
        return "\\\\boxed{7}"
'''


class FakeScriptedBackend:
    """Replies from a script: ``(text, finish_reason)`` per call, the same for every episode."""

    def __init__(self, script: list[tuple[str, str]]) -> None:
        self.script = list(script)

    def generate(self, conversations, *, max_new_tokens, temperature, seed=None, tools=None,
                 top_p=None, top_k=None, chat_template_kwargs=None):
        text, finish = self.script.pop(0)
        return [Generation(text=text, finish_reason=finish) for _ in conversations]



def _play(sandbox, family, script, **options):
    from spade_core.selfplay.rollouts import RolloutRequest, run_rollouts

    request = RolloutRequest(env_id="echo", program=ECHO_PROGRAM, family=family, seeds=[0])
    [[episode]], [[conversation]] = run_rollouts(
        sandbox, FakeScriptedBackend(script), [request], max_turns=3, max_new_tokens=8,
        temperature=0.0, seed=0, **options)
    return episode, conversation


def test_boxed_action_is_what_the_program_steps(process_sandbox):
    reply = "<think>\\boxed{1}</think> It is \\boxed{7}, not \\boxed{8}."
    episode, conversation = _play(process_sandbox, ReasoningFamily(action="boxed"),
                                  [(reply, "stop")])
    assert episode.turns[0].action == "\\boxed{7}" and episode.reward == 1.0
    assert conversation[-1] == {"role": "assistant", "content": reply}  # trained as written
    raw, _ = _play(process_sandbox, ReasoningFamily(), [(reply, "stop")] * 3)
    assert raw.turns[0].observation == "got " + reply and raw.reward == 0.0


def test_a_reply_cut_off_ends_the_episode_unstepped(process_sandbox):
    family = ReasoningFamily(action="boxed")
    script = [("thinking about \\boxed{", "stop"), ("\\boxed{7} and more", "length")]
    episode, conversation = _play(process_sandbox, family, script, end_on_truncation=True)
    assert episode.cut_off and episode.reward == 0.0 and len(episode.turns) == 1
    assert conversation[-1]["content"] == "\\boxed{7} and more"  # kept, never stepped
    # Off (the default): the cut reply is stepped like any other and wins.
    episode, _ = _play(process_sandbox, family, script)
    assert not episode.cut_off and episode.reward == 1.0 and len(episode.turns) == 2
