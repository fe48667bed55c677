"""Built-in plugins. Each module registers components through the ``spade`` entry-point group,
exactly as a third-party plugin would, and imports its heavy dependencies only inside factories."""
