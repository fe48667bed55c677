"""Phases of an iteration (spade_core.phases): seconds and progress per phase, and the tokens a
backend generates counted per phase and role."""

from __future__ import annotations

from spade_core.interfaces import Generation
from spade_core.phases import CountingBackend, PhaseTimer, tokens_by_role


def test_a_phase_entered_twice_adds_its_seconds_and_its_progress():
    seen = []
    timer = PhaseTimer(on_progress=lambda *event: seen.append(event))
    for _ in range(2):
        with timer.phase("design", total=2):
            timer.advance("design")
            timer.advance("design")
    assert set(timer.seconds) == {"design"} and timer.seconds["design"] >= 0.0
    assert seen[0] == ("design", 0, 2) and seen[-1] == ("design", 4, 4)
    completed = [e[1] for e in seen]
    assert completed == sorted(completed)  # never goes back
    with timer.phase("hint"):  # no total known: None, not 0
        pass
    assert seen[-1] == ("hint", 0, None)


def test_the_counting_backend_counts_tokens_per_phase_and_role():
    class Backend:
        name = "scripted"

        def generate(self, conversations, **kwargs):
            return [Generation(text="three short words"),
                    Generation(text="ignored", completion_ids=[1, 2])]

    timer = PhaseTimer()
    backend = CountingBackend(Backend(), timer)
    with timer.phase("design"):
        backend.generate([[]])
    with timer.phase("rollout"):
        backend.generate([[]])
        backend.generate([[]])
    backend.generate([[]])  # outside every phase
    assert timer.tokens == {"design": 5, "rollout": 10, "other": 5}
    assert tokens_by_role(timer) == {"designer": 5, "agent": 10, "other": 5}
    assert backend.name == "scripted"  # everything else is the wrapped backend's
