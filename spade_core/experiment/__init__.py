"""``spade experiment``: arms of one base config, over seeds, at equal compute, with held-out
scores and paired intervals (``docs/experiments.md``).

:mod:`.spec` reads the experiment file, :mod:`.plan` lays out the runs, :mod:`.runner` runs them
as ordinary run directories (resumable; :mod:`.local_runs` and :mod:`.ray_runs` several at
once), :mod:`.compute` and :mod:`.stats` turn the run files into figures, :mod:`.results` writes
the one JSON file.
"""
