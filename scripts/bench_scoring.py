"""Per-item cost of scoring reasoning-gym replies in the host process (as before issue 22) and in
the sandbox (now): the numbers of docs/benchmarks.md, "Scoring replies in the sandbox".
Run: OMP_NUM_THREADS=1 .venv/bin/python scripts/bench_scoring.py"""

import time, json
from sandbox.build import build_sandbox, ProcessSandboxOptions
from plugins.evals.reasoning_gym_suite import ReasoningGymSuite, HARD_BUCKETS
import reasoning_gym
from plugins.evals.items import final_answer
box = build_sandbox(ProcessSandboxOptions(workers=2))
s = ReasoningGymSuite(None, box)
items = s.items(200, 0)
replies = [(i, i.gold[0] if i.gold else "x") for i in items]
# before: each dataset's score_answer in this process (what 0.1 did), on the same entries
specs = {d.name: d for b in HARD_BUCKETS.values() for d in b}
entries = []
for it in items:
    spec = specs[it.data["dataset"]]
    ds = reasoning_gym.create_dataset(spec.name, seed=it.data["seed"], size=1, **spec.config)
    entries.append((ds, ds[0]))
t = time.perf_counter()
for (ds, e), (it, r) in zip(entries, replies):
    ds.score_answer(final_answer(r), e)
before = (time.perf_counter() - t) / len(items)
runs = []
for _ in range(3):
    t = time.perf_counter(); sc = s.score_many(replies); runs.append((time.perf_counter() - t) / len(items))
print(json.dumps({"items": len(items), "in_process_ms": round(before*1000, 3), "sandbox_ms": [round(x*1000, 2) for x in runs], "gold_score": sum(sc)}))
box.close()
