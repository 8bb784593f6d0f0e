#!/usr/bin/env bash
# One lease of a GPU machine, in one call: the `gpu` tests, then the full-scale bench of
# all-MiniLM-L6-v2 (50,000 items × 12 languages + English) and of a random 24-layer, 1024-wide encoder,
# then the forward-pass variants of bench/gpu_variants.py (attention implementations, budgets, compile).
#
# Prepare here with `.venv/bin/python bench/gpu_pack.py`, then run through the device tool with
# carry [".gpu"] and `bash bench/gpu_session.sh`. Everything lands in $OUT (logs and --json files).
# Each step has its own time limit, so that one slow step leaves the others their share of the lease.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu-session}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=true
export NIRDESHA_SHARED_DATA="$PWD/.gpu/data"
SITE=/tmp/nirdesha-site
python3 bench/gpu_unpack.py "$SITE" >/dev/null || exit 1
export PYTHONPATH="$SITE:$PWD"
TESTS_S=${TESTS_S:-180} MINILM_S=${MINILM_S:-250} RANDOM_S=${RANDOM_S:-70} VARIANTS_S=${VARIANTS_S:-70}
RANDOM_ITEMS=${RANDOM_ITEMS:-3000} MINILM_ITEMS=${MINILM_ITEMS:-50000}
# The steps to run (a second, shorter call may run only some of them).
STEPS=${STEPS:-"tests minilm random variants"}
step() { [[ " $STEPS " == *" $1 "* ]]; }

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  nproc
  python3 -c "import torch, transformers, sentence_transformers as st; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__, 'sentence-transformers', st.__version__)"
} 2>&1 | tee "$OUT/device.txt"

step tests && echo "== gpu tests" && timeout "$TESTS_S" python3 -m pytest --noconftest -p no:cacheprovider -m gpu tests/gpu -q -rA -s \
  -W ignore::pytest.PytestConfigWarning 2>&1 | tee "$OUT/gpu-tests.log" | grep -E "passed|failed|PASSED|FAILED|ERROR|cosine|halvings|blocks|differ|moved|  t|ranks equal|Error" | head -80

if step minilm; then
echo "== all-MiniLM-L6-v2, $MINILM_ITEMS items"
timeout "$MINILM_S" python3 bench/full_scale.py --items "$MINILM_ITEMS" --languages 12 --device cuda --floor-share 0.1 \
  --json "$OUT/full_scale_minilm_h100.json" >"$OUT/minilm.log" 2>&1
echo "exit $?"; grep -E "^\[|ratio|corpus|floor" "$OUT/minilm.log" | tail -30
fi

if step random; then
echo "== random-24x1024, $RANDOM_ITEMS items"
timeout "$RANDOM_S" python3 bench/full_scale.py --items "$RANDOM_ITEMS" --languages 12 --device cuda --floor-share 0.25 \
  --model random-24x1024 --json "$OUT/full_scale_random24x1024_h100.json" >"$OUT/random.log" 2>&1
echo "exit $?"; grep -E "^\[|ratio|corpus|floor" "$OUT/random.log" | tail -20
fi

if step variants; then
echo "== forward-pass variants"
timeout "$VARIANTS_S" python3 bench/gpu_variants.py --items 3000 --languages 4 --compile \
  --json "$OUT/gpu_variants_h100.json" >"$OUT/variants.log" 2>&1
echo "exit $?"; grep -E "texts/s|padding|not available|failed" "$OUT/variants.log"
fi
