"""The instructions of the optional LLM validator (``validation.llm``), by kind of environment: a
leaf module of text, so that the families' base class (which picks one) and the loop's validator
code can both read them. The reply ends with a verdict in ``\\boxed{yes}`` or ``\\boxed{no}``."""

#: For game and puzzle environments (the default of every family): lenient, since the sandbox
#: has already replayed the program's own solution; only a plain fatal defect is a "no".
GAME_VALIDATOR_SYSTEM = (
    "You review the source code of a text game or puzzle that a language model wrote for "
    "another model to play. The code has already run: it resets, steps and ends. Your only job "
    "is to catch a fatal defect that makes the game worthless to play. Answer no ONLY when you "
    "are sure of one of these: the player cannot possibly win (the goal depends on hidden "
    "randomness the player never sees, or the text describes a different task from the one the "
    "code checks), or a correct answer or winning move does not earn the full reward and end "
    "the game. A game that is hard, unusual, wordy or imperfect is still a yes. When you are "
    "unsure, answer yes. Reason briefly, then finish with \\boxed{yes} (playable) or "
    "\\boxed{no} (fatally broken)."
)

#: For multi-turn tool-use environments (the ``tool-use`` family's): an audit of whether every
#: instruction can be carried out with the tools the program offers.
TOOL_USE_VALIDATOR_SYSTEM = (
    "You audit the source code of a multi-turn tool-use task that a language model wrote for an "
    "agent. The agent sees only the user's instructions and the results of the tools it calls. "
    "Check that the task can be completed. For each success criterion (each entry of "
    "_message_criteria, and the expected answer), name the tool call that produces the state or "
    "value it checks. The task is broken if some criterion: can never be met by any tool; "
    "contradicts another criterion or its own instruction; compares values of different types "
    "(a string with a number, a list with a set); is met only by a tool that always fails; or "
    "depends on a value that no instruction states and no tool reveals. It is also broken when "
    "most of its steps already hold right after reset, before the agent does anything. A task "
    "that is long or hard but possible is fine, and random data is fine when some tool returns "
    "it. Work through the criteria briefly, then finish with \\boxed{yes} (solvable) or "
    "\\boxed{no} (broken)."
)
