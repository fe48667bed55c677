"""Hook implementations of the curriculum lab (registered through the ``spade`` entry points):
the ``lab`` backend, trainer and family, the ``lab-grid`` held-out suite and the ``lab-grounded``
estimator (docs/lab.md)."""

from __future__ import annotations

from spade_core.hookspecs import hookimpl


def _backend(options, context):
    from plugins.lab.lab_backend import LabBackend

    return LabBackend(options, context.seed)


def _trainer(options, context):
    from plugins.lab.lab_trainer import LabTrainer

    return LabTrainer(options, context.components.get("generation_backend"), context.seed)


def _family(options, context):
    from plugins.lab.lab_family import LabFamily

    return LabFamily()


def _suite(options, context):
    from plugins.lab.suite import LabGridSuite

    return LabGridSuite(options)


def _grounded(options, context):
    from plugins.lab.grounded import Grounded

    return Grounded(options, context.components)


@hookimpl
def register_generation_backends(register):
    from plugins.lab.lab_backend import LabBackendOptions

    register("lab", _backend, LabBackendOptions,
             "the curriculum lab's simulated learner in both roles (docs/lab.md)")


@hookimpl
def register_trainers(register):
    from plugins.lab.lab_trainer import LabTrainerOptions

    register("lab", _trainer, LabTrainerOptions,
             "policy-gradient update of the lab's simulated learner (docs/lab.md)")


@hookimpl
def register_env_families(register):
    register("lab", _family, None, "the curriculum lab's environments (docs/lab.md)")


@hookimpl
def register_eval_suites(register):
    from plugins.lab.suite import LabGridOptions

    register("lab-grid", _suite, LabGridOptions,
             "the lab learner's exact expected success on its held-out grid")


@hookimpl
def register_difficulty_estimators(register):
    from plugins.lab.grounded import GroundedOptions

    register("lab-grounded", _grounded, GroundedOptions,
             "SOAR's grounded reward in the lab: exact reference-set gain of a trial update")
