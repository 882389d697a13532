//! LibreOffice (headless) converting a document to PDF: decks for download, and the tests and
//! benches that look at what a viewer draws. Each run gets its own profile beside its output,
//! so conversions at the same time do not share (and lock) one.

use std::path::Path;
use std::process::Command;

/// `soffice` converting `input` to PDF in `out_dir` (the PDF takes the input's name with
/// `.pdf`); the caller runs it, with whatever time limit it needs.
pub fn pdf_command(input: &Path, out_dir: &Path) -> Command {
    pdfs_command(&[input], out_dir)
}

/// `soffice` converting several files in one start of the suite (most of a conversion's time).
pub fn pdfs_command(inputs: &[&Path], out_dir: &Path) -> Command {
    let profile = format!(
        "-env:UserInstallation=file://{}",
        out_dir.join("soffice-profile").display()
    );
    let mut command = Command::new("soffice");
    command
        .args([
            "--headless",
            "--norestore",
            &profile,
            "--convert-to",
            "pdf",
            "--outdir",
        ])
        .arg(out_dir)
        .args(inputs);
    command
}
