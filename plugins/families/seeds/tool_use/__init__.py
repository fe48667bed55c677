"""Seed programs of the tool-use family (program sources that subclass the injected
``ToolUseBaseEnv``; read as text, never imported)."""
