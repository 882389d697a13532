//! `product_package_api`: the packages on sale, as the operator defined them.

use crate::api::paper_task::IdForm;
use crate::envelope::{ApiError, ApiResult, Success};
use crate::params::Params;
use crate::state::AppState;
use axum::extract::State;
use serde::Serialize;
use store::{GrantKind, Product};
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Package {
    pub id: i64,
    pub name: String,
    pub description: String,
    /// Price in fen.
    pub price_fen: i64,
    /// `check`, `aigc`, `rewrite_chars`, `paper` or `ppt`.
    pub grant_kind: String,
    /// How many of `grant_kind` one purchase grants (characters for `rewrite_chars`).
    pub grant_amount: i64,
    /// What it grants, in words: "查重 3 次", "降重 20000 字".
    pub grant_label: String,
    /// Days the grant can be used after payment.
    pub valid_days: i64,
}

/// "查重 3 次", "降重 20000 字".
pub fn grant_label(kind: GrantKind, amount: i64) -> String {
    let what = match kind {
        GrantKind::Check => "查重",
        GrantKind::Aigc => "AIGC检测",
        GrantKind::RewriteChars => "降重 / 降AIGC",
        GrantKind::Paper => "论文生成",
        GrantKind::Ppt => "答辩PPT",
    };
    format!("{what} {amount} {}", kind.unit())
}

pub fn package_of(p: Product) -> Package {
    Package {
        grant_label: grant_label(p.grant_kind, p.grant_amount),
        id: p.id,
        name: p.name,
        description: p.description,
        price_fen: p.price_fen,
        grant_kind: p.grant_kind.as_str().into(),
        grant_amount: p.grant_amount,
        valid_days: p.valid_days,
    }
}

/// The packages on sale, in display order. Open to visitors.
#[utoipa::path(post, path = "/api/base/product_package_api/query_list", tag = "product_package_api",
    responses((status = 200, body = inline(crate::envelope::Envelope<Vec<Package>>))))]
pub async fn query_list(State(state): State<AppState>) -> ApiResult<Vec<Package>> {
    let products = state.store.products(true).await?;
    Ok(Success(products.into_iter().map(package_of).collect()))
}

/// One package on sale.
#[utoipa::path(post, path = "/api/base/product_package_api/load_by_id", tag = "product_package_api",
    params(IdForm),
    responses(
        (status = 200, body = inline(crate::envelope::Envelope<Package>)),
        (status = 404, description = "package_not_found (also one withdrawn from sale)", body = crate::envelope::ErrorBody),
    ))]
pub async fn load_by_id(
    State(state): State<AppState>,
    Params(form): Params<IdForm>,
) -> ApiResult<Package> {
    let product = on_sale(&state, form.id).await?;
    Ok(Success(package_of(product)))
}

/// A package that can be bought now.
pub async fn on_sale(state: &AppState, id: i64) -> Result<Product, ApiError> {
    match state.store.product(id).await {
        Ok(p) if p.active => Ok(p),
        Ok(_) | Err(store::StoreError::NotFound) => Err(ApiError::not_found(
            "package_not_found",
            "该套餐不存在或已下架",
        )),
        Err(e) => Err(e.into()),
    }
}
