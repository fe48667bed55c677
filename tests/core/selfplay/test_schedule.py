"""The two schedules (spade_core.selfplay.schedule): when an iteration starts a fresh set, when
the last window's designs are released, what each trains (the designer's samples at once, or
held over a window), the designer reward scale with masked designs counted, and what a
checkpoint keeps."""

from __future__ import annotations

from types import SimpleNamespace

from plugins.difficulty_estimators import Regret, RegretOptions
from spade_core.config.schema import LoopSection
from spade_core.interfaces import TrainingSample
from spade_core.records import Difficulty, EnvRecord, EnvStatus, Episode, Role
from spade_core.selfplay.schedule import FrontierSchedule, WindowSchedule, open_schedule
from spade_core.selfplay.window import HeldDesign, Window

from fakes.selfplay import FakeDictMemory, accepted_proposal, played_proposal, qa_program


def _conversation(reply: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": "Question"}, {"role": "assistant", "content": reply}]


def test_the_schedule_is_chosen_once_from_the_config():
    assert isinstance(open_schedule(LoopSection(schedule="frontier")), FrontierSchedule)
    windows = open_schedule(LoopSection(schedule="window", regeneration_interval=3))
    assert isinstance(windows, WindowSchedule) and windows.interval == 3


def test_a_window_starts_every_interval_or_when_none_is_open():
    windows = WindowSchedule(interval=3)
    assert windows.starts(1)  # none open yet: the first iteration run designs
    windows.current = Window(start=0)
    assert [windows.starts(i) for i in range(7)] == [True, False, False, True, False, False, True]
    frontier = FrontierSchedule()
    assert all(frontier.starts(i) for i in range(3)) and frontier.interval == 1


def test_the_last_windows_designs_are_released_at_a_window_start_only():
    program = qa_program("six times seven")
    env_id = accepted_proposal(program).env_id
    memory = FakeDictMemory()
    memory.add(EnvRecord(id=env_id, source=program, family="fake-qa",
                         status=EnvStatus.FRONTIER))
    memory.update_stats(env_id, 4, [1.0, 1.0], [0.0, 0.0], {}, 0.0)
    asked = _conversation("...")
    window = Window(start=4, env_ids=[env_id], designs=[
        HeldDesign(env_id=env_id, family_name="fake-qa", messages=asked, skill="math")])
    c = SimpleNamespace(estimator=Regret(RegretOptions()), memory=memory,
                        estimator_label="regret")
    loop = LoopSection()
    assert FrontierSchedule().release(c, loop, True) == ([], [])
    assert WindowSchedule(2, window).release(c, loop, False) == ([], [])  # within a window
    assert WindowSchedule(2).release(c, loop, True) == ([], [])  # the first window
    [released], [delayed] = WindowSchedule(2, window).release(c, loop, True)
    assert released.group == delayed.env_id == env_id and released.reward == 1.0


def test_frontier_samples_reward_the_design_at_once_and_window_samples_hold_it():
    class Trainer:
        def record_logprobs(self, samples):
            return [[-0.5] for _ in samples]

    loop = LoopSection()
    p = played_proposal()
    samples = FrontierSchedule().samples(Trainer(), loop, 0, [p], True, [], [])
    [design] = [s for s in samples if s.role == "designer"]
    assert design.reward == 0.7 and design.meta["advantage_scale"] == 2.0  # 2 agent / 1 design
    assert sum(s.role == "agent" for s in samples) == 2

    windows = WindowSchedule(interval=2)
    samples = windows.samples(Trainer(), loop, 0, [p], True, [], [])
    assert [s.role for s in samples] == ["agent", "agent"]  # the design waits for its window
    [held] = windows.current.designs
    assert held.env_id == p.env_id and held.rollout_logps == [-0.5]
    assert windows.current.start == 0


def test_the_designer_reward_scale_counts_masked_designs_as_the_reference_does():
    """Issue 48: env_reward_scale is agent samples / designs x interval with the designs counted
    before the masked ones are dropped (the reference's count), so masking one design does not
    make the others' advantages bigger."""
    loop = LoopSection()
    # Window schedule: 2 agent samples; the window before released 2 designs, 1 of them masked.
    released = [TrainingSample(role=Role.DESIGNER, messages=_conversation("class B: ..."),
                               reward=0.5, group="b", meta={})]
    delayed = [SimpleNamespace(trained=True), SimpleNamespace(trained=False)]
    windows = WindowSchedule(interval=2, current=Window(start=2))
    samples = windows.samples(None, loop, 3, [played_proposal()], False, released, delayed)
    [design] = [s for s in samples if s.role == Role.DESIGNER]
    assert design.meta["advantage_scale"] == 2.0  # 2 agent samples / 2 designs x 2, not 4
    # Frontier schedule: two played designs, one masked by its estimate; 4 agent samples.
    kept, masked = played_proposal(), played_proposal("class M: ...")
    kept.difficulty = Difficulty(figures={}, designer_reward=0.7)
    masked.difficulty = Difficulty(figures={}, designer_reward=-0.2, train=False)
    samples = FrontierSchedule().samples(None, loop, 0, [kept, masked], True, [], [])
    [design] = [s for s in samples if s.role == Role.DESIGNER]
    assert design.group == kept.env_id
    assert design.meta["advantage_scale"] == 2.0  # 4 agent samples / 2 designs, not 4


def test_a_checkpoint_keeps_the_window_in_progress():
    window = Window(start=4, env_ids=["a"])
    state = WindowSchedule(2, window).state_dict()
    resumed = WindowSchedule(2)
    resumed.load_state_dict(state)
    assert resumed.current == window
    frontier = FrontierSchedule()
    assert frontier.state_dict() is None
    frontier.load_state_dict(None)
    empty = WindowSchedule(2)
    empty.load_state_dict(None)
    assert empty.current is None
