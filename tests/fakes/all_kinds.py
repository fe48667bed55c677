"""Fake plugins for core unit tests: one fake component of every kind, named as fakes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from spade_core.hookspecs import hookimpl


class FakeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    size: int = Field(default=3, ge=1)
    label: str = "x"


class FakeComponent:
    """Accepts any call; only used to check wiring, never behaviour."""

    def __init__(self, options, context):
        self.options = options
        self.context = context


def _fake(options, context):
    return FakeComponent(options, context)


class FakeAllKinds:
    """A plugin object implementing every registration hook with one fake component each."""

    @hookimpl
    def register_corpus_samplers(self, register):
        register("fake-corpus", _fake, FakeOptions, "fake corpus")

    @hookimpl
    def register_prompt_strategies(self, register):
        register("fake-designer", _fake, FakeOptions)

    @hookimpl
    def register_env_families(self, register):
        register("fake-family", _fake, None)
        register("fake-family-2", _fake, None)

    @hookimpl
    def register_sandboxes(self, register):
        register("fake-sandbox", _fake, FakeOptions)

    @hookimpl
    def register_difficulty_estimators(self, register):
        register("fake-estimator", _fake, FakeOptions)

    @hookimpl
    def register_env_memories(self, register):
        register("fake-memory", _fake, FakeOptions)

    @hookimpl
    def register_generation_backends(self, register):
        register("fake-backend", _fake, FakeOptions)

    @hookimpl
    def register_trainers(self, register):
        register("none", _fake, None)
        register("fake-trainer", _fake, FakeOptions)

    @hookimpl
    def register_eval_suites(self, register):
        register("fake-suite", _fake, FakeOptions)

    @hookimpl
    def register_export_formats(self, register):
        register("fake-format", _fake, FakeOptions)


FAKE_CONFIG = {
    "run": {"name": "t", "dir": "runs/{name}"},
    "corpus": {"plugin": "fake-corpus", "options": {"size": 2}},
    "designer": "fake-designer",
    "families": ["fake-family"],
    "sandbox": "fake-sandbox",
    "estimator": "fake-estimator",
    "memory": "fake-memory",
    "backend": "fake-backend",
}
