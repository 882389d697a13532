#!/usr/bin/env bash
# Scale-out on one machine, as on several: the API node and each worker run in network namespaces
# of their own, reaching PostgreSQL only over veth links with addresses made here (10.77.N.0/24),
# the way separate hosts reach a database server. Paid checks are submitted through the API; a
# worker is killed with SIGKILL mid-run and another added; every task must finish, each charged
# exactly once, and the API must keep reporting progress. Prints JSON figures.
#
#   cargo build --release -p wenjian && sudo bench/scripts/netns-scaleout.sh
#
# Needs root (ip netns), socat, PostgreSQL on 127.0.0.1:5432 (trust) and ../shared/data.
# Environment: WENJIAN_BIN (default target/release/wenjian), TASKS (default 12).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN="$(realpath "${WENJIAN_BIN:-target/release/wenjian}")"
TASKS="${TASKS:-24}"
DATA_DIR="$(realpath ../shared/data)"
DB="wj_netns_$$"
WORK="$(mktemp -d)"
NAMESPACES=(wjapi wjw1 wjw2 wjw3)
PIDS=()

cleanup() {
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  for i in "${!NAMESPACES[@]}"; do
    ip netns del "${NAMESPACES[$i]}" 2>/dev/null || true
    ip link del "wjh$i" 2>/dev/null || true
  done
  psql -q "postgres://postgres@127.0.0.1:5432/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# One namespace per node: veth wjh<i> (host, 10.77.<i>.1) <-> wjn<i> (node, 10.77.<i>.2), and on
# the host side a relay from 10.77.<i>.1:5432 to PostgreSQL (which listens on loopback only).
for i in "${!NAMESPACES[@]}"; do
  ns="${NAMESPACES[$i]}"
  ip netns add "$ns"
  ip link add "wjh$i" type veth peer name "wjn$i"
  ip link set "wjn$i" netns "$ns"
  ip addr add "10.77.$i.1/24" dev "wjh$i"
  ip link set "wjh$i" up
  ip netns exec "$ns" ip addr add "10.77.$i.2/24" dev "wjn$i"
  ip netns exec "$ns" ip link set "wjn$i" up
  ip netns exec "$ns" ip link set lo up
  socat "TCP-LISTEN:5432,bind=10.77.$i.1,reuseaddr,fork" TCP:127.0.0.1:5432 &
  PIDS+=($!)
done
sleep 0.5

psql -q "postgres://postgres@127.0.0.1:5432/postgres" -c "CREATE DATABASE $DB"
node_env() { # the environment of node <i>: the database through its own link
  echo "WENJIAN_DATA_DIR=$WORK/node$1 WENJIAN_DATABASE_URL=postgres://postgres@10.77.$1.1:5432/$DB" \
       "WENJIAN_LIBRARY_BACKEND=database WENJIAN_FILES_BACKEND=database WENJIAN_JOB_LEASE_SECONDS=5" \
       "WENJIAN_MODELS_DIR=$(realpath data/models) RUST_LOG=warn"
}
on_node() { local i=$1; shift; ip netns exec "${NAMESPACES[$i]}" env $(node_env "$i") "$@"; }

# The library (even CSL records) and the papers (odd records, one library abstract in three).
python3 - "$DATA_DIR" "$WORK" "$TASKS" <<'EOF'
import json, sys
data, work, tasks = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [r for rs in json.load(open(f"{data}/corpus/csl-abstracts-a.json")).values() for r in rs]
lib, own = rows[0::2], rows[1::2]
with open(f"{work}/library.jsonl", "w") as f:
    for r in lib:
        f.write(json.dumps({"title": r["title"], "text": r["abstract"]}, ensure_ascii=False) + "\n")
papers, n = [], 0
for t in range(tasks):
    parts = []
    while sum(map(len, parts)) < 8000:
        parts.append(own[n % len(own)]["abstract"])
        if n % 3 == 0:
            parts.append(lib[(n * 7) % len(lib)]["abstract"])
        n += 1
    papers.append("\n".join(parts))
json.dump(papers, open(f"{work}/papers.json", "w"), ensure_ascii=False)
EOF
on_node 1 "$BIN" corpus import "$WORK/library.jsonl" >/dev/null

# The API node: no workers (workers_per_queue = 0), listening on its own address.
ip netns exec wjapi env $(node_env 0) WENJIAN_WORKERS_PER_QUEUE=0 WENJIAN_LISTEN=10.77.0.2:8080 \
  "$BIN" serve >"$WORK/api.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 60); do curl -sf http://10.77.0.2:8080/api/health >/dev/null && break; sleep 0.5; done

# `ip netns exec` and `env` exec the binary, so $! is the worker process itself.
start_worker() {
  ip netns exec "${NAMESPACES[$1]}" env $(node_env "$1") "$BIN" worker >>"$WORK/worker$1.log" 2>&1 &
  LAST_PID=$!
  PIDS+=("$LAST_PID")
}

python3 - "$WORK" "$BIN" "$DB" <<'EOF' &
import json, os, subprocess, sys, time, urllib.request
work, binary, db = sys.argv[1:4]
API = "http://10.77.0.2:8080"
def call(path, body=None, token=None, method="POST"):
    req = urllib.request.Request(API + path, data=None if body is None else json.dumps(body).encode(),
                                 method=method, headers={"Content-Type": "application/json"})
    if token: req.add_header("Authorization", "Bearer " + token)
    try:
        return json.load(urllib.request.urlopen(req, timeout=30))
    except urllib.error.HTTPError as e:
        return json.load(e)
token = call("/api/base/login_api/f/register", {"username": "netnsuser", "password": "password-123"})["result"]["access_token"]
env = dict(os.environ, WENJIAN_DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{db}", WENJIAN_DATA_DIR=work + "/host")
subprocess.run([binary, "account", "credit", "netnsuser", "--yuan", "1000"], env=env, check=True, capture_output=True)
ids, prices = [], {}
for i, paper in enumerate(json.load(open(work + "/papers.json"))):
    draft = call("/api/base/check_api/check_init", {"title": f"论文{i}", "text": paper}, token)["result"]["id"]
    prices[draft] = call("/api/base/check_api/check_cost", {"id": draft}, token)["result"]["priceFen"]
    status = call("/api/base/check_api/check_submit", {"id": draft}, token)["result"]["status"]
    assert status == "queued", status
    ids.append(draft)
open(work + "/submitted", "w").write(json.dumps(ids))
began, progress, final, seen = time.time(), [], {}, {}
while len(final) < len(ids) and time.time() - began < 900:
    for i in ids:
        if i in final: continue
        r = call("/api/base/check_api/load_by_id", {"id": i}, token)["result"]
        seen.setdefault(i, set()).add((r["status"], r.get("progress")))
        if i == ids[0]: progress.append((round(time.time() - began, 1), r["status"], r.get("progress")))
        if r["status"] in ("done", "failed", "cancelled"): final[i] = r
    time.sleep(0.3)
seconds = time.time() - began
account = call("/api/base/account_info_api/account", None, token, "GET")["result"]
charges = [e["deltaFen"] for e in account["ledger"] if e["deltaFen"] < 0]
refunds = [e["deltaFen"] for e in account["ledger"] if e["deltaFen"] > 0 and e["deltaFen"] != 100000]
out = {
    "bench": "netns-scaleout", "tasks": len(ids), "seconds": round(seconds, 1),
    "done": sum(r["status"] == "done" for r in final.values()),
    "not_done": [r["status"] for r in final.values() if r["status"] != "done"],
    "charged_once_each": sorted(charges) == sorted(-prices[i] for i in ids),
    "refunds": refunds,
    "balance_ok": account["balanceFen"] == 100000 - sum(prices.values()),
    # Tasks the polling page saw running with some progress before they were done.
    "tasks_seen_in_progress": sum(any(st == "running" and (p or 0) > 0 for st, p in v) for v in seen.values()),
    "progress_samples_of_first_task": progress[:: max(1, len(progress) // 12)],
}
json.dump(out, open(work + "/result.json", "w"), ensure_ascii=False)
EOF
DRIVER=$!

# Two workers on two "hosts"; once checks run, one is killed outright and a third host joins.
while [ ! -f "$WORK/submitted" ]; do sleep 0.2; done
start_worker 1; W1=$LAST_PID
start_worker 2
sleep 4
kill -9 "$W1"
echo "killed worker 1 (pid $W1) mid-run" >&2
start_worker 3
wait "$DRIVER"
# Jobs a killed worker held and another worker ran again after the lease ran out.
RETRIED=$(psql -tA "postgres://postgres@127.0.0.1:5432/$DB" -c "SELECT COUNT(*) FROM jobs WHERE attempts > 1")
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); r['jobs_run_again_after_the_kill']=int(sys.argv[2]); print(json.dumps(r, ensure_ascii=False))" \
  "$WORK/result.json" "$RETRIED"
