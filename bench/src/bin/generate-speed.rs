//! Generation speed of the local models (the paper writer and the rewriter): for prompts of
//! about 20, 200 and 2,000 tokens (growing 10× at a time; real CSL abstracts in Qwen's chat
//! template), the prompt's evaluation in tokens per second and the answer's tokens per second,
//! without a copy guard and with the paper writer's guard over the prompt's text, and the time
//! to evaluate a follow-up prompt on the same records (another question after them). The answer is
//! drawn greedily, so two builds can be compared on the same text (`answer` is printed).
//!
//!   cargo run --release -p wenjian-bench --bin generate-speed
//!
//! Needs the model files (`wenjian models fetch qwen2.5-0.5b qwen2.5-1.5b`; WENJIAN_MODELS_DIR,
//! default ./data/models) and `../shared/data/corpus` (or WENJIAN_EVAL_DATA).

use llm::chat::{CopyGuard, Message};
use llm::generate::{Sampling, chat_prompt};
use std::time::Instant;

/// Tokens drawn after the prompt for the per-token figure.
const ANSWER_TOKENS: usize = 48;

fn measure(model: &llm::LocalScorer, context: &str, guarded: bool) -> serde_json::Value {
    let asking = |question: &str| {
        chat_prompt(&[
            Message::system("你是一名论文写作助手。"),
            Message::user(format!("参考资料：\n{context}\n{question}")),
        ])
    };
    let prompt = asking("请根据以上资料写一段关于研究背景的论述。");
    let prompt_tokens = model.tokenize(&prompt).expect("tokenize").ids.len();
    // The paper writer's guard: the records offered are its source (compose's SNIPPET_COPY_*).
    let guard = guarded.then(|| CopyGuard {
        source: context.to_string(),
        keep: vec![],
        probability: 0.8,
        run: 10,
        chars: 10,
    });
    let sampling = Sampling {
        temperature: 0.0,
        ..Sampling::default()
    };
    // From the prompt's first token: the shared start of the last prompt is forgotten.
    // Timed from the answer's first text on, so the prompt's evaluation (timed alone above)
    // does not blur the per-token figure.
    let run = |max_tokens: usize| {
        model.forget_last_prompt();
        let t = Instant::now();
        let blocking = guard.as_ref().map(|g| model.blocking(g).expect("guard"));
        let mut first_text: Option<(Instant, String)> = None;
        let mut text = String::new();
        let generated = model
            .generate(
                &prompt,
                max_tokens,
                &sampling,
                blocking.as_ref(),
                &mut |piece| {
                    text.push_str(piece);
                    first_text.get_or_insert_with(|| (Instant::now(), text.clone()));
                    true
                },
            )
            .expect("generate");
        let answering = first_text.map(|(at, shown)| {
            let before = model.tokenize(&shown).map_or(1, |t| t.ids.len());
            let after = generated.completion_tokens.saturating_sub(before);
            after as f64 / at.elapsed().as_secs_f64()
        });
        (t.elapsed().as_secs_f64(), generated, answering)
    };
    let (first, _, _) = run(1);
    let (_, generated, answer_tokens_per_second) = run(ANSWER_TOKENS + 1);
    // Another question on the same records right after (the paper writer's next section): what
    // evaluating a prompt that starts like the last one costs.
    let t = Instant::now();
    model
        .generate(
            &asking("请概括以上资料采用的研究方法。"),
            1,
            &sampling,
            None,
            &mut |_| true,
        )
        .expect("generate");
    let follow_up = t.elapsed().as_secs_f64();
    serde_json::json!({
        "prompt_tokens": prompt_tokens,
        "guarded": guarded,
        "prompt_seconds": first,
        "prompt_tokens_per_second": prompt_tokens as f64 / first,
        "follow_up_prompt_seconds": follow_up,
        "answer_tokens": generated.completion_tokens,
        "answer_tokens_per_second": answer_tokens_per_second,
        "answer": generated.text,
    })
}

fn main() {
    let Some(data) = wenjian_bench::eval_data_dir() else {
        eprintln!("skipped: no evaluation data (WENJIAN_EVAL_DATA)");
        return;
    };
    let corpus = wenjian_bench::csl_abstracts(&data);
    let abstracts: Vec<&str> = corpus
        .as_object()
        .into_iter()
        .flat_map(|o| o.values())
        .flat_map(|f| f.as_array().into_iter().flatten())
        .filter_map(|r| r["abstract"].as_str())
        .collect();
    let mut text = String::new();
    for a in &abstracts {
        if text.chars().count() >= 3_000 {
            break;
        }
        text.push_str(a);
        text.push('\n');
    }
    let mut models = vec![];
    for model in [
        wenjian_bench::observer_scorer(),
        wenjian_bench::detection_scorer(),
    ]
    .into_iter()
    .flatten()
    {
        // The guard's vocabulary lists are gathered once per process: not measured.
        measure(&model, "预热", true);
        let mut runs = vec![];
        // About 20, 200 and 2,000 tokens of prompt (a Chinese character is about a token).
        for chars in [1usize, 150, 1_900] {
            let context: String = text.chars().take(chars).collect();
            for guarded in [false, true] {
                runs.push(measure(&model, &context, guarded));
            }
        }
        models.push(serde_json::json!({"model": model.name, "runs": runs}));
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&serde_json::json!({
            "threads": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            "models": models,
        }))
        .unwrap()
    );
}
