//! The console's prompts page: the prompts of rewriting, paper generation and slides, each with
//! its text in force, its built-in text and its versions; save a new version, go back to an
//! older one or to the built-in text. Every change is a new version (nothing is overwritten)
//! and applies from the next request on, in every process (`crate::prompts`).

use crate::auth::OperatorUser;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::{Params, lenient};
use crate::state::AppState;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use store::{Actor, PromptChange, StoreError};
use utoipa::{IntoParams, ToSchema};

/// The longest prompt accepted, in characters.
const MAX_PROMPT_CHARS: usize = 20_000;
const MAX_NOTE_CHARS: usize = 100;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptRow {
    /// e.g. `rewrite/aigc`.
    pub name: String,
    pub title: String,
    /// 降重与改写, 论文生成 or 答辩PPT.
    pub group: String,
    /// The text in force.
    pub text: String,
    pub builtin: String,
    /// The text in force is the built-in one.
    pub is_builtin: bool,
    /// Placeholders every version must keep, e.g. `title`, `budget`.
    pub placeholders: Vec<String>,
    /// Versions saved so far.
    pub versions: i64,
    pub updated_at: Option<i64>,
    pub updated_by: Option<String>,
}

async fn prompt_rows(state: &AppState) -> Result<Vec<PromptRow>, ApiError> {
    let latest = state.store.latest_prompt_versions().await?;
    let mut rows = Vec::new();
    for (group, prompt) in crate::prompts::all() {
        let version = latest.iter().find(|v| v.name == prompt.name);
        let count = state.store.prompt_versions(prompt.name).await?.len() as i64;
        let custom = version.filter(|v| !v.is_builtin);
        rows.push(PromptRow {
            name: prompt.name.into(),
            title: prompt.title.into(),
            group: group.into(),
            text: custom.map_or(prompt.builtin, |v| v.body.as_str()).into(),
            builtin: prompt.builtin.into(),
            is_builtin: custom.is_none(),
            placeholders: prompt.placeholders().into_iter().collect(),
            versions: count,
            updated_at: version.map(|v| v.created_at),
            updated_by: version.map(|v| v.actor_name.clone()),
        });
    }
    Ok(rows)
}

/// Every editable prompt with its text in force.
#[utoipa::path(get, path = "/api/admin/prompts", tag = "admin_api",
    security(("bearer" = [])),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Vec<PromptRow>>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
    ))]
pub async fn prompts(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
) -> ApiResult<Vec<PromptRow>> {
    Ok(Success(prompt_rows(&state).await?))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NameForm {
    /// The prompt, e.g. `rewrite/aigc`.
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptVersionRow {
    pub id: i64,
    /// 1 for the first version saved.
    pub number: i64,
    /// The text of this version (the built-in text for a return to it).
    pub text: String,
    pub is_builtin: bool,
    pub note: String,
    pub actor_name: String,
    pub created_at: i64,
    /// This version is the one in force.
    pub current: bool,
}

fn known(name: &str) -> Result<llm::prompts::Prompt, ApiError> {
    crate::prompts::find(name)
        .ok_or_else(|| ApiError::not_found("prompt_not_found", format!("没有名为 {name} 的提示词")))
}

/// A prompt's versions, newest first.
#[utoipa::path(get, path = "/api/admin/prompts/versions", tag = "admin_api",
    security(("bearer" = [])), params(NameForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Vec<PromptVersionRow>>)),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "prompt_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn versions(
    State(state): State<AppState>,
    OperatorUser(_operator): OperatorUser,
    Params(form): Params<NameForm>,
) -> ApiResult<Vec<PromptVersionRow>> {
    let prompt = known(&form.name)?;
    let versions = state.store.prompt_versions(prompt.name).await?;
    let total = versions.len() as i64;
    Ok(Success(
        versions
            .into_iter()
            .enumerate()
            .map(|(i, v)| PromptVersionRow {
                id: v.id,
                number: total - i as i64,
                text: if v.is_builtin {
                    prompt.builtin.to_string()
                } else {
                    v.body
                },
                is_builtin: v.is_builtin,
                note: v.note,
                actor_name: v.actor_name,
                created_at: v.created_at,
                current: i == 0,
            })
            .collect(),
    ))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SaveForm {
    pub name: String,
    /// The new text (save).
    #[serde(default)]
    pub text: Option<String>,
    /// An earlier version to go back to (restore).
    #[serde(default, deserialize_with = "lenient::opt_i64")]
    pub version_id: Option<i64>,
    /// Back to the built-in text (reset).
    #[serde(default)]
    pub builtin: bool,
    /// Why (shown in the history).
    #[serde(default)]
    pub note: String,
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_prompt", message)
}

/// Checks a new text: not empty, not too long, every placeholder of the built-in text kept and
/// none added (an unknown one would reach the model as it is).
fn checked_text(prompt: &llm::prompts::Prompt, text: &str) -> Result<String, ApiError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(invalid("提示词不能为空"));
    }
    if text.chars().count() > MAX_PROMPT_CHARS {
        return Err(invalid(format!("提示词不能超过 {MAX_PROMPT_CHARS} 字")));
    }
    let wanted = prompt.placeholders();
    let given = llm::prompts::placeholders(text);
    let missing: Vec<String> = wanted
        .difference(&given)
        .map(|p| format!("{{{p}}}"))
        .collect();
    if !missing.is_empty() {
        return Err(invalid(format!(
            "缺少占位符 {}：生成时会用实际内容替换它们，请保留",
            missing.join("、")
        )));
    }
    let unknown: Vec<String> = given
        .difference(&wanted)
        .map(|p| format!("{{{p}}}"))
        .collect();
    if !unknown.is_empty() {
        return Err(invalid(format!(
            "不认识的占位符 {}：只能使用 {}",
            unknown.join("、"),
            if wanted.is_empty() {
                "（这个提示词没有占位符）".to_string()
            } else {
                wanted
                    .iter()
                    .map(|p| format!("{{{p}}}"))
                    .collect::<Vec<_>>()
                    .join("、")
            }
        )));
    }
    Ok(text.to_string())
}

/// Saves a new version of a prompt: a new text, an earlier version again (`versionId`) or the
/// built-in text (`builtin`). Applies from the next request on, in every process.
#[utoipa::path(post, path = "/api/admin/prompts/save", tag = "admin_api",
    security(("bearer" = [])), request_body = SaveForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Vec<PromptRow>>)),
        (status = 400, description = "invalid_prompt", body = crate::envelope::ErrorBody),
        (status = 403, description = "not_operator", body = crate::envelope::ErrorBody),
        (status = 404, description = "prompt_not_found, version_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "prompt_unchanged", body = crate::envelope::ErrorBody),
    ))]
pub async fn save(
    State(state): State<AppState>,
    OperatorUser(operator): OperatorUser,
    Params(form): Params<SaveForm>,
) -> ApiResult<Vec<PromptRow>> {
    let prompt = known(&form.name)?;
    let mut note = form.note.trim().to_string();
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(invalid(format!("说明不能超过 {MAX_NOTE_CHARS} 字")));
    }
    let text = match (&form.text, form.version_id, form.builtin) {
        (Some(text), None, false) => Some(checked_text(&prompt, text)?),
        (None, Some(id), false) => {
            // Newest first: the version's number is counted from the end.
            let versions = state.store.prompt_versions(prompt.name).await?;
            let Some(at) = versions.iter().position(|v| v.id == id) else {
                return Err(ApiError::not_found("version_not_found", "没有这个版本"));
            };
            if note.is_empty() {
                note = format!("恢复为第 {} 版", versions.len() - at);
            }
            let version = &versions[at];
            match version.is_builtin {
                true => None,
                // Saved for another release, it may lack what this one fills in.
                false => Some(checked_text(&prompt, &version.body).map_err(|e| {
                    invalid(format!(
                        "第 {} 版不能恢复：{}",
                        versions.len() - at,
                        e.message
                    ))
                })?),
            }
        }
        (None, None, true) => {
            if note.is_empty() {
                note = "恢复为内置版本".into();
            }
            None
        }
        _ => {
            return Err(invalid(
                "请给出新的提示词、要恢复的版本或恢复内置版本，三者选一",
            ));
        }
    };
    let change = match &text {
        Some(text) => PromptChange::Text(text),
        None => PromptChange::Builtin,
    };
    match state
        .store
        .save_prompt_version(
            Actor::from(&operator.user),
            prompt.name,
            change,
            prompt.builtin,
            &note,
        )
        .await
    {
        Err(StoreError::Conflict(_)) => {
            return Err(ApiError::conflict(
                "prompt_unchanged",
                "内容与当前版本相同，无需保存",
            ));
        }
        other => other?,
    };
    // This process at once; every other one before its next job (or within seconds).
    match &text {
        Some(text) => llm::prompts::set_override(prompt.name, text),
        None => llm::prompts::set_override(prompt.name, prompt.builtin),
    }
    Ok(Success(prompt_rows(&state).await?))
}
