"""Built-in run-event plugin ``console``: a live table of the latest iterations during
``spade run`` (see ``plugin.py``)."""
