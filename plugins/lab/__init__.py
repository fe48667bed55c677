"""The curriculum lab: a simulated learner that stands in for the LLM so the real loop runs in seconds."""
