//! The document-reading child on its own (see `server::extraction`), for deployments and tests
//! that point `extractor` at it; `wenjian extract-child` is the same program.

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(docio::isolated::child_main() as u8)
}
