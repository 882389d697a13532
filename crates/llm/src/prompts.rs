//! The prompts an operator may edit from the console. Each ships with the text it was tuned
//! with (`builtin`); a version saved in the console replaces it in every process, which
//! refreshes the replacements from the store (`set_overrides`). The engines ask for the text
//! here each time they build a request, so a change applies to the next request, no restart.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, LazyLock, RwLock};

/// One editable prompt.
#[derive(Debug, Clone, Copy)]
pub struct Prompt {
    /// Stable name, e.g. `rewrite/aigc`: what versions are kept under.
    pub name: &'static str,
    /// What it is for, as the console shows it.
    pub title: &'static str,
    /// The text it ships with.
    pub builtin: &'static str,
}

static OVERRIDES: LazyLock<RwLock<HashMap<String, Arc<str>>>> =
    LazyLock::new(|| RwLock::new(HashMap::new()));

impl Prompt {
    /// The text in force: the console's current version, else the built-in one.
    pub fn text(&self) -> Arc<str> {
        let overrides = OVERRIDES.read().unwrap_or_else(|e| e.into_inner());
        overrides
            .get(self.name)
            .cloned()
            .unwrap_or_else(|| Arc::from(self.builtin))
    }

    /// The placeholders (`{title}`) the built-in text fills in: a version must keep them all.
    pub fn placeholders(&self) -> BTreeSet<String> {
        placeholders(self.builtin)
    }
}

/// Replaces the prompts in force by `texts` (name → text); prompts not named go back to their
/// built-in text.
pub fn set_overrides(texts: HashMap<String, String>) {
    let fresh = texts
        .into_iter()
        .map(|(name, text)| (name, Arc::from(text)))
        .collect();
    *OVERRIDES.write().unwrap_or_else(|e| e.into_inner()) = fresh;
}

/// Sets one prompt's text in this process (the console's own, right after saving).
pub fn set_override(name: &str, text: &str) {
    OVERRIDES
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_string(), Arc::from(text));
}

/// `{word}` placeholders of a text (ASCII letters and underscores between braces).
pub fn placeholders(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close)
                if close > 0
                    && after[..close]
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b == b'_') =>
            {
                found.insert(after[..close].to_string());
                rest = &after[close + 1..];
            }
            _ => rest = after,
        }
    }
    found
}

/// `text` with each `{key}` replaced by its value, in one pass: a value that itself holds
/// `{title}` (a student's title, say) is never filled in again.
pub fn fill(text: &str, pairs: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let filled = after.find('}').and_then(|close| {
            let key = &after[..close];
            pairs
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, value)| (value, close))
        });
        match filled {
            Some((value, close)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: Prompt = Prompt {
        name: "test/sample",
        title: "样例",
        builtin: "写{budget}字，题目{title}。JSON 例子 {\"a\": 1} 不算。",
    };

    #[test]
    fn placeholders_are_words_in_braces() {
        let names: Vec<String> = SAMPLE.placeholders().into_iter().collect();
        assert_eq!(names, ["budget", "title"]);
        assert!(placeholders("没有占位符 {} {A}").is_empty());
    }

    #[test]
    fn an_override_replaces_the_builtin_text_until_cleared() {
        assert_eq!(&*SAMPLE.text(), SAMPLE.builtin);
        set_override("test/sample", "新的{budget}{title}");
        assert_eq!(&*SAMPLE.text(), "新的{budget}{title}");
        set_overrides(HashMap::new());
        assert_eq!(&*SAMPLE.text(), SAMPLE.builtin);
        assert_eq!(fill("写{budget}字", &[("budget", "800".into())]), "写800字");
        // A value holding a placeholder stays as it is; braces that are no placeholder stay.
        let filled = fill(
            "题目{title}，{budget}字，{\"a\":1}",
            &[("title", "论{budget}".into()), ("budget", "800".into())],
        );
        assert_eq!(filled, "题目论{budget}，800字，{\"a\":1}");
    }
}
