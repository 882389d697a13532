//! `chat_gpt_api`: chat-style rewriting. `completions` charges for one message, queues it as a
//! chat task and relays the answer as the model writes it, over server-sent events; a message
//! with `parent` continues that conversation. The task is durable: a closed browser loses
//! nothing, and `load_by_id` shows the answer later. A message the model cannot answer is
//! refunded in full; deleting one while it streams refunds only the share of the paid
//! characters not yet shown (text already read is paid for).

use crate::api::chat::task::{self as chat_task, ChatInput, ChatResult, HISTORY_TURNS};
use crate::api::paper_task::{self, IdForm, ListForm, RecordPage, Tariff};
use crate::auth::AuthUser;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::models::Feature;
use crate::params::{Params, lenient};
use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use llm::chat::{Message, Role};
use rewrite::Goal;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::time::Duration;
use store::{Task, TaskStatus};
use utoipa::{IntoParams, ToSchema};

pub const COUNTING_RULE: &str =
    "按您发送的文字计费（除空白外的全部字符），每条消息不足千字按千字计；模型未能回答时全额退回。";

/// The longest message; a paper goes to 论文降重.
pub const MAX_CHARS: usize = 5000;

/// How often a streaming answer looks for new text.
const STREAM_POLL: Duration = Duration::from_millis(250);

/// How long a non-streaming call waits for its answer.
const WAIT_LIMIT: Duration = Duration::from_secs(600);

fn tariff() -> Tariff {
    Tariff {
        service: crate::prices::PerThousand::Chat,
        free_checks_apply: false,
        package: Some(paper_task::PackageUnits::PerChar(
            store::GrantKind::RewriteChars,
        )),
        rule: COUNTING_RULE,
    }
}

fn not_found() -> ApiError {
    ApiError::not_found("chat_not_found", "对话记录不存在或已删除")
}

/// One turn of the conversation.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChatTurn {
    /// `user` or `assistant`.
    pub role: String,
    pub content: String,
}

/// One message and its answer.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ChatRecord {
    pub id: i64,
    pub title: String,
    /// `free` or a rewrite goal (polish, expand, shorten, academic, similarity, aigc, both).
    pub mode: String,
    pub message: String,
    /// The conversation before this message, oldest first.
    pub history: Vec<ChatTurn>,
    /// The message this one follows.
    pub parent: Option<i64>,
    /// The answer, once done.
    pub reply: Option<String>,
    /// While running: the answer so far.
    pub live: Option<String>,
    pub status: String,
    pub error: Option<String>,
    pub charged_fen: i64,
    /// What a package paid instead: uses, or characters for rewriting.
    pub charged_units: i64,
    /// `provider:model` that answered.
    pub model: Option<String>,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
}

fn input_of(task: &Task) -> Option<ChatInput> {
    serde_json::from_str(&task.input).ok()
}

fn result_of(task: &Task) -> Option<ChatResult> {
    task.result
        .as_deref()
        .and_then(|r| serde_json::from_str(r).ok())
}

fn live_of(task: &Task) -> Option<String> {
    (task.status == TaskStatus::Running)
        .then_some(task.draft.as_deref())
        .flatten()
        .and_then(|d| serde_json::from_str(d).ok())
}

fn record(task: &Task) -> ChatRecord {
    let input = input_of(task);
    let result = result_of(task);
    ChatRecord {
        id: task.id,
        title: task.title.clone(),
        mode: input.as_ref().map_or("free".into(), |i| i.mode.clone()),
        message: input
            .as_ref()
            .map(|i| i.message.clone())
            .unwrap_or_default(),
        history: input
            .as_ref()
            .map(|i| {
                i.history
                    .iter()
                    .map(|m| ChatTurn {
                        role: match m.role {
                            Role::Assistant => "assistant",
                            _ => "user",
                        }
                        .into(),
                        content: m.content.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        parent: input.as_ref().and_then(|i| i.parent),
        reply: result.as_ref().map(|r| r.reply.clone()),
        live: live_of(task),
        status: task.status.as_str().into(),
        error: task.error.clone(),
        charged_fen: task.charged_fen,
        charged_units: task.charged_units,
        model: result.as_ref().map(|r| r.model.clone()),
        prompt_tokens: result.as_ref().map(|r| r.usage.prompt_tokens),
        completion_tokens: result.as_ref().map(|r| r.usage.completion_tokens),
        created_at: task.created_at,
        finished_at: task.finished_at,
    }
}

async fn owned(state: &AppState, id: i64, user_id: i64) -> Result<Task, ApiError> {
    paper_task::owned_task(state, id, user_id, chat_task::KIND, not_found).await
}

/// A message to answer.
#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CompletionForm {
    /// The text to rewrite, or what to change in the last answer (at most 5,000 characters).
    #[serde(default)]
    pub message: String,
    /// `free` (default), or a rewrite goal whose instruction leads the conversation: polish,
    /// expand, shorten, academic, similarity, aigc, both. A follow-up keeps its parent's.
    #[serde(default)]
    pub mode: Option<String>,
    /// The message this one follows (must have its answer).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub parent: Option<i64>,
    /// `false`: answer with the finished record as JSON instead of a stream (default `true`).
    #[serde(default)]
    #[schema(value_type = Option<bool>)]
    pub stream: Option<serde_json::Value>,
}

fn parse_stream(value: &Option<serde_json::Value>) -> bool {
    use serde_json::Value;
    match value {
        Some(Value::Bool(on)) => *on,
        Some(Value::Number(n)) => n.as_i64() != Some(0),
        Some(Value::String(s)) => !matches!(s.trim(), "false" | "0"),
        _ => true,
    }
}

/// The task for a message: checked, charged and queued.
async fn start(
    state: &AppState,
    user_id: i64,
    form: &CompletionForm,
    confirmed: &paper_task::ConfirmedPayment,
) -> Result<Task, ApiError> {
    if let Some(why) = state.models.unavailable(Feature::Chat) {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "chat_model_missing",
            why,
        ));
    }
    let message = form.message.trim().replace("\r\n", "\n");
    if message.is_empty() {
        return Err(ApiError::bad_request(
            "empty_message",
            "请输入要改写的文字或修改要求",
        ));
    }
    let chars = aidetect::counted_chars(&message);
    if chars > MAX_CHARS {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_many_characters",
            format!("一条消息最多 {MAX_CHARS} 字（当前 {chars} 字）；整篇论文请使用「论文降重」"),
        ));
    }
    let (history, mode, title) = match form.parent {
        Some(parent_id) => {
            let parent = owned(state, parent_id, user_id).await?;
            let (Some(input), Some(result)) = (input_of(&parent), result_of(&parent)) else {
                return Err(ApiError::conflict(
                    "parent_not_answered",
                    "上一条消息还没有回答，请稍候再继续",
                ));
            };
            let mut history = input.history;
            history.push(Message::user(input.message));
            history.push(Message {
                role: Role::Assistant,
                content: result.reply,
            });
            let skip = history.len().saturating_sub(HISTORY_TURNS);
            (history.split_off(skip), input.mode, parent.title)
        }
        None => {
            let mode = match form.mode.as_deref().map(str::trim) {
                None | Some("") | Some("free") => "free".to_string(),
                Some(name) => Goal::parse(name)
                    .map(|g| g.as_str().to_string())
                    .ok_or_else(|| {
                        ApiError::bad_request(
                            "invalid_mode",
                            "改写方式只能是 free、polish、expand、shorten、academic、similarity、aigc 或 both",
                        )
                    })?,
            };
            let head: String = message.chars().take(20).collect();
            let title = if message.chars().count() > 20 {
                format!("{head}…")
            } else {
                head
            };
            (vec![], mode, title)
        }
    };
    let input = ChatInput {
        history,
        message,
        mode,
        parent: form.parent,
        chars,
    };
    let task = state
        .store
        .create_task(
            user_id,
            chat_task::KIND,
            &title,
            &serde_json::to_string(&input).map_err(ApiError::internal)?,
        )
        .await?;
    let cost = paper_task::quote(state, user_id, task.id, chars, &tariff()).await?;
    // A price the operator changed after the page showed it charges nothing.
    let charged = match confirmed.check(&cost) {
        Ok(()) => paper_task::charge_and_queue(state, &task, &cost, "对话改写").await,
        Err(e) => Err(e),
    };
    match charged {
        Ok(task) => Ok(task),
        Err(e) => {
            // Not paid: the message leaves no record behind.
            let _ = state.store.delete_task(task.id, user_id).await;
            Err(e)
        }
    }
}

/// One event of a streamed answer (`data:` JSON): `{"type":"created","record":…}` first, then
/// `{"type":"delta","text":…}` as the model writes, then `{"type":"done","record":…}`, or
/// `{"type":"error","code":…,"message":…}` when it ended without an answer (refunded).
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum StreamEvent {
    Created { record: ChatRecord },
    Delta { text: String },
    Done { record: ChatRecord },
    Error { code: String, message: String },
}

fn event(e: &StreamEvent) -> Result<Event, Infallible> {
    Ok(Event::default().data(serde_json::to_string(e).unwrap_or_default()))
}

/// What is new in `now` after the `sent` characters already relayed.
fn new_text(now: &str, sent: usize) -> Option<String> {
    let rest: String = now.chars().skip(sent).collect();
    (!rest.is_empty()).then_some(rest)
}

struct Relay {
    state: AppState,
    id: i64,
    user_id: i64,
    sent: usize,
    ended: bool,
}

/// Relays a chat task's answer as it grows in the store, until it ends.
fn relay(
    state: AppState,
    task: Task,
) -> impl futures_util::Stream<Item = Result<Event, Infallible>> {
    let first = event(&StreamEvent::Created {
        record: record(&task),
    });
    let relay = Relay {
        state,
        id: task.id,
        user_id: task.user_id,
        sent: 0,
        ended: false,
    };
    let rest = futures_util::stream::unfold(relay, |mut r| async move {
        if r.ended {
            return None;
        }
        loop {
            tokio::time::sleep(STREAM_POLL).await;
            let task = match r.state.store.task(r.id, r.user_id).await {
                Ok(task) => task,
                Err(_) => {
                    r.ended = true;
                    let gone = StreamEvent::Error {
                        code: "chat_not_found".into(),
                        message: "对话记录已删除".into(),
                    };
                    return Some((vec![event(&gone)], r));
                }
            };
            let mut out = vec![];
            match task.status {
                TaskStatus::Done => {
                    let reply = result_of(&task).map(|x| x.reply).unwrap_or_default();
                    // The stored answer is trimmed; relay what the stream has not shown yet.
                    if let Some(text) = new_text(&reply, r.sent) {
                        out.push(event(&StreamEvent::Delta { text }));
                    }
                    out.push(event(&StreamEvent::Done {
                        record: record(&task),
                    }));
                    r.ended = true;
                }
                TaskStatus::Failed | TaskStatus::Cancelled => {
                    out.push(event(&StreamEvent::Error {
                        code: "chat_failed".into(),
                        message: task
                            .error
                            .clone()
                            .unwrap_or_else(|| "模型未能回答，费用已退回".into()),
                    }));
                    r.ended = true;
                }
                _ => {
                    // Leading whitespace is held back, as the stored answer drops it.
                    if let Some(live) = live_of(&task).map(|l| l.trim_start().to_string())
                        && let Some(text) = new_text(&live, r.sent)
                    {
                        r.sent += text.chars().count();
                        out.push(event(&StreamEvent::Delta { text }));
                    }
                }
            }
            if !out.is_empty() {
                return Some((out, r));
            }
        }
    });
    use futures_util::StreamExt;
    futures_util::stream::iter([first]).chain(rest.flat_map(futures_util::stream::iter))
}

/// Answers one message of a chat-style rewrite: charged (per started 1,000 characters of the
/// message), queued, and streamed back as server-sent events (`text/event-stream`, see
/// `StreamEvent`) unless `stream` is false.
/// Which model answers 对话改写 here (`endpoint`, `local`, or `none` with why), so the page says
/// it before anyone pays for a message nothing can answer.
#[utoipa::path(get, path = "/api/base/chat_gpt_api/engine", tag = "chat_gpt_api",
    responses((status = 200, body = inline(crate::envelope::Envelope<crate::models::RewriteEngine>))))]
pub async fn engine(State(state): State<AppState>) -> ApiResult<crate::models::RewriteEngine> {
    Ok(Success(state.models.engine(Feature::Chat)))
}

#[utoipa::path(post, path = "/api/base/chat_gpt_api/completions", tag = "chat_gpt_api", security(("bearer" = [])),
    params(CompletionForm, ("X-Confirmed-Price" = Option<i64>, Header, description = "The price in fen the page showed for this message; when the balance would pay another (an operator changed prices), nothing is charged (412 payment_changed)")), request_body = CompletionForm,
    responses(
        (status = 200, description = "text/event-stream of StreamEvent JSON; with stream=false the finished record", body = inline(crate::envelope::Envelope<ChatRecord>)),
        (status = 412, description = "payment_changed: the price changed since the page showed it; nothing charged", body = crate::envelope::ErrorBody),
        (status = 400, description = "empty_message / invalid_mode", body = crate::envelope::ErrorBody),
        (status = 402, description = "insufficient_balance", body = crate::envelope::ErrorBody),
        (status = 404, description = "chat_not_found (the parent)", body = crate::envelope::ErrorBody),
        (status = 409, description = "parent_not_answered", body = crate::envelope::ErrorBody),
        (status = 413, description = "too_many_characters", body = crate::envelope::ErrorBody),
        (status = 503, description = "chat_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn completions(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    confirmed: paper_task::ConfirmedPayment,
    Params(form): Params<CompletionForm>,
) -> Result<Response, ApiError> {
    let task = start(&state, session.user.id, &form, &confirmed).await?;
    if parse_stream(&form.stream) {
        return Ok(Sse::new(relay(state, task))
            .keep_alive(KeepAlive::default())
            .into_response());
    }
    let started = std::time::Instant::now();
    loop {
        let now = owned(&state, task.id, session.user.id).await?;
        if now.status.is_final() || started.elapsed() > WAIT_LIMIT {
            return Ok(Success(record(&now)).into_response());
        }
        tokio::time::sleep(STREAM_POLL).await;
    }
}

/// The user's chat messages, newest first.
#[utoipa::path(post, path = "/api/base/chat_gpt_api/query_list", tag = "chat_gpt_api", security(("bearer" = [])),
    params(ListForm), request_body = ListForm,
    responses((status = 200, body = inline(crate::envelope::Envelope<RecordPage<ChatRecord>>))))]
pub async fn query_list(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<ListForm>,
) -> ApiResult<RecordPage<ChatRecord>> {
    Ok(Success(
        paper_task::list_records(&state, session.user.id, chat_task::KIND, &form, record).await?,
    ))
}

/// One message with the conversation before it and its answer (or the answer so far).
#[utoipa::path(post, path = "/api/base/chat_gpt_api/load_by_id", tag = "chat_gpt_api", security(("bearer" = [])),
    params(IdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ChatRecord>)),
        (status = 404, description = "chat_not_found (also another user's)", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<ChatRecord> {
    Ok(Success(record(
        &owned(&state, form.id, session.user.id).await?,
    )))
}

/// Deletes a message; one still being answered is cancelled first, refunding the share of the
/// paid characters its answer had not yet shown.
#[utoipa::path(post, path = "/api/base/chat_gpt_api/delete", tag = "chat_gpt_api", security(("bearer" = [])),
    params(IdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<bool>)),
        (status = 404, description = "chat_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<bool> {
    owned(&state, form.id, session.user.id).await?;
    paper_task::delete_task(&state, chat_task::KIND, form.id, session.user.id).await?;
    Ok(Success(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stream_is_on_unless_turned_off() {
        assert!(parse_stream(&None));
        assert!(parse_stream(&Some(json!(true))));
        assert!(parse_stream(&Some(json!("true"))));
        assert!(!parse_stream(&Some(json!(false))));
        assert!(!parse_stream(&Some(json!("false"))));
        assert!(!parse_stream(&Some(json!(0))));
        assert!(parse_stream(&Some(json!(1))));
    }

    #[test]
    fn only_new_characters_are_relayed() {
        assert_eq!(new_text("改写后的文字", 0).as_deref(), Some("改写后的文字"));
        assert_eq!(new_text("改写后的文字", 3).as_deref(), Some("的文字"));
        assert_eq!(new_text("改写", 2), None);
    }
}
