"""Built-in designer prompt strategies: ``full-program`` and ``skeleton``."""
