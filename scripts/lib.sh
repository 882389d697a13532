# Shared by scripts/run.sh and scripts/test.sh: install what this machine is missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

log() { printf '\033[1;34m==>\033[0m %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "需要 root 权限来安装系统软件包：$*" >&2; return 1; fi
}

APT_UPDATED=0
apt_install() {
  if [ "$APT_UPDATED" = 0 ]; then as_root apt-get update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

require_toolchains() {
  command -v cargo >/dev/null || { echo "缺少 Rust 工具链（cargo）" >&2; exit 1; }
  command -v npm >/dev/null || { echo "缺少 Node.js / npm" >&2; exit 1; }
}

# npm ci when the lock file changed since the last install, so repeated runs stay fast.
npm_install() {
  local dir="$1"
  local stamp="$dir/node_modules/.wenjian-lock-hash"
  local hash
  hash="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$hash" ]; then
    log "npm ci ($dir)"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$hash" > "$stamp"
  fi
}

build_web() {
  npm_install "$ROOT/web"
  log "building the web app"
  (cd "$ROOT/web" && npm run build --silent)
}

ensure_browser() {
  local want=()
  [ -x /usr/bin/chromium ] || want+=(chromium)
  fc-list 2>/dev/null | grep -qi 'Noto Sans CJK' || want+=(fonts-noto-cjk)
  if [ "${#want[@]}" -gt 0 ]; then
    log "installing ${want[*]}"
    apt_install "${want[@]}"
  fi
}

# The CJK font embedded in PDF reports (a configured `report_font` is used instead when set).
ensure_cjk_font() {
  [ -f /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc ] || { log "installing fonts-noto-cjk"; apt_install fonts-noto-cjk; }
}

# Debian's pdftotext: the fallback reader for PDF uploads.
ensure_pdftotext() {
  command -v pdftotext >/dev/null || { log "installing poppler-utils"; apt_install poppler-utils; }
}

# LibreOffice headless renders generated Word files and slide decks to PDF in the tests (what a
# student's LibreOffice shows: the table of contents, the headings, every slide's text).
ensure_libreoffice() {
  command -v soffice >/dev/null || { log "installing LibreOffice Writer (headless)"; apt_install --no-install-recommends libreoffice-writer-nogui; }
  dpkg -s libreoffice-impress-nogui >/dev/null 2>&1 || { log "installing LibreOffice Impress (headless)"; apt_install --no-install-recommends libreoffice-impress-nogui; }
}

# python-pptx and python-docx, in a virtual environment of the project's own: the tests open
# generated decks and theses with them, as a second reader beside LibreOffice.
ensure_office_python() {
  local venv="$ROOT/target/office-python"
  if ! "$venv/bin/python" -c 'import pptx, docx' 2>/dev/null; then
    log "installing python-pptx and python-docx ($venv)"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check python-pptx python-docx
  fi
}

ensure_postgres() {
  if ! command -v pg_isready >/dev/null; then
    log "installing PostgreSQL"
    apt_install postgresql
  fi
  # pg_dump / pg_restore: the backup test restores a dump into a fresh database.
  command -v pg_restore >/dev/null || { log "installing postgresql-client"; apt_install postgresql-client; }
  if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
    log "starting PostgreSQL"
    local version
    version="$(ls /etc/postgresql | sort -V | tail -n 1)"
    as_root pg_ctlcluster --skip-systemctl-redirect "$version" main start
    for _ in $(seq 1 30); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 1; done
  fi
  pg_isready -h 127.0.0.1 -p 5432 -q || { echo "PostgreSQL 未能在 127.0.0.1:5432 启动" >&2; exit 1; }
}

# Garage (https://garagehq.deuxfleurs.fr), a real S3-compatible object store, for the tests of the
# `s3` file backend. Built once per machine from crates.io into a cache outside the checkout (a
# debug build: minutes instead of a quarter of an hour; its speed does not matter to the tests),
# then run as a one-node cluster on 127.0.0.1:3900 with the test key and bucket that
# `store::testing` uses. Nothing here is used by a deployment, which names its own store in [s3].
GARAGE_VERSION=2.5.0
GARAGE_HOME="${WENJIAN_CACHE_DIR:-$HOME/.cache/wenjian}/garage-$GARAGE_VERSION"
GARAGE_TEST_KEY_ID=GK0000000000000000000000a1
GARAGE_TEST_SECRET=5e3f0c8d2b7a41e69c0d1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e

ensure_garage() {
  local bin="$GARAGE_HOME/bin/garage"
  if [ ! -x "$bin" ]; then
    log "building Garage $GARAGE_VERSION (the S3-compatible store of the file tests; once per machine)"
    cargo install garage --version "$GARAGE_VERSION" --locked --debug --quiet \
      --no-default-features --features bundled-libs,sqlite --root "$GARAGE_HOME"
  fi
  local node="$GARAGE_HOME/test-node"
  local conf="$node/garage.toml"
  mkdir -p "$node"
  if [ ! -f "$conf" ]; then
    cat > "$conf" <<TOML
metadata_dir = "$node/meta"
data_dir = "$node/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:3901"
rpc_public_addr = "127.0.0.1:3901"
rpc_secret = "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:3900"
TOML
  fi
  local garage=("$bin" -c "$conf")
  # A fresh cluster for every test run: the tests leave their folders in the bucket.
  pkill -f -- "$conf server" 2>/dev/null || true
  for _ in $(seq 1 40); do curl -s -o /dev/null "http://127.0.0.1:3900/" || break; sleep 0.25; done
  rm -rf "$node/meta" "$node/data"
  log "starting Garage on 127.0.0.1:3900"
  nohup "${garage[@]}" server >> "$node/garage.log" 2>&1 &
  local status=""
  for _ in $(seq 1 60); do
    status="$("${garage[@]}" status 2>/dev/null)" && curl -s -o /dev/null "http://127.0.0.1:3900/" && break
    sleep 0.5
  done
  [ -n "$status" ] || { echo "Garage 未能在 127.0.0.1:3900 启动，见 $node/garage.log" >&2; exit 1; }
  local id
  id="$("${garage[@]}" node id -q 2>/dev/null)"
  "${garage[@]}" layout assign -z test -c 1G "${id%%@*}" >/dev/null
  "${garage[@]}" layout apply --version 1 >/dev/null
  "${garage[@]}" key import --yes -n wenjian-test "$GARAGE_TEST_KEY_ID" "$GARAGE_TEST_SECRET" >/dev/null
  "${garage[@]}" bucket create wenjian-test >/dev/null
  "${garage[@]}" bucket allow --read --write --owner wenjian-test --key "$GARAGE_TEST_KEY_ID" >/dev/null
}
