"""Export a run's environments (``spade envs export``) and its
trained model (``spade export-model``) in formats other tools load: JSONL, a ``datasets`` dataset,
a verifiers environment package, an OpenEnv environment, a ``save_pretrained`` model folder."""
