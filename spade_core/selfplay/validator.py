"""The optional LLM validator (``validation.llm``): after the sandbox's rules and the reset gate
pass a designed program, a model (the policy, or ``validation.llm.backend``) reads its source under
the family's instructions (``EnvFamily.validator_instructions``) and ends its reply with
``\\boxed{yes}`` or ``\\boxed{no}``. A "no" refuses the program (verdict ``llm_rejected``), which
sends its proposal round for another attempt like any invalid verdict; a reply without a verdict,
an empty one, or a failed call accepts, as in the reference, so the validator can only remove
programs it positively judged broken."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from spade_core.interfaces import GenerationBackend
from spade_core.records import Verdict, VerdictCategory

if TYPE_CHECKING:
    from spade_core.config.schema import LLMValidatorSection

__all__ = ["LLMValidator", "accepts", "validator_messages", "llm_validate"]

_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
#: Verdicts that accept (lower-cased, stripped), the reference's.
YES = frozenset({"yes", "y", "true"})
#: Characters of the validator's reply kept in a rejection's message (its end: the conclusion).
REASON_CHARS = 600


@dataclass(frozen=True)
class LLMValidator:
    """How the validator calls are made; ``backend`` ``None``: the policy's backend."""

    backend: GenerationBackend | None = None
    temperature: float = 0.3
    top_p: float | None = 0.9
    top_k: int | None = None
    max_tokens: int = 16384

    @classmethod
    def from_config(cls, section: "LLMValidatorSection",
                    backend: GenerationBackend | None = None) -> "LLMValidator":
        return cls(backend=backend, temperature=section.temperature, top_p=section.top_p,
                   top_k=section.top_k, max_tokens=section.max_tokens)


def accepts(reply: str) -> bool:
    """The verdict of one reply: the first ``\\boxed{...}``; yes/y/true accept, anything else in
    the box rejects; no box (or an empty one, or an empty reply) accepts."""
    match = _BOXED.search(reply or "")
    if match is None or not match.group(1).strip():
        return True
    return match.group(1).strip().lower() in YES


def validator_messages(program: str, system: str) -> list[dict[str, str]]:
    """The validator's conversation: the family's instructions and the program's source."""
    return [{"role": "system", "content": system},
            {"role": "user", "content": f"Environment source code:\n```python\n{program}\n```"}]


def _rejected(verdict: Verdict | None, reply: str) -> Verdict:
    reason = reply.strip()
    if len(reason) > REASON_CHARS:
        reason = "..." + reason[-REASON_CHARS:]
    base = verdict or Verdict(valid=True, category=str(VerdictCategory.OK), message="valid")
    return replace(base, valid=False, category=str(VerdictCategory.LLM_REJECTED),
                   message=f"the LLM validator rejected the environment: {reason}",
                   details={**base.details, "llm_validator": reply})


def llm_validate(validator: LLMValidator, policy: GenerationBackend,
                 proposals: Sequence[Any], seed: int) -> None:
    """Ask the validator about each proposal (the loop's ``Proposal``: ``program``, ``family``,
    ``verdict``, ``validator_verdicts``; valid programs only: the caller picks them), in one
    batched call; a rejection replaces the proposal's verdict with ``llm_rejected`` (the reply in
    its details). Each proposal's ``validator_verdicts`` records the call's outcome."""
    if not proposals:
        return
    backend = validator.backend or policy
    conversations = [validator_messages(p.program or "", p.family.validator_instructions())
                     for p in proposals]
    try:
        replies = [g.text for g in backend.generate(
            conversations, max_new_tokens=validator.max_tokens,
            temperature=validator.temperature, top_p=validator.top_p, top_k=validator.top_k,
            seed=seed)]
    except Exception as exc:  # noqa: BLE001 - the reference accepts when the validator fails
        replies = [""] * len(proposals)
        error: str | None = f"{type(exc).__name__}: {exc}"
    else:
        error = None
    for proposal, reply in zip(proposals, replies, strict=True):
        ok = accepts(reply)
        proposal.validator_verdicts.append(ok)
        if not ok:
            proposal.verdict = _rejected(proposal.verdict, reply)
        elif proposal.verdict is not None:
            note = f"the call failed ({error}): accepted" if error else (
                "accepted" if _BOXED.search(reply) else "no verdict in the reply: accepted")
            proposal.verdict = replace(proposal.verdict,
                                       details={**proposal.verdict.details,
                                                "llm_validator": note})
