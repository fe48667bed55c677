"""Built-in environment families: ``reasoning`` (``\\boxed{}`` answers and text games) and
``tool-use`` (``<tool_call>`` protocol), both running SPADE-format programs unchanged, plus the
gymnasium wrapper that makes any sandboxed environment a ``gymnasium.Env``.

Importing this package is light; the registration module is :mod:`plugins.families.plugin`.
"""
