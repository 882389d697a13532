//! Chat-style rewriting (`chat_gpt_api`): one message of a conversation answered by the chat
//! model, as a durable task like every paid piece of work. The answer streams into the task's
//! draft as the model writes it; the API relays it to the browser over server-sent events. A
//! follow-up message carries the conversation before it, so "再口语化一点" adjusts the last answer.

use crate::models::{Feature, ModelHub};
use crate::worker::{DraftWriter, TaskContext, TaskError, TaskFuture, TaskHandler, TaskOutput};
use llm::chat::{ChatRequest, Message, Usage};
use rewrite::{Goal, Strength};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

pub const KIND: &str = "chat";

/// Turns of earlier conversation sent with a follow-up (the newest ones).
pub const HISTORY_TURNS: usize = 12;

/// The input of a chat task, as stored with it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChatInput {
    /// The conversation before this message (user and assistant turns), oldest first.
    #[serde(default)]
    pub history: Vec<Message>,
    pub message: String,
    /// `free`, or a rewrite goal whose instruction leads the conversation (`polish`, …).
    pub mode: String,
    /// The chat task this message follows.
    #[serde(default)]
    pub parent: Option<i64>,
    /// Counted characters of the message (the number priced).
    #[serde(default)]
    pub chars: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChatResult {
    pub reply: String,
    /// `provider:model`.
    pub model: String,
    pub usage: Usage,
    pub finish_reason: Option<String>,
    pub elapsed_ms: u64,
}

/// The system prompt of a conversation in `mode`.
pub fn system_prompt(mode: &str) -> String {
    match Goal::parse(mode) {
        Some(goal) => format!(
            "{}\n用户接着提出的要求，是对你上一次改写的进一步修改；始终只输出改写后的文字。",
            rewrite::instruction(goal, Strength::Medium).trim_end()
        ),
        None => rewrite::chat_instruction().trim_end().to_string(),
    }
}

/// The chat request for `input`: the mode's instruction, the earlier turns, the message.
pub fn request(input: &ChatInput) -> ChatRequest {
    let mut messages = vec![Message::system(system_prompt(&input.mode))];
    messages.extend(input.history.iter().cloned());
    messages.push(Message::user(input.message.clone()));
    let chars = input.message.chars().count() as u32;
    ChatRequest {
        messages,
        temperature: 0.7,
        max_tokens: Some((chars * 2).clamp(256, 3072)),
        copy_guard: None,
    }
}

pub struct ChatHandler {
    models: Arc<ModelHub>,
}

impl ChatHandler {
    pub fn new(models: Arc<ModelHub>) -> Self {
        ChatHandler { models }
    }
}

impl TaskHandler for ChatHandler {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn run(&self, ctx: TaskContext) -> TaskFuture<'_> {
        Box::pin(async move {
            let started = std::time::Instant::now();
            let input: ChatInput = serde_json::from_str(&ctx.input)
                .map_err(|e| TaskError::permanent(format!("任务数据无法读取：{e}")))?;
            ctx.progress(5, "加载模型").await;
            let model = self
                .models
                .chat(Feature::Chat)
                .await
                .map_err(TaskError::permanent)?;
            ctx.progress(10, "模型书写中").await;
            // The message's characters are what was paid for; once the answer is as long, a
            // cancellation refunds nothing.
            let draft = DraftWriter::start(ctx.clone(), String::new(), input.chars);
            let on_delta = |piece: &str| draft.update(|text| text.push_str(piece));
            // A failed answer ends the task, which refunds it in full: the user asks again.
            let reply = model
                .chat(&request(&input), Some(&on_delta))
                .await
                .map_err(|e| TaskError::permanent(e.to_string()))?;
            let text = reply.text.trim().to_string();
            if text.is_empty() {
                return Err(TaskError::permanent("模型未给出回答，费用已退回"));
            }
            let result = ChatResult {
                reply: text,
                model: model.id(),
                usage: reply.usage,
                finish_reason: reply.finish_reason,
                elapsed_ms: started.elapsed().as_millis() as u64,
            };
            Ok(TaskOutput::from(serde_json::to_string(&result).map_err(
                |e| TaskError::permanent(format!("结果无法保存：{e}")),
            )?))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_follow_up_carries_the_conversation_after_the_instruction() {
        let input = ChatInput {
            history: vec![
                Message::user("原文段落"),
                Message {
                    role: llm::chat::Role::Assistant,
                    content: "第一次改写".into(),
                },
            ],
            message: "再口语化一点".into(),
            mode: "polish".into(),
            parent: Some(1),
            chars: 6,
        };
        let req = request(&input);
        assert_eq!(req.messages.len(), 4);
        assert!(req.messages[0].content.starts_with("请润色"));
        assert_eq!(req.messages[3].content, "再口语化一点");
        assert!(req.copy_guard.is_none());
        assert!(system_prompt("free").contains("学术写作助手"));
    }
}
