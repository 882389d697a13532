//! Who confirms a QR login. The built-in provider encodes a link to this server's own phone page
//! (`/m/qr/{id}`), where a signed-in user approves. A messaging-app provider (a WeChat official
//! account, say) would encode its own ticket URL and confirm through its callback, calling the
//! same `Store::confirm_qr_login`.

pub trait QrLoginProvider: Send + Sync {
    /// Stored with each QR login and on the session it creates (`qr:<name>`).
    fn name(&self) -> &'static str;
    /// The text encoded in the QR image for login `id`; `public_base` is this server's address.
    fn qr_text(&self, id: &str, public_base: &str) -> String;
}

pub struct LocalPageProvider;

impl QrLoginProvider for LocalPageProvider {
    fn name(&self) -> &'static str {
        "local"
    }

    fn qr_text(&self, id: &str, public_base: &str) -> String {
        format!("{}/m/qr/{id}", public_base.trim_end_matches('/'))
    }
}
