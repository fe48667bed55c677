"""What a follower rank of a multi-process launch builds for a vLLM backend: the tokenizer and
template only, never an engine."""

from __future__ import annotations

import pytest

from plugins.backends import options as backend_options
from plugins.backends import plugin as backends_plugin
from spade_core.components import BuildContext
from spade_core.errors import ConfigError


def test_follower_ranks_build_the_tokenizer_only_and_colocated_vllm_refuses_a_launch():
    """Under accelerate launch, ranks other than 0 never generate: vllm-server builds no server
    connection there, only what the trainer encodes with; the in-process engine refuses a launch
    of several processes and names the backend that works."""
    from plugins.backends.generation_errors import GenerationError
    from plugins.backends.follower import FollowerBackend

    options = backend_options.VLLMServerOptions(url="http://127.0.0.1:9")  # never contacted
    follower = backends_plugin.build_vllm_server(
        options, BuildContext(model="bundled:smollm2-135m", rank=1, world_size=2))
    assert isinstance(follower, FollowerBackend)
    policy = follower.policy()
    assert policy.module is None and policy.stop_ids and policy.tokenizer is not None
    with pytest.raises(GenerationError, match="rank 1"):
        follower.generate([[{"role": "user", "content": "hi"}]], max_new_tokens=2,
                          temperature=0.0)
    with pytest.raises(ConfigError, match="vllm-server"):
        backends_plugin.build_vllm(backend_options.VLLMOptions(),
                                   BuildContext(model="bundled:smollm2-135m", world_size=2))
