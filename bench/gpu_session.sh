#!/usr/bin/env bash
# One lease of a GPU machine, in one call: the `gpu` tests, then the full-scale bench of
# all-MiniLM-L6-v2 (50,000 items × 12 languages + English) and of a random 24-layer, 1024-wide encoder,
# then the forward-pass variants of bench/gpu_variants.py (attention implementations, budgets, widths
# rounded up, CUDA graphs); STEPS also offers "encode" (full_scale --encode-only), "encodes" (encoding
# only under three settings of the tokenizer and budget), "scoring" (scoring_scale) and "profile"
# (full_scale --profile).
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
TESTS_S=${TESTS_S:-150} MINILM_S=${MINILM_S:-220} RANDOM_S=${RANDOM_S:-70} VARIANTS_S=${VARIANTS_S:-60}
RANDOM_ITEMS=${RANDOM_ITEMS:-3000} MINILM_ITEMS=${MINILM_ITEMS:-50000}
ENCODE_S=${ENCODE_S:-80} ENCODE_ITEMS=${ENCODE_ITEMS:-20000} SCORING_S=${SCORING_S:-140} SCORING_ITEMS=${SCORING_ITEMS:-50000} SCORING_LANGUAGES=${SCORING_LANGUAGES:-12}
VARIANT_FLAGS=${VARIANT_FLAGS:---graphs}
PROFILE_S=${PROFILE_S:-200} PROFILE_ITEMS=${PROFILE_ITEMS:-20000}
ENCODES_S=${ENCODES_S:-60} ENCODES_ITEMS=${ENCODES_ITEMS:-10000} TEST_FILES=${TEST_FILES:-tests/gpu}
# MINILM_FLAGS adds flags to the MiniLM step, e.g. "--score-precision float32 --classifiers-from-the-start".
# The steps to run (a second, shorter call may run only some of them).
STEPS=${STEPS:-"tests minilm variants random"}
step() { [[ " $STEPS " == *" $1 "* ]]; }

{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  nproc
  python3 -c "import torch, transformers, sentence_transformers as st; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__, 'sentence-transformers', st.__version__)"
} 2>&1 | tee "$OUT/device.txt"
# The card's short name (h100, h200) names the result files, so figures from two kinds never mix.
CARD=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE "h100|h200|a100|l4|l40s" | tr 'A-Z' 'a-z')
CARD=${CARD:-gpu}

step tests && echo "== gpu tests" && timeout "$TESTS_S" python3 -m pytest --noconftest -p no:cacheprovider -m gpu $TEST_FILES -q -rA -s \
  -W ignore::pytest.PytestConfigWarning 2>&1 | tee "$OUT/gpu-tests.log" | grep -E "passed|failed|PASSED|FAILED|ERROR|cosine|halvings|blocks|differ|moved|  t|ranks equal|Error" | head -80

if step minilm; then
echo "== all-MiniLM-L6-v2, $MINILM_ITEMS items"
timeout "$MINILM_S" python3 bench/full_scale.py --items "$MINILM_ITEMS" --languages 12 --device cuda --floor-share 0.1 \
  ${MINILM_FLAGS:-} --json "$OUT/full_scale_minilm_${CARD}.json" >"$OUT/minilm.log" 2>&1
echo "exit $?"; grep -E "^\[|ratio|corpus|floor|tokeniser" "$OUT/minilm.log" | tail -30
fi

if step profile; then
echo "== all-MiniLM-L6-v2 profiled, $PROFILE_ITEMS items"
# The whole engine under cProfile and torch.profiler (their top entries end the log): where the time
# after encoding goes with a real model's vectors (T2 took 0.63 s a pair on the H100 at 50,000 items).
timeout "$PROFILE_S" python3 bench/full_scale.py --items "$PROFILE_ITEMS" --languages 12 --device cuda --floor-share 0.05 \
  --profile "$OUT/profile_minilm_${CARD}.prof" --json "$OUT/profile_minilm_${CARD}.json" >"$OUT/profile.log" 2>&1
echo "exit $?"; grep -E "^\[|ratio|floor" "$OUT/profile.log" | tail -24
fi

if step encode; then
echo "== all-MiniLM-L6-v2, encoding only, $ENCODE_ITEMS items"
timeout "$ENCODE_S" python3 bench/full_scale.py --items "$ENCODE_ITEMS" --languages 12 --device cuda --floor-share 0.2 \
  --encode-only --json "$OUT/encode_minilm_${CARD}.json" >"$OUT/encode.log" 2>&1
echo "exit $?"; grep -E "^\[|ratio|corpus|floor|tokeniser|encode only|utilisation|mean|peak" "$OUT/encode.log" | tail -30
fi

if step encodes; then
# The engine's encoding under several settings ("processes budget", semicolon-separated), each in its
# own process: by default the producer thread (the engine of h200-2026-11-27) against the worker
# processes, at the engine's budget (bench/results/h100-2026-11-27b also timed "auto 262144").
IFS=';' read -ra settings <<<"${ENCODES_SETTINGS:-0 65536;auto 65536}"
for setting in "${settings[@]}"; do
  set -- $setting
  processes=(); [[ $1 != auto ]] && processes=(--tokeniser-processes "$1")
  name="encode_minilm_${CARD}_p$1_t$2"
  echo "== encoding only, $ENCODES_ITEMS items, tokenizer processes $1, budget $2"
  timeout "$ENCODES_S" python3 bench/full_scale.py --items "$ENCODES_ITEMS" --languages 12 --device cuda --floor-share 0.05 \
    --encode-only --token-budget "$2" "${processes[@]}" --json "$OUT/$name.json" >"$OUT/$name.log" 2>&1
  echo "exit $?"; grep -E "^floor|tokeniser alone|encode only" "$OUT/$name.log" | tail -4
done
fi

if step scoring; then
echo "== everything after encoding, $SCORING_ITEMS items"
# With a profile of the scoring stage (its top entries end the log): on the H100 the cross-lingual
# pairs took 0.63 s each at 50,000 × 50,000, and where that goes has not been measured. The profile is
# written when the stage ends, or when --stop-after ends the run 45 s before SCORING_S (room for the
# tables), with the seconds of the tasks so far and of the one it stopped in.
# SCORING_PRECISIONS runs it once per score-block precision ("float16 float32" compares the default
# with plain float32 blocks; only the first is profiled). SCORING_FLAGS adds flags, e.g.
# "--classifiers-from-the-start" (T4's fits beside retrieval instead of after it). SCORING_PROFILE=0
# runs it without cProfile (which slows the Python-bound parts).
profiled=(--profile "$OUT/scoring_${CARD}.prof")
[[ ${SCORING_PROFILE:-1} == 0 ]] && profiled=()
for precision in ${SCORING_PRECISIONS:-float16}; do
  timeout "$SCORING_S" python3 bench/scoring_scale.py --items "$SCORING_ITEMS" --languages "$SCORING_LANGUAGES" --device cuda \
    --score-precision "$precision" --json "$OUT/scoring_${CARD}_${precision}.json" "${profiled[@]}" \
    --stop-after $((SCORING_S - 45)) ${SCORING_FLAGS:-} \
    >"$OUT/scoring_$precision.log" 2>&1
  echo "exit $? ($precision)"; grep -vE "Token indices|Loading weights" "$OUT/scoring_$precision.log" | grep -E "^  t|after_enc" | head -12
  profiled=()
done
fi

if step variants; then
echo "== forward-pass variants"
timeout "$VARIANTS_S" python3 bench/gpu_variants.py --items 3000 --languages 4 $VARIANT_FLAGS \
  --json "$OUT/gpu_variants_${CARD}.json" >"$OUT/variants.log" 2>&1
echo "exit $?"; grep -E "texts/s|padding|not available|failed|issued|Name|---|aten|void|kernel|gemm|Self" "$OUT/variants.log" | cut -c1-160 | head -40
fi

if step random; then
echo "== random-24x1024, $RANDOM_ITEMS items"
timeout "$RANDOM_S" python3 bench/full_scale.py --items "$RANDOM_ITEMS" --languages 12 --device cuda --floor-share 0.25 \
  --model random-24x1024 --json "$OUT/full_scale_random24x1024_${CARD}.json" >"$OUT/random.log" 2>&1
echo "exit $?"; grep -E "^\[|ratio|corpus|floor" "$OUT/random.log" | tail -20
fi
