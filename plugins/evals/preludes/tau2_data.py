"""τ²-bench's data for the host, read inside a sandbox worker on the tau2 environment.

Trusted loader source of the ``tau2`` suite (``spade_core.eval.sandboxed_data``), after
``tau2_loader.py``. ``load_request({"op": "domain", "domain", "split"})`` answers with what the
host builds its items from, as JSON: the domain's policy, the tool schemas of both sides, and
for each task of the split its id, scenario, the user simulator's prompt, its expected actions
and information (for the gold script) and the task itself (``Task.model_dump``, which the episode
worker reads back).
"""

import importlib as _importlib

__all__ = list(globals().get("__all__", []))


def _domain(domain, split):
    load()  # tau2 with its litellm stand-in: defined by tau2_loader.py, earlier in the source
    registry = _importlib.import_module("tau2.registry").registry
    simulator = _importlib.import_module("tau2.user.user_simulator")
    env = registry.get_env_constructor(domain)()
    user_tools = env.get_user_tools() if env.user_tools is not None else []
    try:
        tasks = registry.get_tasks_loader(domain)(split)
    except Exception as exc:  # noqa: BLE001 - tau2 raises plain errors for a bad split
        return {"error": f"tau2 suite: {domain} has no task split {split!r} ({exc})"}
    guidelines = simulator.get_global_user_sim_guidelines(use_tools=bool(user_tools))
    found = []
    for task in tasks:
        criteria = task.evaluation_criteria
        scenario = str(task.user_scenario)
        found.append({
            "id": task.id, "scenario": scenario, "task": task.model_dump(mode="json"),
            "user_prompt": simulator.SYSTEM_PROMPT.format(
                global_user_sim_guidelines=guidelines, instructions=scenario),
            "actions": [{"name": a.name, "arguments": a.arguments, "requestor": a.requestor}
                        for a in ((criteria.actions or []) if criteria else [])],
            "communicate_info": [str(i) for i in
                                 ((criteria.communicate_info or []) if criteria else [])]})
    return {"policy": env.get_policy(), "tools": [t.openai_schema for t in env.get_tools()],
            "user_tools": [t.openai_schema for t in user_tools], "tasks": found}


def load_request(request):
    if request.get("op") != "domain":
        raise ValueError(f"unknown request {request.get('op')!r}")
    return _domain(str(request["domain"]), str(request["split"]))
