//! Files in a bucket of an S3-compatible object store (MinIO, Garage, SeaweedFS, Ceph RGW, or a
//! cloud's own), the file backend for deployments whose nodes share an object store rather than
//! keep files in the database. The client is `object_store` (Apache Arrow's), path-style by
//! default, as self-hosted stores expect.
//!
//! A key's segments become the object's path segments; characters S3 paths cannot carry as
//! they are (`#`, `%`, `?`, `[`…) are percent-encoded by `object_store` and decoded again when
//! listing, so every key a caller stores comes back the same.

use crate::{Result, StoreError, StoredFile};
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::{Path as ObjectPath, PathPart};
use object_store::{ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;

/// How to reach the bucket (`[s3]` in the configuration).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BucketSettings {
    /// The store's address, e.g. `https://s3.example.edu.cn` or `http://10.0.0.5:3900`.
    pub endpoint: String,
    pub bucket: String,
    /// The region requests are signed for (Garage: its `s3_region`; MinIO: `us-east-1`).
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    /// A folder inside the bucket for this deployment's files ("" = the bucket's root), so one
    /// bucket can hold several deployments.
    pub prefix: String,
    /// `bucket.host/key` addresses instead of `host/bucket/key` (cloud stores that ask for it).
    pub virtual_hosted_style: bool,
}

impl Default for BucketSettings {
    fn default() -> Self {
        BucketSettings {
            endpoint: String::new(),
            bucket: String::new(),
            region: "us-east-1".into(),
            access_key_id: String::new(),
            secret_access_key: String::new(),
            prefix: String::new(),
            virtual_hosted_style: false,
        }
    }
}

/// Everything but the secret, so a configuration printed for debugging never shows it.
impl std::fmt::Debug for BucketSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketSettings")
            .field("endpoint", &self.endpoint)
            .field("bucket", &self.bucket)
            .field("region", &self.region)
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"…")
            .field("prefix", &self.prefix)
            .field("virtual_hosted_style", &self.virtual_hosted_style)
            .finish()
    }
}

impl BucketSettings {
    /// What is missing or malformed, in words for the operator; `None` when usable.
    pub fn problem(&self) -> Option<String> {
        let missing: Vec<&str> = [
            ("endpoint", &self.endpoint),
            ("bucket", &self.bucket),
            ("region", &self.region),
            ("access_key_id", &self.access_key_id),
            ("secret_access_key", &self.secret_access_key),
        ]
        .into_iter()
        .filter(|(_, value)| value.trim().is_empty())
        .map(|(name, _)| name)
        .collect();
        if !missing.is_empty() {
            return Some(format!("[s3] 缺少：{}", missing.join("、")));
        }
        if !(self.endpoint.starts_with("https://") || self.endpoint.starts_with("http://")) {
            return Some("[s3] endpoint 须以 http:// 或 https:// 开头".into());
        }
        if !self.prefix.is_empty() && crate::files::checked_key(&self.prefix).is_err() {
            return Some("[s3] prefix 不合法（不能以 / 开头或结尾，不能含 .. 或空段）".into());
        }
        None
    }
}

/// A bucket (and the prefix inside it) holding a deployment's files.
#[derive(Clone)]
pub struct Bucket {
    client: Arc<AmazonS3>,
    prefix: Vec<String>,
    label: String,
}

/// The name of `ping`'s probe objects, at the deployment's root (callers' keys always start
/// with a family folder such as `check/`).
const PROBE: &str = ".probe-";

fn object_error(e: object_store::Error) -> StoreError {
    StoreError::Io(format!("对象存储：{e}"))
}

impl Bucket {
    /// A client for the bucket; nothing is sent until the first call (`ping` checks it).
    pub fn open(settings: &BucketSettings) -> Result<Self> {
        if let Some(problem) = settings.problem() {
            return Err(StoreError::Config(problem));
        }
        let client = AmazonS3Builder::new()
            .with_endpoint(settings.endpoint.trim_end_matches('/'))
            .with_bucket_name(&settings.bucket)
            .with_region(&settings.region)
            .with_access_key_id(&settings.access_key_id)
            .with_secret_access_key(&settings.secret_access_key)
            .with_virtual_hosted_style_request(settings.virtual_hosted_style)
            .with_client_options(
                ClientOptions::new()
                    .with_allow_http(settings.endpoint.starts_with("http://"))
                    .with_connect_timeout(Duration::from_secs(5))
                    .with_timeout(Duration::from_secs(120)),
            )
            .with_retry(RetryConfig {
                max_retries: 3,
                retry_timeout: Duration::from_secs(30),
                ..RetryConfig::default()
            })
            .build()
            .map_err(|e| StoreError::Config(format!("[s3] {e}")))?;
        Ok(Bucket {
            client: Arc::new(client),
            prefix: settings
                .prefix
                .split('/')
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            label: format!(
                "{}/{}",
                settings.endpoint.trim_end_matches('/'),
                settings.bucket
            ),
        })
    }

    /// `endpoint/bucket`, for the console and the logs.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The object path of a checked key (or prefix; "" = this deployment's root).
    fn path(&self, key: &str) -> ObjectPath {
        self.prefix
            .iter()
            .map(String::as_str)
            .chain(key.split('/').filter(|s| !s.is_empty()))
            .map(PathPart::from)
            .collect()
    }

    /// The key of a listed object, or `None` for one outside the prefix, a probe, or a name no
    /// caller could have stored (another program's object in a shared bucket).
    fn key_of(&self, path: &ObjectPath) -> Option<String> {
        let parts: Vec<PathPart> = path.parts().collect();
        if parts.len() <= self.prefix.len()
            || parts
                .iter()
                .zip(&self.prefix)
                .any(|(part, want)| PathPart::from(want.as_str()) != *part)
        {
            return None;
        }
        let mut segments = Vec::new();
        for part in &parts[self.prefix.len()..] {
            let decoded = percent_encoding::percent_decode_str(part.as_ref())
                .decode_utf8()
                .ok()?;
            segments.push(decoded.into_owned());
        }
        if segments.len() == 1 && segments[0].starts_with(PROBE) {
            return None;
        }
        let key = segments.join("/");
        crate::files::checked_key(&key).ok()?;
        Some(key)
    }

    pub async fn put(&self, key: &str, bytes: &[u8]) -> Result<()> {
        self.client
            .put(&self.path(key), PutPayload::from(bytes.to_vec()))
            .await
            .map_err(object_error)?;
        Ok(())
    }

    pub async fn get(&self, key: &str, max_bytes: usize) -> Result<Option<Vec<u8>>> {
        let found = match self.client.get(&self.path(key)).await {
            Ok(found) => found,
            Err(object_store::Error::NotFound { .. }) => return Ok(None),
            Err(e) => return Err(object_error(e)),
        };
        // The size is known before the body is read: a file over the limit is never fetched.
        if found.meta.size > max_bytes as u64 {
            return Err(StoreError::Invalid(format!("文件过大：{key}")));
        }
        let bytes = found.bytes().await.map_err(object_error)?;
        if bytes.len() > max_bytes {
            return Err(StoreError::Invalid(format!("文件过大：{key}")));
        }
        Ok(Some(bytes.to_vec()))
    }

    pub async fn remove_under(&self, prefix: &str) -> Result<u64> {
        let listed = self.listed(prefix).await?;
        let mut removed = 0;
        for (path, _) in listed {
            match self.client.delete(&path).await {
                Ok(()) => removed += 1,
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(object_error(e)),
            }
        }
        Ok(removed)
    }

    pub async fn list(&self, prefix: &str) -> Result<Vec<StoredFile>> {
        let mut files: Vec<StoredFile> = self
            .listed(prefix)
            .await?
            .into_iter()
            .map(|(_, file)| file)
            .collect();
        files.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(files)
    }

    /// The objects under `prefix` (path segments, so `check/1` is not `check/12`).
    async fn listed(&self, prefix: &str) -> Result<Vec<(ObjectPath, StoredFile)>> {
        use futures_util::TryStreamExt;
        let root = self.path(prefix);
        let objects: Vec<object_store::ObjectMeta> = self
            .client
            .list(Some(&root))
            .try_collect()
            .await
            .map_err(object_error)?;
        Ok(objects
            .into_iter()
            .filter_map(|meta| {
                let key = self.key_of(&meta.location)?;
                Some((
                    meta.location,
                    StoredFile {
                        key,
                        bytes: meta.size,
                    },
                ))
            })
            .collect())
    }

    /// Writes and removes a probe object of its own: the store answers and the credentials
    /// may write to the bucket.
    pub async fn ping(&self) -> Result<()> {
        let probe = self.path(&format!("{PROBE}{}", crate::files::unique_suffix()));
        self.client
            .put(&probe, PutPayload::from_static(b"ok"))
            .await
            .map_err(object_error)?;
        self.client.delete(&probe).await.map_err(object_error)
    }
}
