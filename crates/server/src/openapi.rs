//! The generated OpenAPI document, served at `/api/docs/openapi.json`.

use crate::api::account::account_info_api;
use crate::api::admin::{console_api, library_api, prompts_api};
use crate::api::aigc::paper_aigc_api;
use crate::api::chat::chat_gpt_api;
use crate::api::check::check_api;
use crate::api::login::login_api;
use crate::api::order::{order_info_api, product_package_api};
use crate::api::paper::{files, package, paper_api};
use crate::api::ppt::ppt_api;
use crate::api::rewrite::{from_reports, machine_api, paper_machine_api};
use crate::api::site::{site_api, sys_config_api};
use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "文鉴 Wenjian API",
        description = "All responses use the envelope {code, success, message, result}; failures carry a real \
HTTP status, a Chinese `message` and a stable `error` code. Authenticate with `Authorization: Bearer <access_token>`. \
Parameters documented as query are also accepted as a form or JSON body.",
    ),
    paths(
        site_api::health,
        site_api::metrics,
        site_api::config,
        sys_config_api::load_all_by_entity,
        sys_config_api::load_by_id,
        console_api::dashboard,
        console_api::users,
        console_api::user_detail,
        console_api::adjust_balance,
        console_api::set_disabled,
        console_api::set_operator,
        console_api::reset_password,
        console_api::tasks,
        console_api::retry_task,
        console_api::cancel_task,
        console_api::orders,
        console_api::reconcile_orders,
        console_api::refund_order,
        console_api::abandon_refund,
        console_api::packages,
        console_api::save_package,
        console_api::set_package_active,
        console_api::prices,
        console_api::save_prices,
        console_api::reset_prices,
        console_api::models,
        console_api::test_endpoint,
        console_api::fetch_model,
        console_api::save_endpoint,
        console_api::reset_endpoint,
        console_api::audit,
        console_api::config_entries,
        console_api::save_config_entry,
        console_api::delete_config_entry,
        library_api::upload,
        library_api::tasks,
        library_api::docs,
        library_api::summary,
        library_api::remove,
        prompts_api::prompts,
        prompts_api::versions,
        prompts_api::save,
        login_api::login,
        login_api::register,
        login_api::current,
        login_api::logout,
        login_api::change_password,
        login_api::login_qr_code,
        login_api::val_login_qr_code,
        login_api::qr_info,
        login_api::qr_confirm,
        account_info_api::account,
        product_package_api::query_list,
        product_package_api::load_by_id,
        order_info_api::options,
        order_info_api::create_order,
        order_info_api::load_by_id,
        order_info_api::phone_pay_url,
        order_info_api::check_paid,
        order_info_api::query_list,
        check_api::word_count,
        check_api::check_init,
        check_api::check_cost,
        check_api::check_submit,
        check_api::query_list,
        check_api::load_by_id,
        check_api::report_paragraphs,
        check_api::verify_report,
        check_api::download_report,
        check_api::update_title,
        check_api::delete,
        from_reports::check_api_check_machine_submit,
        paper_aigc_api::word_count,
        paper_aigc_api::machine_init,
        paper_aigc_api::check_order_id,
        paper_aigc_api::submit_check,
        paper_aigc_api::reload,
        paper_aigc_api::query_list,
        paper_aigc_api::load_by_id,
        paper_aigc_api::query_content_list,
        paper_aigc_api::load_content_by_id,
        paper_aigc_api::download_report,
        paper_aigc_api::delete,
        ppt_api::get_template_list,
        ppt_api::template_thumbnail,
        ppt_api::preview_pictures,
        ppt_api::save_or_update,
        ppt_api::load_by_id,
        ppt_api::submit_by_id,
        ppt_api::change_template,
        ppt_api::query_list,
        ppt_api::delete,
        ppt_api::download,
        from_reports::aigc_machine_submit,
        from_reports::aigc_machine_submit_again,
        paper_machine_api::word_count,
        paper_machine_api::machine_init,
        paper_machine_api::check_machine_submit,
        paper_machine_api::check_aigc_machine_submit,
        paper_machine_api::check_aigc_and_machine_submit,
        paper_machine_api::machine_submit,
        paper_machine_api::check_order_id,
        paper_machine_api::reload,
        paper_machine_api::query_list,
        paper_machine_api::load_by_id,
        paper_machine_api::query_content_list,
        paper_machine_api::load_content_by_id,
        paper_machine_api::choose,
        paper_machine_api::download,
        paper_machine_api::submit_check,
        paper_machine_api::delete,
        paper_machine_api::engine,
        machine_api::word_count,
        machine_api::machine_cnki_init,
        machine_api::machine_init,
        machine_api::machine_cnki_submit,
        machine_api::machine_submit,
        machine_api::query_list,
        machine_api::load_by_id,
        machine_api::delete,
        machine_api::download_report,
        chat_gpt_api::completions,
        chat_gpt_api::engine,
        chat_gpt_api::query_list,
        chat_gpt_api::load_by_id,
        chat_gpt_api::delete,
        paper_api::paper_submit,
        paper_api::paper_xueshu_submit,
        paper_api::generate_paper,
        paper_api::query_list,
        paper_api::load_by_id,
        paper_api::commit_paper,
        paper_api::update_outline,
        paper_api::query_content_list,
        paper_api::update_content,
        paper_api::delete_content,
        paper_api::reload,
        paper_api::download,
        paper_api::delete,
        package::load_other_by_id,
        files::read_references,
        files::read_outline,
    ),
    modifiers(&BearerAuth, &PaperInfoAliases),
    tags(
        (name = "login_api", description = "账号登录、注册与扫码登录"),
        (name = "account_info_api", description = "账户余额、免费次数与流水"),
        (name = "product_package_api", description = "套餐：查重、AIGC检测、降重字数、论文生成等次数包，含价格与有效期"),
        (name = "order_info_api", description = "订单：购买套餐或充值，微信支付 / 支付宝扫码（或支付沙箱），轮询支付状态，订单列表；支付结果只以服务商签名通知或主动查询为准"),
        (name = "site_api", description = "站点信息与健康检查"),
        (name = "ai_sys_config_api", description = "公开配置：公告、站点文字（运营后台可改，立即生效）与价格、套餐、PPT 模板（来自配置），无需登录"),
        (name = "admin_api", description = "运营后台：概览、用户（余额调整、停用、重置密码、运营权限）、任务（重试、取消退款）、订单（搜索、立即对账）、套餐（新建、修改、上下架）、价格与充值赠送、模型（已安装的模型、外部模型服务的连接测试）、公告与站点文字、操作日志；仅限运营人员（401 未登录，403 非运营人员），每次改动写入只增不改的操作日志"),
        (name = "check_api", description = "论文查重：上传、计价、提交、进度与报告"),
        (name = "paper_aigc_api", description = "AIGC 检测：上传、计价、提交、逐段结果与报告"),
        (name = "ai_ppt_info_api", description = "答辩PPT：草稿（论文来源、类型、页数、封面信息、校徽）、模板、付费生成、下载 PPTX/PDF、免费更换模板"),
        (name = "paper_machine_api", description = "降重 / 降AIGC：按查重或检测结果改写、逐段复测、对照、下载与再次查重"),
        (name = "chat_gpt_api", description = "对话改写：发送段落或修改要求，回答以服务器推送事件（SSE）逐字返回；可接着上一条继续修改"),
        (name = "ai_paper_info_api", description = "AI 论文生成：拟定大纲、编辑并确认大纲、逐节写作（可实时查看）、单节修改/重写/恢复历史版本、下载 Word 论文"),
        (name = "paper_info_api", description = "论文生成入口：毕业论文与学术论文的提交；其余查询与 ai_paper_info_api 相同"),
        (name = "machine_api", description = "段落改写与智能改写（润色、扩写、缩写、学术化）：粘贴文字、计价、逐段复测、实时显示改写过程；以及所有改写任务的支付状态"),
    )
)]
pub struct ApiDoc;

/// `paper_info_api`'s calls that answer as `ai_paper_info_api`'s, documented under both names.
struct PaperInfoAliases;

impl Modify for PaperInfoAliases {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for (path, alias) in crate::api::paper::aliases() {
            let Some(mut item) = openapi.paths.paths.get(&path).cloned() else {
                continue;
            };
            if let Some(op) = item.post.as_mut() {
                let call = alias.rsplit('/').next().unwrap_or_default();
                op.operation_id = Some(format!("paper_info_api_{call}"));
                op.tags = Some(vec!["paper_info_api".into()]);
            }
            openapi.paths.paths.insert(alias, item);
        }
    }
}

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}

/// The document as pretty JSON, for `wenjian openapi` and the committed `docs/openapi.json`.
pub fn document_json() -> String {
    ApiDoc::openapi()
        .to_pretty_json()
        .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    /// `docs/openapi.json` is generated; regenerate with `cargo run -p wenjian -- openapi > docs/openapi.json`.
    #[test]
    fn committed_document_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/openapi.json");
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed.trim() == super::document_json().trim(),
            "docs/openapi.json is out of date: run `cargo run -p wenjian -- openapi > docs/openapi.json`"
        );
    }
}
