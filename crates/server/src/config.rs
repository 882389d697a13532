//! Configuration: built-in defaults, then an optional `wenjian.toml`, then `WENJIAN_*` variables.

use figment::Figment;
use figment::providers::{Env, Format, Serialized, Toml};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One length tier of a price list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct PriceTier {
    /// Up to this many characters (字).
    pub words: u32,
    pub fen: i64,
}

impl PriceTier {
    /// The price of `words` in a tier list: the first tier at least as long, else the longest.
    pub fn price_of(tiers: &[PriceTier], words: u32) -> Option<i64> {
        let mut sorted: Vec<&PriceTier> = tiers.iter().collect();
        sorted.sort_by_key(|t| t.words);
        sorted
            .iter()
            .find(|t| t.words >= words)
            .or(sorted.last())
            .map(|t| t.fen)
    }
}

/// A top-up amount offered on /order/recharge, with its bonus (充100送20).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopUpTier {
    /// What the user pays, in fen.
    pub fen: i64,
    /// What the balance receives on top, in fen.
    pub bonus_fen: i64,
}

/// A package seeded into an empty catalogue at start (the operator edits the catalogue after).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageSeed {
    pub name: String,
    pub description: String,
    pub price_fen: i64,
    /// `check`, `aigc`, `rewrite_chars`, `paper` or `ppt`.
    pub grant_kind: String,
    pub grant_amount: i64,
    pub valid_days: i64,
}

/// A WeChat Pay merchant (`payment = "live"`), as the merchant platform hands it out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WechatPayConfig {
    /// 商户号.
    pub mchid: String,
    /// The AppID bound to the merchant (公众号, 小程序 or 网站应用).
    pub appid: String,
    /// Serial number of the merchant API certificate (商户API证书序列号).
    pub merchant_serial_no: String,
    /// The merchant API private key (`apiclient_key.pem`).
    pub private_key_file: PathBuf,
    /// The APIv3 key (32 characters) that decrypts notifications.
    pub api_v3_key: String,
    /// WeChat Pay platform certificates (PEM); each is known by its serial number.
    #[serde(default)]
    pub platform_certificate_files: Vec<PathBuf>,
    /// The WeChat Pay public key (PEM) and its id (`PUB_KEY_ID_…`); may be set beside
    /// platform certificates during a migration.
    #[serde(default)]
    pub public_key_file: Option<PathBuf>,
    #[serde(default)]
    pub public_key_id: Option<String>,
    /// Where requests go; the sandbox of another Wenjian for a rehearsal.
    #[serde(default = "default_wechat_gateway")]
    pub gateway: String,
}

fn default_wechat_gateway() -> String {
    "https://api.mch.weixin.qq.com".into()
}

/// An Alipay application (`payment = "live"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlipayConfig {
    pub app_id: String,
    /// The merchant's PID (2088…); notifications naming another seller are refused.
    #[serde(default)]
    pub seller_id: Option<String>,
    /// The application's private key (PKCS #8 or PKCS #1, PEM or the key tool's Base64).
    pub private_key_file: PathBuf,
    /// Alipay's public key for this application (支付宝公钥, not the application's own).
    pub alipay_public_key_file: PathBuf,
    #[serde(default = "default_alipay_gateway")]
    pub gateway: String,
}

fn default_alipay_gateway() -> String {
    "https://openapi.alipay.com/gateway.do".into()
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    /// Address the HTTP server binds to.
    pub listen: String,
    /// Folder for the embedded database, uploaded files and models.
    pub data_dir: PathBuf,
    /// `sqlite://…` or `postgres://…`; defaults to `sqlite://<data_dir>/wenjian.db`.
    pub database_url: Option<String>,
    /// Where uploaded and generated files live; defaults to `<data_dir>/files`.
    pub files_dir: Option<PathBuf>,
    /// `folder` (files under `files_dir`, the embedded default), `database` (the `files`
    /// table of the configured database, which every node of a deployment reaches) or `s3`
    /// (a bucket of an S3-compatible object store, `[s3]`).
    pub files_backend: String,
    /// The bucket of `files_backend = "s3"`.
    pub s3: Option<store::BucketSettings>,
    /// When set, `/api/metrics` answers only `Authorization: Bearer <metrics_token>`; when not,
    /// it is open (keep the path off the public proxy).
    pub metrics_token: Option<String>,
    /// The embedded similarity library (index segments); defaults to `<data_dir>/library`.
    pub library_dir: Option<PathBuf>,
    /// Price of a similarity check per started 1,000 characters, in fen.
    pub check_price_fen_per_thousand: i64,
    /// The longest paper (counted characters) a free similarity check pays for; longer ones are
    /// paid from the balance. Stated on the price dialog.
    pub free_check_max_chars: usize,
    /// The longest paper (asked words) a 论文生成 package pays for; a longer one is paid from
    /// the balance.
    pub package_paper_max_words: u32,
    /// The longest paper (counted characters) one use of a 查重 or AIGC检测 package pays for; a
    /// longer one is paid from the balance.
    pub package_task_max_chars: usize,
    /// Price of an AI-text detection per started 1,000 characters, in fen.
    pub aigc_price_fen_per_thousand: i64,
    /// Largest upload in bytes.
    pub max_upload_bytes: usize,
    /// Most counted characters in one paper.
    pub max_paper_chars: usize,
    /// Largest batch (.jsonl or .zip) an operator uploads to the library from the console.
    pub library_upload_bytes: usize,
    /// Workers per task queue in this process (`serve` and `worker`).
    pub workers_per_queue: usize,
    /// Model files fetched by `wenjian models fetch`; defaults to `<data_dir>/models`.
    pub models_dir: Option<PathBuf>,
    /// `embedded` (memory-mapped segments under `library_dir`) or `database` (postings table in
    /// the configured database, for PostgreSQL scale-out).
    pub library_backend: String,
    /// The address users reach this server at (`https://…`), printed in reports' verification
    /// links and QR codes. Without it, reports name the verification page without an address
    /// (a request's Host is anyone's to set) and QR codes use the request's Host.
    pub public_url: Option<String>,
    pub site_title: String,
    /// The marketing site opened by the "首页" menu entry; empty (the default): 首页 is the
    /// app's own landing page of the services (/dashboard).
    pub marketing_url: String,
    /// The IANA zone every time is shown in (web app, reports, /verify), named beside each time.
    pub time_zone: String,
    pub session_ttl_hours: i64,
    pub qr_ttl_seconds: i64,
    /// Failed logins allowed per IP and username before a temporary lock.
    pub login_max_failures: u32,
    /// Failed logins allowed per IP (all usernames together) before a temporary lock.
    pub login_max_failures_per_ip: u32,
    /// Failed logins allowed for one username from any address before a temporary lock (so
    /// rotating addresses does not help a guesser). Wrong old passwords in `change_password`
    /// count as failed logins.
    pub login_max_failures_per_account: u32,
    /// Minutes a login lock lasts; failures are also counted in windows of this length.
    pub login_lock_minutes: u64,
    /// Registrations allowed from one client address per hour.
    pub register_max_per_ip_per_hour: u32,
    /// Registrations allowed from all addresses together per minute.
    pub register_max_per_minute: u32,
    /// Login QR codes one client address may ask for per minute.
    pub qr_max_per_ip_per_minute: u32,
    /// Seconds between sweeps of expired QR logins, sessions and throttle windows.
    pub sweep_interval_seconds: u64,
    /// Take the client address from `X-Forwarded-For` (only behind a trusted reverse proxy):
    /// the rightmost address that is not one of `trusted_proxies` (the direct peer counts as
    /// trusted when that list is empty). Also lets the proxy's `X-Forwarded-Host` and
    /// `X-Forwarded-Proto` name this server in QR links when `public_url` is not set.
    pub trust_forwarded_for: bool,
    /// Reverse proxies (addresses or CIDR ranges, e.g. `10.0.0.0/8`) whose forwarding headers
    /// are believed.
    pub trusted_proxies: Vec<String>,
    /// Open connections served at once; more wait to be accepted.
    pub max_connections: usize,
    /// Seconds a client has to send a request's headers (and the longest a kept-alive
    /// connection may sit idle).
    pub header_read_timeout_seconds: u64,
    /// Seconds a request body may go without sending anything before it is refused.
    pub body_read_timeout_seconds: u64,
    /// Seconds a worker holds a job without a heartbeat; a job whose worker died is claimed
    /// again after this long.
    pub job_lease_seconds: u64,
    /// The CJK font embedded in PDF reports (.ttf, .otf or .ttc); defaults to the first known
    /// system font (fonts-noto-cjk, WenQuanYi, AR PL).
    pub report_font: Option<PathBuf>,
    /// Run the paraphrase layer (USE sentence encoder) in checks when its model is present.
    pub paraphrase_layer: bool,
    /// In AI-text detection, let the 1.5B model observe the 0.5B one (Binoculars) when
    /// `wenjian models fetch qwen2.5-1.5b` installed it (its own calibration; about twice the
    /// scoring time; measured in docs/aidetect.md). Off by default: the pair's calibration is
    /// still the 2023 one (ChatGPT answers only) and does not see modern models' text, which the
    /// single model's calibration with its hidden-state probe does.
    pub aigc_observer: bool,
    /// Price of rewriting (降重 / 降AIGC) per started 1,000 characters, in fen. Paragraphs left
    /// as they were (the model failed, or no attempt met the rules) are refunded.
    pub rewrite_price_fen_per_thousand: i64,
    /// Price of one chat-style rewrite per started 1,000 characters of the message sent, in
    /// fen; refunded in full when the model gives no answer.
    pub chat_price_fen_per_thousand: i64,
    /// An OpenAI-compatible endpoint (`https://…/v1`) for rewriting and chat; without it the
    /// local model serves.
    pub llm_base_url: Option<String>,
    pub llm_api_key: Option<String>,
    /// The endpoint's model name (e.g. `deepseek-chat`).
    pub llm_model: Option<String>,
    pub llm_timeout_seconds: u64,
    /// Who serves rewriting: `auto` (the endpoint when configured, else the local model),
    /// `local` or `endpoint`.
    pub rewrite_provider: String,
    /// Who serves chat-style rewriting, as `rewrite_provider`.
    pub chat_provider: String,
    /// Who writes generated papers (论文生成), as `rewrite_provider`.
    pub paper_provider: String,
    /// Prices of a generated paper by length: a paper pays the first tier at least as long as
    /// the length asked for (the longest tier for anything longer). Shown before paying.
    pub paper_price_tiers: Vec<PriceTier>,
    /// Price of one defence deck (答辩PPT), in fen, whatever its length; another template for a
    /// finished deck is free.
    pub ppt_price_fen: i64,
    /// Whether a deck's long bullets are shortened by the model that writes papers (the
    /// endpoint, else the local model), each answer checked against the paper's sentence.
    pub ppt_condense: bool,
    /// Paragraphs of one task rewritten at the same time.
    pub rewrite_concurrency: usize,
    /// The local model that rewrites when no endpoint serves: `qwen2.5-0.5b` or `qwen2.5-1.5b`
    /// (once `wenjian models fetch qwen2.5-1.5b` installed it; measured in docs/rewrite.md).
    pub rewrite_local_model: String,
    /// Rewrite one sentence at a time, each answer checked for the locked spans (key terms,
    /// numbers, citations) it had to copy; a sentence that lost one keeps its wording.
    pub rewrite_by_sentence: bool,
    /// Uploaded documents read at the same time, each in its own child process.
    pub extract_concurrency: usize,
    /// Address-space cap of one reading child, in MiB.
    pub extract_memory_mb: u64,
    /// Longest reading of one document, in seconds; the child is killed after it.
    pub extract_timeout_seconds: u64,
    /// The program run as the reading child (with the argument `extract-child`); defaults to
    /// this executable.
    pub extractor: Option<PathBuf>,
    /// Uploads counted (`word_count`) per hour by one visitor's address without signing in.
    pub anonymous_counts_per_hour: u32,
    /// Online payment: `off` (the default: only the balance pays; the pages say online payment
    /// is not configured), `sandbox` (the simulator shipped with Wenjian speaks the WeChat Pay
    /// and Alipay protocols with keys it generates; every payment page carries a 沙箱 banner) or
    /// `live` (the merchants of `[wechat_pay]` and `[alipay]`).
    pub payment: String,
    /// Minutes an unpaid order stays open before it is closed.
    pub order_ttl_minutes: i64,
    /// Top-up amounts offered, with their bonuses.
    pub top_up_tiers: Vec<TopUpTier>,
    /// Smallest and largest custom top-up, in fen (no bonus).
    pub top_up_min_fen: i64,
    pub top_up_max_fen: i64,
    /// Where providers send notifications (`https://…`, no trailing slash); defaults to
    /// `public_url`, else the address the order was created through.
    pub payment_notify_base_url: Option<String>,
    /// Seconds after the last attempt at the provider before an operator may give a refund up
    /// (the providers advise asking about a refund's outcome no sooner).
    pub refund_abandon_wait_seconds: u64,
    /// Seconds a task paid by scanning leaves its page to submit it before the server does
    /// (the page polls every two seconds; a closed page never will).
    pub paid_task_start_delay_seconds: u64,
    /// The WeChat Pay merchant of `payment = "live"`.
    pub wechat_pay: Option<WechatPayConfig>,
    /// The Alipay application of `payment = "live"`.
    pub alipay: Option<AlipayConfig>,
    /// Packages put into an empty catalogue at start.
    pub packages: Vec<PackageSeed>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: "127.0.0.1:8080".into(),
            data_dir: PathBuf::from("./data"),
            database_url: None,
            files_dir: None,
            files_backend: "folder".into(),
            s3: None,
            metrics_token: None,
            library_dir: None,
            library_backend: "embedded".into(),
            models_dir: None,
            workers_per_queue: 1,
            check_price_fen_per_thousand: 300,
            aigc_price_fen_per_thousand: 200,
            free_check_max_chars: 30_000,
            package_paper_max_words: 10_000,
            package_task_max_chars: 100_000,
            max_upload_bytes: 50 * 1024 * 1024,
            max_paper_chars: 300_000,
            library_upload_bytes: 200 * 1024 * 1024,
            public_url: None,
            site_title: "文鉴".into(),
            marketing_url: String::new(),
            time_zone: report::SiteClock::DEFAULT_ZONE.into(),
            session_ttl_hours: 24 * 30,
            qr_ttl_seconds: 300,
            login_max_failures: 5,
            login_max_failures_per_ip: 30,
            login_max_failures_per_account: 10,
            login_lock_minutes: 15,
            register_max_per_ip_per_hour: 5,
            register_max_per_minute: 20,
            qr_max_per_ip_per_minute: 10,
            sweep_interval_seconds: 600,
            trust_forwarded_for: false,
            trusted_proxies: Vec::new(),
            max_connections: 4096,
            header_read_timeout_seconds: 10,
            body_read_timeout_seconds: 30,
            job_lease_seconds: 60,
            report_font: None,
            paraphrase_layer: true,
            aigc_observer: false,
            rewrite_price_fen_per_thousand: 500,
            chat_price_fen_per_thousand: 200,
            llm_base_url: None,
            llm_api_key: None,
            llm_model: None,
            llm_timeout_seconds: 180,
            rewrite_provider: "auto".into(),
            chat_provider: "auto".into(),
            paper_provider: "auto".into(),
            ppt_price_fen: 1_990,
            ppt_condense: true,
            paper_price_tiers: [
                (5_000, 2_990),
                (8_000, 3_990),
                (10_000, 4_990),
                (15_000, 6_990),
                (20_000, 8_990),
                (30_000, 11_990),
                (50_000, 17_990),
            ]
            .into_iter()
            .map(|(words, fen)| PriceTier { words, fen })
            .collect(),
            rewrite_concurrency: 2,
            rewrite_local_model: crate::models::LOCAL_MODEL.into(),
            rewrite_by_sentence: false,
            extract_concurrency: 2,
            extract_memory_mb: 1024,
            extract_timeout_seconds: 60,
            extractor: None,
            anonymous_counts_per_hour: 30,
            payment: "off".into(),
            order_ttl_minutes: 30,
            top_up_tiers: [(3_000, 0), (5_000, 500), (10_000, 2_000), (20_000, 5_000)]
                .into_iter()
                .map(|(fen, bonus_fen)| TopUpTier { fen, bonus_fen })
                .collect(),
            top_up_min_fen: 100,
            top_up_max_fen: 500_000,
            payment_notify_base_url: None,
            refund_abandon_wait_seconds: 300,
            paid_task_start_delay_seconds: 15,
            wechat_pay: None,
            alipay: None,
            packages: default_packages(),
        }
    }
}

/// A sensible first catalogue: what students buy before a defence, priced near the per-use
/// prices with a discount for the bundle.
fn default_packages() -> Vec<PackageSeed> {
    let seed = |name: &str, description: &str, price_fen, kind: &str, amount, days| PackageSeed {
        name: name.into(),
        description: description.into(),
        price_fen,
        grant_kind: kind.into(),
        grant_amount: amount,
        valid_days: days,
    };
    vec![
        seed(
            "查重 3 次",
            "初稿、修改稿、定稿各查一次",
            9_900,
            "check",
            3,
            180,
        ),
        seed("查重 10 次", "反复修改时更划算", 29_900, "check", 10, 365),
        seed(
            "AIGC检测 3 次",
            "检测论文中的 AI 生成痕迹",
            6_900,
            "aigc",
            3,
            180,
        ),
        seed(
            "降重 2 万字",
            "降重或降AIGC，按改写字数扣减",
            9_900,
            "rewrite_chars",
            20_000,
            180,
        ),
        seed(
            "论文生成 1 篇",
            "AI 论文初稿一篇（不超过 1 万字）",
            4_990,
            "paper",
            1,
            90,
        ),
    ]
}

impl Config {
    /// Loads the layered configuration. `file` is the TOML file to read; when `None`,
    /// `./wenjian.toml` is read if it exists.
    pub fn load(file: Option<&Path>) -> anyhow::Result<Config> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        match file {
            Some(path) => {
                anyhow::ensure!(path.exists(), "配置文件不存在：{}", path.display());
                figment = figment.merge(Toml::file(path));
            }
            None => figment = figment.merge(Toml::file("wenjian.toml")),
        }
        let config: Config = figment
            // `WENJIAN_S3__SECRET_ACCESS_KEY` sets `[s3] secret_access_key` (secrets kept out of files).
            .merge(
                Env::prefixed("WENJIAN_")
                    .ignore(&["config", "log"])
                    .split("__"),
            )
            .extract()?;
        config.clock().map_err(anyhow::Error::msg)?;
        anyhow::ensure!(
            matches!(config.files_backend.as_str(), "folder" | "database" | "s3"),
            "files_backend 只能是 folder（本机文件夹）、database（存入数据库）或 s3（S3 兼容对象存储，见 [s3]）"
        );
        if config.files_backend == "s3" {
            let settings = config.s3.as_ref().ok_or_else(|| {
                anyhow::anyhow!(
                    "files_backend = \"s3\" 需要配置 [s3]（endpoint、bucket、region、access_key_id、secret_access_key），见 docs/deploy.md"
                )
            })?;
            store::Bucket::open(settings).map_err(|e| anyhow::anyhow!("{e}"))?;
        }
        anyhow::ensure!(
            matches!(config.payment.as_str(), "off" | "sandbox" | "live"),
            "payment 只能是 off（不开通在线支付）、sandbox（支付沙箱）或 live（真实商户号）"
        );
        anyhow::ensure!(
            config.payment != "live" || config.public_url.is_some(),
            "payment = \"live\" 需要配置 public_url（本站的公开地址）：支付完成后的返回地址和支付通知地址只由它生成，不取自请求的 Host"
        );
        anyhow::ensure!(
            config.payment != "live" || config.wechat_pay.is_some() || config.alipay.is_some(),
            "payment = \"live\" 需要配置 [wechat_pay] 或 [alipay]（商户号、密钥文件路径），见 docs/orders.md"
        );
        // The file's prices obey the rules the console's do (no price under a fen, …).
        crate::prices::Prices::of_config(&config)
            .validated(&config)
            .map_err(|e| anyhow::anyhow!("配置文件中的价格不合规：{}", e.message))?;
        Ok(config)
    }

    /// The clock of `time_zone`; an unknown zone is refused when the configuration loads.
    pub fn clock(&self) -> Result<report::SiteClock, String> {
        report::SiteClock::named(&self.time_zone)
    }

    pub fn database_url(&self) -> String {
        self.database_url.clone().unwrap_or_else(|| {
            format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("wenjian.db").display()
            )
        })
    }

    pub fn files_dir(&self) -> PathBuf {
        self.files_dir
            .clone()
            .unwrap_or_else(|| self.data_dir.join("files"))
    }

    /// Where this deployment's files live (`files_backend`). `Config::load` has already opened
    /// the `[s3]` bucket once, so a loaded configuration never fails here.
    pub fn file_store(&self, store: &store::Store) -> store::FileStore {
        match self.files_backend.as_str() {
            "database" => store::FileStore::Database(store.clone()),
            "s3" => store::FileStore::Object(
                store::Bucket::open(self.s3.as_ref().expect("files_backend = s3 without [s3]"))
                    .expect("[s3] checked when the configuration loaded"),
            ),
            _ => store::FileStore::Folder(self.files_dir()),
        }
    }

    pub fn library_dir(&self) -> PathBuf {
        self.library_dir
            .clone()
            .unwrap_or_else(|| self.data_dir.join("library"))
    }

    pub fn models_dir(&self) -> PathBuf {
        self.models_dir
            .clone()
            .unwrap_or_else(|| self.data_dir.join("models"))
    }

    pub fn job_lease(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.job_lease_seconds.max(1))
    }

    pub fn session_ttl_ms(&self) -> i64 {
        self.session_ttl_hours * 3_600_000
    }
}
