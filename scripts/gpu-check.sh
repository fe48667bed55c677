#!/usr/bin/env bash
# The GPU check (issue 14): run this on a machine with one CUDA GPU, in an environment with
# spade-rl[gpu] installed (a CUDA build of torch and vllm; nothing is downloaded here). It runs
# the vLLM tests on the GPU, one iteration of configs/gpu-qwen-7b.yaml (the one-card config) on a
# small model, and prints the figures docs/scaling.md's throughput model needs. About 10 minutes
# on an H100/H200 with the bundled 135M model.
#
#   scripts/gpu-check.sh                      # bundled SmolLM2-135M
#   MODEL=/models/Qwen2.5-7B-Instruct scripts/gpu-check.sh   # a local model folder
#   PY=.venv/bin/python OUT=gpu-check scripts/gpu-check.sh
#
# Everything it measured is under $OUT (default gpu-check-out/); summary.json holds the figures.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python}
OUT=${OUT:-gpu-check-out}
MODEL=${MODEL:-bundled:smollm2-135m}
mkdir -p "$OUT"
failed=0
step() { echo; echo "== $*"; }

"$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)" || {
  echo "gpu-check: torch sees no CUDA GPU; run this on a GPU machine with a CUDA build of torch"; exit 3; }
"$PY" -c "import vllm" 2>/dev/null || {
  echo "gpu-check: vllm is not installed; pip install 'spade-rl[gpu]' (see docs/backends.md)"; exit 3; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.csv"
"$PY" -m spade_core.cli doctor > "$OUT/doctor.txt" 2>&1 || true
# GPU memory in use, every half second, for the peak figure
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 500 > "$OUT/memory.csv" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT

step "1/3 vLLM tests (colocated and server, weight push)"
VLLM_ENABLE_V1_MULTIPROCESSING=0 timeout 1200 "$PY" -m pytest -q -ra tests/plugins/backends/test_vllm*.py \
  2>&1 | tee "$OUT/vllm-tests.txt" || failed=1

step "2/3 generation throughput: vllm and transformers, $MODEL"
timeout 900 "$PY" -m spade_core.cli bench generation --backend vllm --model "$MODEL" \
  --batch-sizes 1,16,128 --max-new-tokens 256 --json > "$OUT/bench-vllm.json" || failed=1
timeout 900 "$PY" -m spade_core.cli bench generation --backend transformers --model "$MODEL" \
  --batch-sizes 1,16 --max-new-tokens 128 --json > "$OUT/bench-transformers.json" || failed=1
cat "$OUT"/bench-*.json

step "3/3 one iteration of configs/gpu-qwen-7b.yaml on $MODEL"
RUN="$OUT/run"
rm -rf "$RUN"
set_small=(--set "model.path=$MODEL" --set run.iterations=1 --set "run.dir=$RUN"
           --set corpus.options.path=null --set loop.envs_per_iteration=8
           --set loop.rollouts_per_env=8 --set loop.designer_max_tokens=1024
           --set loop.agent_max_tokens=256 --set loop.max_turns=4
           --set memory.options.mastery_rollouts=8 --set memory.options.too_hard_rollouts=8)
"$PY" -m spade_core.cli config check configs/gpu-qwen-7b.yaml "${set_small[@]}" || failed=1
VLLM_ENABLE_V1_MULTIPROCESSING=0 timeout 1800 "$PY" -m spade_core.cli run configs/gpu-qwen-7b.yaml \
  "${set_small[@]}" 2>&1 | tee "$OUT/run.txt" || failed=1

step "asynchronous training: both sides' idle time, async_level 0 and 1"
for level in 0 1; do
  timeout 600 "$PY" -m spade_core.cli bench loop --async-level "$level" --envs 16 --rollouts 8 \
    --iterations 4 --generate-seconds 0.05 --train-seconds 2 --json > "$OUT/bench-async-$level.json" \
    || failed=1
done
cat "$OUT"/bench-async-*.json
# the same with the real model, three iterations per level (vLLM was checked above)
for level in 0 1; do
  VLLM_ENABLE_V1_MULTIPROCESSING=0 timeout 1800 "$PY" -m spade_core.cli run configs/gpu-qwen-7b.yaml \
    "${set_small[@]}" --set run.iterations=3 --set "run.dir=$OUT/run-async-$level" \
    --set loop.async_level=$level --set backend=vllm-server > "$OUT/run-async-$level.txt" 2>&1 \
    || failed=1
done

kill $sampler 2>/dev/null
"$PY" - "$OUT" "$MODEL" "$failed" <<'PYEOF'
"""Gather the figures docs/scaling.md's throughput model needs into summary.json."""
import json, pathlib, sys
out, model, failed = pathlib.Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
def load(name):
    try:
        return json.loads((out / name).read_text())
    except (OSError, ValueError):
        return None
figures = {"model": model, "steps_failed": bool(failed)}
for name in ("vllm", "transformers"):
    bench = load(f"bench-{name}.json")
    if bench:
        figures[f"{name}_tokens_per_second"] = {r["batch_size"]: r["tokens_per_second"]
                                                for r in bench["results"]}
metrics = out / "run" / "metrics.jsonl"
if metrics.is_file():
    m = json.loads(metrics.read_text().splitlines()[-1])
    figures["iteration_seconds"] = m.get("seconds")
    figures["train"] = {k: m["train"].get(k) for k in ("seconds", "push_seconds", "optimizer_steps",
                                                       "agent_tokens_trained", "designer_tokens_trained")}
    figures["envs_valid"] = m.get("envs_valid")
try:
    used = [int(x) for x in (out / "memory.csv").read_text().split() if x.strip().isdigit()]
    figures["gpu_memory_peak_mib"] = max(used) if used else None
except OSError:
    pass
for level in (0, 1):
    rows = out / f"run-async-{level}" / "metrics.jsonl"
    if rows.is_file():
        pipe = [json.loads(line)["pipeline"] for line in rows.read_text().splitlines()]
        figures[f"async_{level}"] = {k: round(sum(p[k] for p in pipe), 1) for k in (
            "generator_busy_seconds", "generator_idle_seconds", "trainer_busy_seconds",
            "trainer_idle_seconds", "push_seconds")}
(out / "summary.json").write_text(json.dumps(figures, indent=2))
print(json.dumps(figures, indent=2))
PYEOF
exit $failed
