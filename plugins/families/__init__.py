"""Built-in environment families: ``reasoning`` (``\\boxed{}`` answers and text games) and
``tool-use`` (``<tool_call>`` protocol), both running SPADE-format programs unchanged (the
``gymnasium.Env`` over a sandboxed program is the core's :mod:`spade_core.gym_env`).

Importing this package is light; the registration module is :mod:`plugins.families.plugin`.
"""
