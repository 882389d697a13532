use thiserror::Error;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("conflict: {0}")]
    Conflict(&'static str),
    #[error("configuration: {0}")]
    Config(String),
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("migration: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error("insufficient balance or credits")]
    InsufficientFunds,
    #[error("password hashing: {0}")]
    Hash(String),
    /// A request the store refuses as it stands (a file key that would leave its folder, a
    /// file over the caller's limit); the message is Chinese, for the user.
    #[error("{0}")]
    Invalid(String),
    /// A console change asked by someone who is no longer an enabled operator (their role was
    /// removed while the request was on its way).
    #[error("not an operator")]
    NotOperator,
    /// The account was disabled by an operator (or no longer exists): no session for it.
    #[error("account disabled")]
    Disabled,
    /// The file system under a folder-backed store failed.
    #[error("file system: {0}")]
    Io(String),
}

impl StoreError {
    pub(crate) fn is_unique_violation(err: &sqlx::Error) -> bool {
        matches!(err, sqlx::Error::Database(db) if db.is_unique_violation())
    }
}
