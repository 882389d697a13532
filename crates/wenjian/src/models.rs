//! `wenjian models fetch` and `wenjian models list`: the installer (`server::model_fetch`) with a
//! progress bar on the terminal.

use indicatif::{ProgressBar, ProgressStyle};
use server::model_fetch::{self, FetchProgress};
use std::path::Path;

/// A progress bar per file.
#[derive(Default)]
struct Terminal {
    bar: Option<ProgressBar>,
}

impl FetchProgress for Terminal {
    fn say(&mut self, line: &str) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
        println!("{line}");
    }

    fn pieces(&mut self, file: &str, done: usize, total: usize) {
        let bar = self.bar.get_or_insert_with(|| {
            let bar = ProgressBar::new(total as u64).with_style(
                ProgressStyle::with_template("  {msg} [{bar:30}] {pos}/{len}")
                    .expect("static template")
                    .progress_chars("=> "),
            );
            bar.set_message(file.to_string());
            bar
        });
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if done == total {
            bar.finish_and_clear();
            self.bar = None;
        }
    }
}

pub fn fetch(models_dir: &Path, names: &[String]) -> anyhow::Result<()> {
    model_fetch::fetch(models_dir, names, &mut Terminal::default())
}

pub fn list(models_dir: &Path) {
    for (name, description, ready) in model_fetch::catalogue(models_dir) {
        let state = if ready { "已就绪" } else { "未下载" };
        println!("{name}\t{state}\t{description}");
    }
}
