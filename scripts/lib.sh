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
