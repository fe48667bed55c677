"""Hook implementations of the curriculum lab (registered through the ``spade`` entry points)."""
