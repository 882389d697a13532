//! The judge made of our real engines: simcheck for the copy ratio, aidetect with the local
//! model for the AI probability, the USE sentence encoder for meaning. Shared by the command
//! line and the server's rewrite task.

use crate::judged::Judge;
use aidetect::Detector;
use embed::UseEncoder;
use llm::chat::BoxFuture;
use simcheck::{CheckOptions, Library};
use std::sync::Arc;

pub struct EngineJudge<L: Library + 'static> {
    pub library: Arc<L>,
    pub options: CheckOptions,
    /// The same detector the AIGC report uses, so a rewrite is judged as the report would.
    pub detector: Detector,
    pub encoder: Arc<UseEncoder>,
}

/// Runs CPU-heavy model work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| format!("计算中断：{e}"))?
}

impl<L: Library + 'static> Judge for EngineJudge<L> {
    fn similarity<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<f64, String>> {
        Box::pin(async move {
            // Suspected paraphrases never count towards the copy ratio, so the paraphrase
            // layer is not needed here.
            simcheck::check(text, self.library.as_ref(), &self.options)
                .await
                .map(|r| r.ratio_total)
                .map_err(|e| format!("文献库比对失败：{e}"))
        })
    }

    fn ai_probability<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Option<f64>, String>> {
        let (detector, text) = (self.detector.clone(), text.to_string());
        Box::pin(blocking(move || {
            detector
                .paragraph_probability(&text)
                .map_err(|e| format!("AI 概率无法计算：{e}"))
        }))
    }

    fn meaning<'a>(
        &'a self,
        original: &'a str,
        rewritten: &'a str,
    ) -> BoxFuture<'a, Result<f64, String>> {
        let (encoder, a, b) = (
            self.encoder.clone(),
            original.to_string(),
            rewritten.to_string(),
        );
        Box::pin(blocking(move || Ok(encoder.cosine(&a, &b) as f64)))
    }

    /// Under the detector's own scoring model, so no further model is loaded for it.
    fn surprisal<'a>(&'a self, text: &'a str) -> BoxFuture<'a, Result<Option<Vec<f32>>, String>> {
        let (scorer, text) = (self.detector.scorer.clone(), text.to_string());
        Box::pin(blocking(move || {
            let tokens = scorer
                .score(&text, None)
                .map_err(|e| format!("通顺度无法计算：{e}"))?;
            Ok(Some(tokens.iter().map(|t| -t.logprob).collect()))
        }))
    }

    fn sentence_vectors<'a>(
        &'a self,
        sentences: Vec<String>,
    ) -> BoxFuture<'a, Result<Option<Vec<Vec<f32>>>, String>> {
        let encoder = self.encoder.clone();
        Box::pin(blocking(move || {
            Ok(Some(sentences.iter().map(|s| encoder.embed(s)).collect()))
        }))
    }
}
