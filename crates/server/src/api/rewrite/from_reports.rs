//! Rewrites started from another family's finished task, at that family's paths: the check
//! and detection families know nothing of rewriting, so these handlers live here.

use super::paper_machine_api::{self, RewriteRecord};
use crate::api::paper_task::IdForm;
use crate::auth::AuthUser;
use crate::envelope::{ApiResult, Success};
use crate::params::Params;
use crate::state::AppState;
use axum::extract::State;

/// Rewrites the paragraphs a finished check flagged (the same as
/// `paper_machine_api/check_machine_submit`): a draft to pay with
/// `paper_machine_api/machine_submit`.
#[utoipa::path(post, path = "/api/base/check_api/check_machine_submit", tag = "check_api", operation_id = "check_api_check_machine_submit", security(("bearer" = [])),
    params(paper_machine_api::FromTaskForm), request_body = paper_machine_api::FromTaskForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 404, description = "check_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "check_not_finished", body = crate::envelope::ErrorBody),
        (status = 422, description = "nothing_to_rewrite", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn check_api_check_machine_submit(
    state: State<AppState>,
    user: AuthUser,
    form: Params<paper_machine_api::FromTaskForm>,
) -> ApiResult<RewriteRecord> {
    paper_machine_api::check_machine_submit(state, user, form).await
}

/// Lowers the AI traces of a finished detection: a draft rewrite of the paragraphs in the high
/// or medium band (pay with `paper_machine_api/machine_submit`).
#[utoipa::path(post, path = "/api/base/paper_aigc_api/aigc_machine_submit", tag = "paper_aigc_api", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 404, description = "aigc_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "aigc_not_finished", body = crate::envelope::ErrorBody),
        (status = 422, description = "nothing_to_rewrite", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn aigc_machine_submit(
    State(state): State<AppState>,
    AuthUser(session): AuthUser,
    Params(form): Params<IdForm>,
) -> ApiResult<RewriteRecord> {
    Ok(Success(
        paper_machine_api::from_detection(&state, session.user.id, form.id).await?,
    ))
}

/// The same as `aigc_machine_submit` (the spec lists both).
#[utoipa::path(post, path = "/api/base/paper_aigc_api/machine_submit", tag = "paper_aigc_api", operation_id = "paper_aigc_api_machine_submit", security(("bearer" = [])),
    params(IdForm), request_body = IdForm,
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<RewriteRecord>)),
        (status = 404, description = "aigc_not_found", body = crate::envelope::ErrorBody),
        (status = 409, description = "aigc_not_finished", body = crate::envelope::ErrorBody),
        (status = 422, description = "nothing_to_rewrite", body = crate::envelope::ErrorBody),
        (status = 503, description = "rewrite_model_missing", body = crate::envelope::ErrorBody),
    ))]
pub async fn aigc_machine_submit_again(
    state: State<AppState>,
    user: AuthUser,
    form: Params<IdForm>,
) -> ApiResult<RewriteRecord> {
    aigc_machine_submit(state, user, form).await
}
