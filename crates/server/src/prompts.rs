//! The editable prompts of this deployment (rewriting, paper generation, slides) and how each
//! process keeps the console's versions in force: a worker looks before every job, and
//! `live_settings` every few seconds, whether a version was added since it last read them.

use llm::prompts::Prompt;
use std::sync::atomic::{AtomicI64, Ordering};

/// The newest version this process has read (-1: none read yet).
static READ_STAMP: AtomicI64 = AtomicI64::new(-1);

/// Every editable prompt with the group the console shows it under.
pub fn all() -> Vec<(&'static str, Prompt)> {
    let mut prompts: Vec<(&'static str, Prompt)> = Vec::new();
    prompts.extend(rewrite::PROMPTS.iter().map(|p| ("降重与改写", *p)));
    prompts.extend(compose::generate::PROMPTS.iter().map(|p| ("论文生成", *p)));
    prompts.push(("答辩PPT", slides::condense::PROMPT));
    prompts
}

/// The prompt called `name`.
pub fn find(name: &str) -> Option<Prompt> {
    all().into_iter().map(|(_, p)| p).find(|p| p.name == name)
}

/// Reads the versions in force when one was added since this process last read them.
pub async fn refresh(store: &store::Store) {
    let stamp = match store.prompt_stamp().await {
        Ok(stamp) => stamp,
        Err(e) => {
            tracing::warn!(error = %e, "prompt versions not checked");
            return;
        }
    };
    if stamp == READ_STAMP.load(Ordering::Acquire) {
        return;
    }
    match store.prompt_overrides().await {
        Ok(overrides) => {
            // A version saved for an older release that lacks a placeholder this release's
            // built-in text fills in (or names one it does not) is not used.
            let usable = overrides
                .into_iter()
                .filter(|(name, text)| match find(name) {
                    Some(prompt) => {
                        let fits = prompt.placeholders() == llm::prompts::placeholders(text);
                        if !fits {
                            tracing::warn!(prompt = %name, "prompt version does not fit this release: built-in text used");
                        }
                        fits
                    }
                    None => false,
                })
                .collect();
            llm::prompts::set_overrides(usable);
            READ_STAMP.store(stamp, Ordering::Release);
        }
        Err(e) => tracing::warn!(error = %e, "prompt versions not read"),
    }
}
