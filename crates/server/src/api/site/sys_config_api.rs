//! `ai_sys_config_api`: the public configuration the web app reads without a token — notices
//! and site texts that operators edit in the console (kept in the database, so every process
//! sees a change at once), and the prices, packages and slide templates this server runs with.

use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::Params;
use crate::state::AppState;
use axum::extract::State;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// Entities the console edits; the others are read-only views of the configuration.
pub const NOTICES: &str = "notices";
pub const SITE_TEXTS: &str = "site_texts";
/// Each deck template on or off (`{"enabled": false}`); a template without an entry is on.
pub const SLIDE_TEMPLATES: &str = "slide_templates";
/// Each paper kind and degree level of 论文生成 on or off (`{"enabled": false}`).
pub const PAPER_OPTIONS: &str = "paper_options";
pub const EDITABLE: [&str; 4] = [NOTICES, SITE_TEXTS, SLIDE_TEMPLATES, PAPER_OPTIONS];

/// The paper kinds and degree levels offered: id (as the paper calls take it), group, name.
pub const PAPER_OPTION_IDS: [(&str, &str, &str); 5] = [
    ("thesis", "kind", "毕业论文"),
    ("article", "kind", "学术论文 / 期刊论文"),
    ("associate", "degree", "专科"),
    ("bachelor", "degree", "本科"),
    ("master", "degree", "硕士"),
];
const READ_ONLY: [&str; 2] = ["prices", "packages"];

/// The site texts an operator may set, with their longest length in characters.
pub const SITE_TEXT_IDS: [(&str, usize); 2] = [("site_title", 30), ("marketing_url", 200)];

/// A notice shown at the top of chosen pages (or every page).
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Notice {
    pub title: String,
    pub content: String,
    /// `info`, `warning` or `success`.
    pub level: String,
    /// Route paths it shows on (`/papercheck/check`); empty: every page.
    #[serde(default)]
    pub pages: Vec<String>,
    pub enabled: bool,
}

/// One configuration entry.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigItem {
    pub entity: String,
    pub id: String,
    /// A notice (`Notice`), a site text (a string), a price, a package or a template.
    #[schema(value_type = Object)]
    pub value: serde_json::Value,
    /// When an operator last changed it; `None` for entries drawn from the configuration file.
    pub updated_at: Option<i64>,
    /// Whether the console edits it.
    pub editable: bool,
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EntityForm {
    /// `notices`, `site_texts`, `prices`, `packages`, `slide_templates` or `paper_options`.
    pub entity: String,
}

#[derive(Debug, Deserialize, ToSchema, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EntryForm {
    pub entity: String,
    pub id: String,
}

fn unknown_entity(entity: &str) -> ApiError {
    ApiError::bad_request(
        "unknown_entity",
        format!(
            "未知的配置类别“{}”，可选：{}",
            entity.chars().take(40).collect::<String>(),
            EDITABLE
                .iter()
                .chain(READ_ONLY.iter())
                .copied()
                .collect::<Vec<_>>()
                .join("、")
        ),
    )
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::bad_request("invalid_config", message)
}

/// Checks an entry the console wants to save and returns its JSON as kept: a notice with its
/// fields trimmed and bounded, a site text as a JSON string.
pub fn validated(entity: &str, id: &str, value: &serde_json::Value) -> Result<String, ApiError> {
    match entity {
        NOTICES => {
            if id.is_empty()
                || id.len() > 40
                || !id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(invalid(
                    "公告编号只能由字母、数字、- 和 _ 组成（至多 40 个）",
                ));
            }
            let mut notice: Notice = serde_json::from_value(value.clone())
                .map_err(|e| invalid(format!("公告格式不正确：{e}")))?;
            notice.title = notice.title.trim().to_string();
            notice.content = notice.content.trim().to_string();
            if notice.title.is_empty() || notice.title.chars().count() > 40 {
                return Err(invalid("公告标题须为 1–40 个字"));
            }
            if notice.content.is_empty() || notice.content.chars().count() > 500 {
                return Err(invalid("公告内容须为 1–500 个字"));
            }
            if !["info", "warning", "success"].contains(&notice.level.as_str()) {
                return Err(invalid("公告级别只能是 info、warning 或 success"));
            }
            notice.pages = notice
                .pages
                .iter()
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .collect();
            let mut seen = std::collections::HashSet::new();
            notice.pages.retain(|p| seen.insert(p.clone()));
            if notice.pages.len() > 30
                || notice.pages.iter().any(|p| {
                    !p.starts_with('/') || p.len() > 100 || p.contains(char::is_whitespace)
                })
            {
                return Err(invalid("显示页面须为以 / 开头的页面路径（至多 30 个）"));
            }
            Ok(serde_json::to_string(&notice).unwrap_or_default())
        }
        SITE_TEXTS => {
            let Some((_, max)) = SITE_TEXT_IDS.iter().find(|(name, _)| *name == id) else {
                return Err(invalid(
                    "站点文字只有 site_title（站点名称）与 marketing_url（首页链接）",
                ));
            };
            let text = value
                .as_str()
                .ok_or_else(|| invalid("站点文字须为字符串"))?
                .trim();
            if text.chars().count() > *max {
                return Err(invalid(format!("内容过长（至多 {max} 个字）")));
            }
            if id == "site_title" && text.is_empty() {
                return Err(invalid("站点名称不能为空"));
            }
            if id == "marketing_url"
                && !text.is_empty()
                && !(text.starts_with("https://") || text.starts_with("http://"))
            {
                return Err(invalid(
                    "首页链接须以 http:// 或 https:// 开头，留空则使用本站服务首页",
                ));
            }
            Ok(serde_json::Value::String(text.to_string()).to_string())
        }
        SLIDE_TEMPLATES => {
            if slides::template::by_id(id).is_none() {
                return Err(invalid("没有这个 PPT 模板"));
            }
            switch(value, "模板设置")
        }
        PAPER_OPTIONS => {
            if !PAPER_OPTION_IDS.iter().any(|(known, _, _)| *known == id) {
                return Err(invalid(
                    "论文生成选项只有 thesis、article（论文类型）与 associate、bachelor、master（学历层次）",
                ));
            }
            switch(value, "论文生成选项")
        }
        other => Err(unknown_entity(other)),
    }
}

/// An on/off setting as kept: `{"enabled": …}`.
fn switch(value: &serde_json::Value, what: &str) -> Result<String, ApiError> {
    let enabled = value
        .get("enabled")
        .and_then(serde_json::Value::as_bool)
        .ok_or_else(|| invalid(format!("{what}须为 {{\"enabled\": true 或 false}}")))?;
    Ok(serde_json::json!({ "enabled": enabled }).to_string())
}

/// The deck templates an operator switched off. Should every one be off (two operators
/// switching off the last two at once), none counts as off: decks can always be made.
pub async fn disabled_templates(state: &AppState) -> Result<Vec<String>, ApiError> {
    Ok(switched_off(
        &state.store.config_entries(SLIDE_TEMPLATES).await?,
    ))
}

/// The templates the entries switch off (none, should they switch off every one).
fn switched_off(entries: &[store::ConfigEntry]) -> Vec<String> {
    let ids: Vec<&str> = slides::TEMPLATES.iter().map(|t| t.id).collect();
    off_among(entries, &ids)
}

/// Which of `ids` the entries switch off — none, should they switch off every one: something
/// must stay on.
fn off_among(entries: &[store::ConfigEntry], ids: &[&str]) -> Vec<String> {
    let off: Vec<String> = entries
        .iter()
        .filter(|e| ids.contains(&e.id.as_str()))
        .filter(|e| {
            serde_json::from_str::<serde_json::Value>(&e.value)
                .ok()
                .and_then(|v| v.get("enabled").and_then(serde_json::Value::as_bool))
                == Some(false)
        })
        .map(|e| e.id.clone())
        .collect();
    let all_off = ids.iter().all(|id| off.iter().any(|d| d == id));
    if all_off { Vec::new() } else { off }
}

/// The paper kinds and degree levels switched off; each group keeps at least one on.
fn paper_options_off(entries: &[store::ConfigEntry]) -> Vec<String> {
    ["kind", "degree"]
        .into_iter()
        .flat_map(|group| {
            let ids: Vec<&str> = PAPER_OPTION_IDS
                .iter()
                .filter(|(_, g, _)| *g == group)
                .map(|(id, _, _)| *id)
                .collect();
            off_among(entries, &ids)
        })
        .collect()
}

/// For an on/off entity, the ids of `id`'s group (one of which must stay on) and what the
/// group is called; `None` for other entities.
pub fn switch_group(entity: &str, id: &str) -> Option<(Vec<&'static str>, &'static str)> {
    match entity {
        SLIDE_TEMPLATES => Some((
            slides::TEMPLATES.iter().map(|t| t.id).collect(),
            " PPT 模板",
        )),
        PAPER_OPTIONS => {
            let (_, group, _) = PAPER_OPTION_IDS.iter().find(|(known, _, _)| *known == id)?;
            Some((
                PAPER_OPTION_IDS
                    .iter()
                    .filter(|(_, g, _)| g == group)
                    .map(|(known, _, _)| *known)
                    .collect(),
                if *group == "kind" {
                    "论文类型"
                } else {
                    "学历层次"
                },
            ))
        }
        _ => None,
    }
}

/// Refuses a paper of a kind or degree level the operator switched off.
pub async fn check_paper_options(
    state: &AppState,
    kind: &str,
    degree: &str,
) -> Result<(), ApiError> {
    let off = paper_options_off(&state.store.config_entries(PAPER_OPTIONS).await?);
    for id in [kind, degree] {
        if off.iter().any(|o| o == id) {
            let name = PAPER_OPTION_IDS
                .iter()
                .find(|(known, _, _)| *known == id)
                .map_or(id, |(_, _, name)| name);
            return Err(ApiError::bad_request(
                "option_disabled",
                format!("本站暂未开放“{name}”的论文生成，请选择其他选项"),
            ));
        }
    }
    Ok(())
}

/// A template a deck may be drawn with now: known and not switched off.
pub async fn usable_template(
    state: &AppState,
    id: &str,
) -> Result<&'static slides::Template, ApiError> {
    let template = slides::template::by_id(id).ok_or_else(|| {
        ApiError::bad_request("unknown_template", format!("未知的 PPT 模板“{id}”"))
    })?;
    if disabled_templates(state)
        .await?
        .iter()
        .any(|d| d == template.id)
    {
        return Err(ApiError::bad_request(
            "template_disabled",
            format!("模板“{}”已停用，请选择其他模板", template.name),
        ));
    }
    Ok(template)
}

fn item(entry: store::ConfigEntry) -> ConfigItem {
    ConfigItem {
        value: serde_json::from_str(&entry.value).unwrap_or(serde_json::Value::Null),
        entity: entry.entity,
        id: entry.id,
        updated_at: Some(entry.updated_at),
        editable: true,
    }
}

fn fixed(entity: &str, id: &str, value: serde_json::Value) -> ConfigItem {
    ConfigItem {
        entity: entity.into(),
        id: id.into(),
        value,
        updated_at: None,
        editable: false,
    }
}

/// Every entry of an entity. `public` leaves out notices that are switched off.
pub async fn entries(
    state: &AppState,
    entity: &str,
    public: bool,
) -> Result<Vec<ConfigItem>, ApiError> {
    let config = &state.config;
    let per_thousand =
        |name: &str, fen: i64| serde_json::json!({ "name": name, "fen": fen, "unit": "每千字" });
    Ok(match entity {
        NOTICES => state
            .store
            .config_entries(NOTICES)
            .await?
            .into_iter()
            .map(item)
            .filter(|i| !public || i.value.get("enabled") == Some(&serde_json::Value::Bool(true)))
            .collect(),
        SITE_TEXTS => {
            let kept = state.store.config_entries(SITE_TEXTS).await?;
            SITE_TEXT_IDS
                .iter()
                .map(|(id, _)| match kept.iter().find(|e| e.id == *id) {
                    Some(entry) => item(entry.clone()),
                    None => ConfigItem {
                        editable: true,
                        ..fixed(
                            SITE_TEXTS,
                            id,
                            serde_json::Value::String(match *id {
                                "site_title" => config.site_title.clone(),
                                _ => config.marketing_url.clone(),
                            }),
                        )
                    },
                })
                .collect()
        }
        "prices" => {
            let prices = crate::prices::Prices::current(state).await?;
            // Set in the console (/admin/prices) when the operator saved some.
            let updated_at = state
                .store
                .config_entry(crate::prices::ENTITY, crate::prices::ID)
                .await
                .ok()
                .map(|e| e.updated_at);
            let price = |id: &str, value: serde_json::Value| ConfigItem {
                updated_at,
                editable: true,
                ..fixed(entity, id, value)
            };
            vec![
                price(
                    "check",
                    per_thousand("论文查重", prices.check_fen_per_thousand),
                ),
                price(
                    "aigc",
                    per_thousand("AIGC检测", prices.aigc_fen_per_thousand),
                ),
                price(
                    "rewrite",
                    per_thousand("降重 / 降AIGC", prices.rewrite_fen_per_thousand),
                ),
                price(
                    "chat",
                    per_thousand("对话改写", prices.chat_fen_per_thousand),
                ),
                price(
                    "paper",
                    serde_json::json!({ "name": "论文生成", "tiers": prices.paper_tiers, "unit": "按篇幅" }),
                ),
                price(
                    "ppt",
                    serde_json::json!({ "name": "答辩PPT", "fen": prices.ppt_fen, "unit": "每份" }),
                ),
                price(
                    "top_up",
                    serde_json::json!({ "name": "充值赠送", "tiers": prices.top_up_tiers }),
                ),
            ]
        }
        "packages" => state
            .store
            .products(true)
            .await?
            .into_iter()
            .map(|p| {
                let package = crate::api::order::product_package_api::package_of(p);
                fixed(
                    entity,
                    &package.id.to_string(),
                    serde_json::to_value(&package).unwrap_or_default(),
                )
            })
            .collect(),
        SLIDE_TEMPLATES => {
            let kept = state.store.config_entries(SLIDE_TEMPLATES).await?;
            let disabled = switched_off(&kept);
            slides::TEMPLATES
                .iter()
                .map(|t| ConfigItem {
                    editable: true,
                    updated_at: kept.iter().find(|e| e.id == t.id).map(|e| e.updated_at),
                    ..fixed(
                        entity,
                        t.id,
                        serde_json::json!({
                            "name": t.name,
                            "description": t.description,
                            "enabled": !disabled.iter().any(|d| d == t.id),
                        }),
                    )
                })
                .collect()
        }
        PAPER_OPTIONS => {
            let kept = state.store.config_entries(PAPER_OPTIONS).await?;
            let off = paper_options_off(&kept);
            PAPER_OPTION_IDS
                .iter()
                .map(|(id, group, name)| ConfigItem {
                    editable: true,
                    updated_at: kept.iter().find(|e| e.id == *id).map(|e| e.updated_at),
                    ..fixed(
                        entity,
                        id,
                        serde_json::json!({
                            "group": group,
                            "name": name,
                            "enabled": !off.iter().any(|o| o == id),
                        }),
                    )
                })
                .collect()
        }
        other => return Err(unknown_entity(other)),
    })
}

/// A site text as the operator set it, else the configuration file's.
pub async fn site_text(state: &AppState, id: &str, default: &str) -> String {
    match state.store.config_entry(SITE_TEXTS, id).await {
        Ok(entry) => {
            serde_json::from_str::<String>(&entry.value).unwrap_or_else(|_| default.into())
        }
        Err(_) => default.into(),
    }
}

/// Every entry of one entity: `notices` (switched-on ones), `site_texts`, `prices` (as charged
/// now: the operator's, else the configuration file's), `packages`, `slide_templates` or
/// `paper_options` (the paper kinds and degree levels offered). Open to visitors.
#[utoipa::path(post, path = "/api/base/ai_sys_config_api/f/load_all_by_entity", tag = "ai_sys_config_api",
    request_body = EntityForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Vec<ConfigItem>>)),
        (status = 400, description = "unknown_entity", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_all_by_entity(
    State(state): State<AppState>,
    Params(form): Params<EntityForm>,
) -> ApiResult<Vec<ConfigItem>> {
    Ok(Success(entries(&state, form.entity.trim(), true).await?))
}

/// One entry of an entity by its id. Open to visitors.
#[utoipa::path(post, path = "/api/base/ai_sys_config_api/f/load_by_id", tag = "ai_sys_config_api",
    params(EntryForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<ConfigItem>)),
        (status = 400, description = "unknown_entity", body = crate::envelope::ErrorBody),
        (status = 404, description = "config_not_found", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    State(state): State<AppState>,
    Params(form): Params<EntryForm>,
) -> ApiResult<ConfigItem> {
    entries(&state, form.entity.trim(), true)
        .await?
        .into_iter()
        .find(|i| i.id == form.id.trim())
        .map(Success)
        .ok_or_else(|| ApiError::not_found("config_not_found", "没有这一项配置"))
}
