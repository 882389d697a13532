#!/usr/bin/env bash
# The paper generator's bench (issue 22): N titles written for this bench across four fields
# (bench/data/paper-titles.json; none is a library title), each generated end to end by
# `wenjian paper generate --json` against a library of 1,200 real abstracts of the same four fields
# (../shared/data/corpus), then each body checked against that library with `wenjian check --json`,
# and the figures printed by `paper-review`: outline validity, length delivered, references valid,
# section relevance (beside shuffled sections), similarity to the library, minutes per 10,000 字.
# Figures, never pass/fail. The writer is whatever the configuration picks (the local
# qwen2.5-1.5b when installed; an endpoint with WENJIAN_LLM_BASE_URL / _MODEL / _API_KEY).
# Build first: cargo build --release -p wenjian -p wenjian-bench --bin wenjian --bin paper-review
#   bench/scripts/paper-quality.sh [N=20] [WORDS=3000]   (OUT_DIR keeps the papers; WENJIAN_BIN,
#   WENJIAN_MODELS_DIR, WENJIAN_EVAL_DATA; FROM=K starts at the (K+1)-th title of the round-robin,
#   so a session can write the titles an earlier one did not reach)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
N="${1:-20}"
WORDS="${2:-3000}"
BIN="${WENJIAN_BIN:-$ROOT/target/release/wenjian}"
DATA="${WENJIAN_EVAL_DATA:-$ROOT/../shared/data}"
WORK="${OUT_DIR:-$(mktemp -d)}"
mkdir -p "$WORK"
python3 - "$DATA" "$WORK" "$N" "$WORDS" "$ROOT/bench/data/paper-titles.json" "${FROM:-0}" <<'PY'
import json, sys
data, work, n, words, titles = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
start = int(sys.argv[6])
corpus = json.load(open(f"{data}/corpus/csl-abstracts-a.json"))
with open(f"{work}/library.jsonl", "w") as lib:
    for field, records in corpus.items():
        for x in records[:300]:
            lib.write(json.dumps({"title": x["title"], "text": x["abstract"]}, ensure_ascii=False) + "\n")
chosen = json.load(open(titles))
# Round-robin over the fields, so a short run still covers all four.
by_field = {}
for t in chosen:
    by_field.setdefault(t["field"], []).append(t)
order = [t for group in zip(*by_field.values()) for t in group][start:n]
for t in order:
    t["words"] = words
json.dump(order, open(f"{work}/titles.json", "w"), ensure_ascii=False, indent=1)
PY
export WENJIAN_DATA_DIR="$WORK/data" WENJIAN_MODELS_DIR="${WENJIAN_MODELS_DIR:-$ROOT/data/models}" WENJIAN_LOG="${WENJIAN_LOG:-warn}"
if [ ! -s "$WORK/library.tsv" ]; then
  "$BIN" corpus import "$WORK/library.jsonl" >/dev/null
  "$BIN" corpus list >"$WORK/library.tsv"
fi
COUNT="$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$WORK/titles.json")"
for ((i = 0; i < COUNT; i++)); do
  # A rerun with the same OUT_DIR keeps the papers already written.
  [ -s "$WORK/paper-$i.json" ] && continue
  IFS=$'\t' read -r TITLE FIELD KEYWORDS < <(python3 -c "
import json,sys; t=json.load(open(sys.argv[1]))[int(sys.argv[2])]
print(t['title'], t['field'], ','.join(t['keywords']), sep='\t')" "$WORK/titles.json" "$i")
  echo "[$((i + 1))/$COUNT] $TITLE" >&2
  if "$BIN" paper generate --title "$TITLE" --field "$FIELD" --keywords "$KEYWORDS" \
      --words "$WORDS" --json >"$WORK/paper-$i.tmp" 2>"$WORK/paper-$i.err"; then
    mv "$WORK/paper-$i.tmp" "$WORK/paper-$i.json"
  else
    echo "  failed: $(tail -1 "$WORK/paper-$i.err")" >&2
    continue
  fi
  # The body as the student would hand it in (headings and sections, no reference list).
  python3 -c "
import json,sys; p=json.load(open(sys.argv[1]))
print('\n'.join(s['heading'] + '\n' + s['text'] for s in p['sections']))" "$WORK/paper-$i.json" >"$WORK/body-$i.txt"
  "$BIN" check "$WORK/body-$i.txt" --json >"$WORK/check-$i.json"
done
"${REVIEW_BIN:-$ROOT/target/release/paper-review}" "$WORK"
