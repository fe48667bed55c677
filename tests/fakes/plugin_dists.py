"""Build real (if tiny) installed distributions in a folder, for plugin-loading tests.

A ``<name>-<version>.dist-info`` folder with METADATA and entry_points.txt next to the plugin's
modules is exactly what pip leaves in site-packages; putting the folder on PYTHONPATH makes
``importlib.metadata`` find it.
"""

from __future__ import annotations

from pathlib import Path


def make_dist(root: Path, dist: str, version: str, modules: dict[str, str],
              entry_points: dict[str, str]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (root / f"{module}.py").write_text(source)
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = ["[spade]"] + [f"{name} = {target}" for name, target in entry_points.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    (info / "RECORD").write_text("")


GOOD_ESTIMATOR = '''
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import DifficultyEstimator
from spade_core.records import Difficulty

class Half(DifficultyEstimator):
    def estimate(self, data):
        return Difficulty(figures={}, designer_reward=0.5)

@hookimpl
def register_difficulty_estimators(register):
    register("half", lambda options, context: Half(), None, "always 0.5")
'''

#: An estimator written to the plugin guide as it stood before ``estimate(data: EstimateInput)``:
#: three reward arguments, and a second method for the history.
OLD_INTERFACE_ESTIMATOR = '''
from spade_core.hookspecs import hookimpl
from spade_core.interfaces import DifficultyEstimator
from spade_core.records import Difficulty


class OldGap(DifficultyEstimator):
    def estimate(self, env, hinted, unhinted):
        mean = lambda xs: sum(xs) / len(xs) if xs else 0.0
        return Difficulty(figures={}, designer_reward=0.5, regret=mean(hinted) - mean(unhinted))

    def estimate_with_history(self, env, hinted, unhinted, history):
        return self.estimate(env, hinted, unhinted)


@hookimpl
def register_difficulty_estimators(register):
    register("oldgap", lambda options, context: OldGap(), None, "written for the old interface")
'''
