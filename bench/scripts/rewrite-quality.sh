#!/usr/bin/env bash
# Rewriting quality on N paragraphs copied from ../shared/data/corpus (default 50): imports 400
# abstracts as the library, rewrites N of them verbatim with `wenjian rewrite --json`, and prints
# the mean figures (similarity before/after, meaning, AI probability before/after, accepted share,
# seconds per 1,000 characters). Figures, never pass/fail.
# With GOAL=aigc (降AIGC) the paper is N machine-written answers of 2025 models (GPT-4.5 and
# DeepSeek-R1, ../shared/data/aigc/agt2025-*.jsonl) instead, rewritten to lower the AI rate.
# An endpoint model (any OpenAI-compatible service) is measured the same way, by the same judges:
#   WENJIAN_LLM_BASE_URL=https://…/v1 WENJIAN_LLM_MODEL=… WENJIAN_LLM_API_KEY=… bench/scripts/rewrite-quality.sh 20
# Then the independent measures of `rewrite-review` (authors' keywords, numbers and English kept, sentence
# coverage, fluency under qwen2.5-1.5b); SAMPLES=docs/rewrite-samples.md writes 20 paragraphs side by side
# (git-ignored: it quotes the shared data).
# The local rewriting variants of docs/rewrite.md are chosen the same way, by configuration:
#   WENJIAN_REWRITE_BY_SENTENCE=true / WENJIAN_REWRITE_LOCAL_MODEL=qwen2.5-1.5b bench/scripts/rewrite-quality.sh 10
# Build first: cargo build --release -p wenjian -p wenjian-bench --bin wenjian --bin rewrite-review
#   bench/scripts/rewrite-quality.sh [N] [strength]   (GOAL, OUT_JSON, SAMPLES, WENJIAN_BIN, WENJIAN_MODELS_DIR, WENJIAN_EVAL_DATA)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
N="${1:-50}"
STRENGTH="${2:-medium}"
GOAL="${GOAL:-similarity}"
BIN="${WENJIAN_BIN:-$ROOT/target/release/wenjian}"
DATA="${WENJIAN_EVAL_DATA:-$ROOT/../shared/data}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
python3 - "$DATA" "$WORK" "$N" "$GOAL" <<'PY'
import glob, json, random, re, sys
data, work, n, goal = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
corpus = json.load(open(f"{data}/corpus/csl-abstracts-a.json"))
# The fields the rewrite review was not calibrated on (judge-calibration fits on 中国语言文学 and
# 药学), so the paragraphs below are held out from every threshold.
items = [x for field, v in corpus.items() if field.split("_")[-1] in ("计算机科学与技术", "应用经济学") for x in v[:200]]
with open(f"{work}/library.jsonl", "w") as lib:
    for x in items[:400]:
        lib.write(json.dumps({"title": x["title"], "text": x["abstract"]}, ensure_ascii=False) + "\n")
if goal == "aigc":
    rows = [json.loads(l) for f in sorted(glob.glob(f"{data}/aigc/agt2025-*.jsonl")) for l in open(f)]
    # One paragraph per answer: its lines joined, invisible characters dropped.
    texts = [re.sub(r"\s*\n\s*", "", r["text"].replace("\u200b", "")) for r in rows if r["label"] == 1]
    texts = [t for t in texts if 80 <= len(t) <= 400]
    random.Random(20261123).shuffle(texts)
    paper = texts[:n]
else:
    chosen = [x for x in items[:400] if 80 <= len(x["abstract"]) <= 260]
    chosen = sorted(chosen, key=lambda x: (items.index(x) % 200, x["domain"]))[:n]
    paper = [x["abstract"].strip() for x in chosen]
    # The authors' own keywords: the bench's key-term measure, independent of the review's TF-IDF.
    json.dump([x["keywords"] for x in chosen], open(f"{work}/keywords.json", "w"), ensure_ascii=False)
if goal == "aigc":
    json.dump([[] for _ in paper], open(f"{work}/keywords.json", "w"))
open(f"{work}/paper.txt", "w").write("\n".join(paper) + "\n")
PY
export WENJIAN_DATA_DIR="$WORK" WENJIAN_MODELS_DIR="${WENJIAN_MODELS_DIR:-$ROOT/data/models}" WENJIAN_LOG=warn
"$BIN" corpus import "$WORK/library.jsonl" >/dev/null
"$BIN" rewrite "$WORK/paper.txt" --goal "$GOAL" --strength "$STRENGTH" --json >"$WORK/out.json"
# OUT_JSON keeps every paragraph's rewrite for reading.
[ -n "${OUT_JSON:-}" ] && cp "$WORK/out.json" "$OUT_JSON"
# The independent measures (authors' keywords, numbers and English kept, sentence coverage,
# fluency under the larger qwen2.5-1.5b) and SAMPLES=path.md for 20 paragraphs side by side.
"${REVIEW_BIN:-$ROOT/target/release/rewrite-review}" "$WORK/out.json" "$WORK/keywords.json" ${SAMPLES:+--samples "$SAMPLES"}
python3 - "$WORK/out.json" <<'PY'
import json, sys
from collections import Counter
d = json.load(open(sys.argv[1]))
ps = d["paragraphs"]
def mean(key, only=None):
    xs = [p[key] for p in ps if p.get(key) is not None and (only is None or only(p))]
    return round(sum(xs) / len(xs), 4) if xs else None
print(json.dumps({
    "model": d["model"], "strength": d["strength"], "prompt_version": d["prompt_version"],
    "paragraphs": len(ps), "accepted": sum(p["accepted"] for p in ps),
    "similarity_before": mean("similarity_before"), "similarity_after_all": mean("similarity_after"),
    "similarity_after_accepted": mean("similarity_after", lambda p: p["accepted"]),
    "meaning_all": mean("meaning"), "meaning_accepted": mean("meaning", lambda p: p["accepted"]),
    "ai_before": mean("ai_before"), "ai_after": mean("ai_after"),
    "attempts": mean("attempts"),
    # Which engine wrote the judged candidate of each accepted paragraph.
    "accepted_by": dict(Counter(p["model"] for p in ps if p["accepted"])),
    "seconds_per_thousand_chars": round(d["seconds_per_thousand_chars"], 1),
}, ensure_ascii=False, indent=2))
PY
