"""Turn the loop's rewarded samples into GRPO training rows: token ids, a mask of the tokens the
policy wrote, and advantages normalised per role and per group.

A multi-turn agent conversation becomes one row: the prompt is everything before the first
assistant turn (rendered with the generation prompt, exactly as the backend rendered it), the
completion is the rest, and only the assistant turns' own tokens (up to and including their stop
token) count in the loss; the environment's turns (user messages), template glue and the assistant
turns a sample lists in ``meta["masked_turns"]`` are masked.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from statistics import fmean, pstdev
from typing import Any

from spade_core.interfaces import TrainablePolicy, TrainingSample
from spade_core.records import Role

ROLES: tuple[str, ...] = (Role.DESIGNER, Role.AGENT)


#: Added to a standard deviation before dividing by it (the reference's z-score uses 1e-8).
STD_EPSILON = 1e-8


@dataclass
class EncodedSample:
    """One training row: prompt and completion token ids, the policy-token mask, the advantage."""

    role: str
    group: str
    reward: float
    prompt_ids: list[int]
    completion_ids: list[int]
    #: 1 for tokens the policy generated (trained on), 0 for environment turns and template glue.
    env_mask: list[int]
    advantage: float = 0.0
    #: The design target's skill (designer samples; the baseline set of ``skill`` baselines).
    skill: str = ""
    #: Multiplies the advantage (the loop's ``env_reward_scale`` on designer samples).
    advantage_scale: float = 1.0
    #: Per-token log-probabilities of the completion under the policy that generated it, when
    #: recorded (stale samples: truncated importance sampling corrects for the policy's moves).
    rollout_logps: list[float] | None = None
    #: Asynchronous training: per completion token, the policy version that generated it (the
    #: trainer computes the behaviour log-probabilities under that version's kept weights).
    token_versions: list[int] | None = None


class SampleEncodingError(ValueError):
    """A conversation cannot be split into prompt and policy tokens with this chat template."""


def policy_render(policy: TrainablePolicy) -> Callable[..., str]:
    """``render(messages, add_generation_prompt, template_kwargs=None) -> text`` with the
    policy's chat template and variables, a sample's role's over them: what generation used."""

    def render(messages: list[dict[str, Any]], generation_prompt: bool,
               template_kwargs: dict[str, Any] | None = None) -> str:
        return policy.tokenizer.apply_chat_template(
            messages, chat_template=policy.chat_template, tokenize=False,
            add_generation_prompt=generation_prompt,
            **{**policy.chat_template_kwargs, **(template_kwargs or {})})

    return render


class ConversationEncoder:
    """Renders conversations with a chat template and splits them into prompt and completion.

    :param render: ``render(messages, add_generation_prompt) -> text`` with the backend's template;
        for a sample whose role set chat template variables (``meta["chat_template_kwargs"]``)
        it is called with them as a third argument, so it renders what generation rendered.
    :param tokenize: ``tokenize(text) -> ids`` without adding special tokens.
    :param stop_ids: token ids that end an assistant turn (trained on; what follows is glue).
    """

    def __init__(self, render: Callable[[list[dict[str, Any]], bool], str],
                 tokenize: Callable[[str], list[int]], stop_ids: Sequence[int]) -> None:
        self.render = render
        self.tokenize = tokenize
        self.stop_ids = set(int(i) for i in stop_ids)

    def encode(self, messages: list[dict[str, Any]], masked: Collection[int] = (),
               template_kwargs: dict[str, Any] | None = None,
               spans: list[tuple[int, int, int]] | None = None
               ) -> tuple[list[int], list[int], list[int]]:
        """``(prompt_ids, completion_ids, env_mask)`` of one conversation, rendered with the
        role's chat template variables ``template_kwargs`` when it has any; the assistant turns
        at the indices in ``masked`` are left out of the loss like the environment's. ``spans``,
        when given, receives ``(message index, first completion position, tokens up to and
        including the stop token)`` of every assistant turn."""
        render = self.render
        if template_kwargs:
            def render(part: list[dict[str, Any]], prompt: bool) -> str:
                return self.render(part, prompt, template_kwargs)  # type: ignore[call-arg]
        first = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), None)
        if first is None or first == 0:
            raise SampleEncodingError("the conversation has no assistant turn after a prompt")
        prompt_text = render(messages[:first], True)
        full_text = render(messages, False)
        if not full_text.startswith(prompt_text):
            raise SampleEncodingError("the chat template does not render the prompt as a prefix of "
                                      "the whole conversation")
        prompt_ids = self.tokenize(prompt_text)
        completion_ids: list[int] = []
        env_mask: list[int] = []
        done = len(prompt_text)  # characters of full_text already turned into tokens
        for i in range(first, len(messages)):
            if messages[i].get("role") != "assistant":
                continue
            before = render(messages[:i], True)
            after = render(messages[:i + 1], False)
            if not (full_text.startswith(before) and full_text.startswith(after)):
                raise SampleEncodingError(f"turn {i}: the chat template is not prefix-stable")
            if len(before) > done:  # environment turns and template glue since the last turn
                glue = self.tokenize(full_text[done:len(before)])
                completion_ids += glue
                env_mask += [0] * len(glue)
            turn = self.tokenize(full_text[max(done, len(before)):len(after)])
            stop = next((k for k, t in enumerate(turn) if t in self.stop_ids), len(turn) - 1)
            if spans is not None:
                spans.append((i, len(completion_ids), stop + 1))
            completion_ids += turn
            trained = 0 if i in masked else 1
            env_mask += [trained] * (stop + 1) + [0] * (len(turn) - stop - 1)
            done = len(after)
        return prompt_ids, completion_ids, env_mask


def compute_advantages(rows: list[EncodedSample], baselines: dict[str, str],
                       scales: dict[str, str]) -> None:
    """Set each row's advantage, per role: reward minus the mean reward of its baseline set
    (``group``: same role and group; ``skill``: same role and skill; ``role``: every row of the
    role), divided by a standard deviation (population, plus :data:`STD_EPSILON`) when the role's
    scale is ``group`` (the baseline set's) or ``role`` (all rows of the role), not when it is
    ``none``; then multiplied by the row's ``advantage_scale``.

    The reference's defaults are ``agent: group`` with ``group`` scale (a per-game z-score) and
    ``designer: skill`` with no scale (per-skill centring; ``advantage_scale`` carries
    ``env_reward_scale``): docs/training.md."""
    by_role: dict[str, list[EncodedSample]] = defaultdict(list)
    for row in rows:
        by_role[row.role].append(row)
    for role, members in by_role.items():
        baseline = baselines.get(role, "group")
        scale = scales.get(role, "none")
        sets: dict[str, list[EncodedSample]] = defaultdict(list)
        for row in members:
            sets[{"group": row.group, "skill": row.skill}.get(baseline, "")].append(row)
        role_std = pstdev([r.reward for r in members]) if len(members) > 1 else 0.0
        for group_rows in sets.values():
            rewards = [r.reward for r in group_rows]
            mean = fmean(rewards)
            if scale == "group":
                std: float | None = pstdev(rewards) if len(rewards) > 1 else 0.0
            elif scale == "role":
                std = role_std
            else:
                std = None
            for row in group_rows:
                advantage = row.reward - mean
                if std is not None:
                    advantage /= std + STD_EPSILON
                row.advantage = advantage * row.advantage_scale


def tis_weights(train_logps: Sequence[float], rollout_logps: Sequence[float],
                low: float = 0.0, high: float = 2.0) -> list[float]:
    """Truncated importance-sampling weights, per token: ``clamp(exp(train - rollout), low,
    high)``, where ``train`` is the log-probability under the policy being trained and
    ``rollout`` under the policy that generated the token (the reference's ``--use-tis``). A
    rollout log-probability that was not recorded (NaN: a token the generator did not return
    one for) weighs 1."""
    if len(train_logps) != len(rollout_logps):
        raise ValueError(f"tis_weights: {len(train_logps)} training log-probs for "
                         f"{len(rollout_logps)} rollout ones")
    weights = []
    for train, rollout in zip(train_logps, rollout_logps):
        if math.isnan(float(rollout)):
            weights.append(1.0)
            continue
        difference = min(float(train) - float(rollout), 50.0)  # exp overflows past ~709
        weights.append(min(max(math.exp(difference), low), high))
    return weights


def turn_rollout_logps(turns: Sequence[Sequence[Any]], spans: Sequence[tuple[int, int, int]],
                       length: int) -> tuple[list[float], int]:
    """Rollout log-probabilities per completion token from those the generator returned per
    reply (``turns``: ``[message index, log-probs]`` pairs, ``meta["turn_logps"]``), laid on the
    turns' tokens (``spans`` from :meth:`ConversationEncoder.encode`); NaN where none is known.
    A reply whose log-probs number its tokens (or one fewer: the stop token was not returned)
    is laid on them; one that does not fit the tokens the trainer encodes is left NaN and
    counted (second value)."""
    found = [float("nan")] * length
    by_index = {int(i): list(v) for i, v in turns}
    unaligned = 0
    for index, start, count in spans:
        values = by_index.get(index)
        if values is None:
            continue
        if len(values) not in (count, count - 1):
            unaligned += 1
            continue
        for k, value in enumerate(values):
            if start + k < length:
                found[start + k] = float(value)
    return found, unaligned


def turn_token_versions(meta: dict[str, Any], spans: Sequence[tuple[int, int, int]],
                        length: int) -> list[int] | None:
    """Per completion token, the policy version that generated it: each assistant turn's from
    ``meta["turn_versions"]`` (``[message index, version]`` pairs), the sample's
    ``meta["policy_version"]`` for the rest (turns the ledger missed, masked tokens). ``None``
    for a sample without a version (not generated asynchronously)."""
    if meta.get("policy_version") is None:
        return None
    versions = [int(meta["policy_version"])] * length
    by_index = {int(i): int(v) for i, v in meta.get("turn_versions") or ()}
    for index, start, count in spans:
        if index in by_index:
            for k in range(start, min(start + count, length)):
                versions[k] = by_index[index]
    return versions


def encode_samples(samples: Sequence[TrainingSample], encoder: ConversationEncoder,
                   max_tokens: int) -> tuple[list[EncodedSample], dict[str, int]]:
    """Encode every sample; too-long and unencodable ones are counted per role and left out."""
    rows: list[EncodedSample] = []
    skipped: dict[str, int] = defaultdict(int)
    for sample in samples:
        try:
            kwargs = sample.meta.get("chat_template_kwargs")
            spans: list[tuple[int, int, int]] = []
            prompt, completion, mask = encoder.encode(
                sample.messages, set(sample.meta.get("masked_turns") or ()),
                dict(kwargs) if isinstance(kwargs, dict) else None, spans)
        except SampleEncodingError:
            skipped[f"{sample.role}_samples_unencodable"] += 1
            continue
        if len(prompt) >= max_tokens:
            skipped[f"{sample.role}_samples_too_long"] += 1
            continue
        keep = max_tokens - len(prompt)
        completion, mask = completion[:keep], mask[:keep]
        if not any(mask):
            skipped[f"{sample.role}_samples_empty"] += 1
            continue
        rollout = sample.meta.get("rollout_logps")
        turns = sample.meta.get("turn_logps")
        if rollout is None and turns:
            rollout, unaligned = turn_rollout_logps(turns, spans, len(completion))  # type: ignore[arg-type]
            if unaligned:
                skipped[f"{sample.role}_turns_logps_unaligned"] += unaligned
        rows.append(EncodedSample(
            role=sample.role, group=sample.group, reward=float(sample.reward),
            prompt_ids=prompt, completion_ids=completion, env_mask=mask,
            skill=str(sample.meta.get("skill") or ""),
            advantage_scale=float(sample.meta.get("advantage_scale", 1.0)),
            rollout_logps=[float(v) for v in rollout][:keep] if rollout is not None else None,
            token_versions=turn_token_versions(sample.meta, spans, len(completion))))
    return rows, dict(skipped)


def micro_batches(rows: list[EncodedSample], size: int) -> list[list[EncodedSample]]:
    """Rows of one role per batch, similar lengths together (less padding), at most ``size``."""
    batches: list[list[EncodedSample]] = []
    for role in ROLES:
        members = sorted((r for r in rows if r.role == role),
                         key=lambda r: len(r.prompt_ids) + len(r.completion_ids))
        batches += [members[i:i + size] for i in range(0, len(members), size)]
    return batches


def collate(batch: list[EncodedSample], pad_id: int, device: Any) -> dict[str, Any]:
    """TRL's GRPO batch layout: prompts left-padded, completions right-padded, masks, advantages."""
    import torch

    width_p = max(len(r.prompt_ids) for r in batch)
    width_c = max(len(r.completion_ids) for r in batch)
    n = len(batch)
    prompt_ids = torch.full((n, width_p), pad_id, dtype=torch.long)
    prompt_mask = torch.zeros((n, width_p), dtype=torch.long)
    completion_ids = torch.full((n, width_c), pad_id, dtype=torch.long)
    completion_mask = torch.zeros((n, width_c), dtype=torch.long)
    tool_mask = torch.zeros((n, width_c), dtype=torch.long)
    for i, row in enumerate(batch):
        p, c = len(row.prompt_ids), len(row.completion_ids)
        prompt_ids[i, width_p - p:] = torch.tensor(row.prompt_ids)
        prompt_mask[i, width_p - p:] = 1
        completion_ids[i, :c] = torch.tensor(row.completion_ids)
        completion_mask[i, :c] = 1
        tool_mask[i, :c] = torch.tensor(row.env_mask)
    return {
        "prompt_ids": prompt_ids.to(device), "prompt_mask": prompt_mask.to(device),
        "completion_ids": completion_ids.to(device),
        "completion_mask": completion_mask.to(device), "tool_mask": tool_mask.to(device),
        "advantages": torch.tensor([r.advantage for r in batch], dtype=torch.float32).to(device),
    }
