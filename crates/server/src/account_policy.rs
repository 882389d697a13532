//! What a new account's name and a new password must satisfy, and where credentials may travel.
//!
//! Names: 4–32 characters of ASCII letters and digits, CJK unified ideographs and `_ - . @`.
//! That set is unchanged by NFKC normalisation, so full-width forms (`ａｄｍｉｎ`), compatibility
//! ideographs and letters of other scripts that look like Latin ones (Cyrillic `а`, Greek `ο`)
//! are refused instead of letting two names that read the same coexist. Some names are
//! reserved for the site itself (`admin`, `文鉴`, `客服`, …).
//!
//! Passwords: 8–128 characters, not only white space, not containing the user name (ignoring
//! case), not one of the most common passwords.

use crate::envelope::ApiError;

pub const USERNAME_RULE: &str = "用户名需为 4–32 个字符，可使用英文字母、数字、汉字及 _ - . @";

/// A CJK unified ideograph (the basic block and extensions A–I); compatibility ideographs,
/// which NFKC maps to other characters, are not included.
fn is_cjk_ideograph(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2EE5F
        | 0x30000..=0x323AF)
}

fn allowed_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@') || is_cjk_ideograph(c)
}

/// Full-width and half-width forms, and the ideographic space.
fn is_width_variant(c: char) -> bool {
    matches!(c as u32, 0xFF00..=0xFFEF | 0x3000)
}

/// A name of 4–32 characters from the allowed set (see the module documentation). Names that
/// are reserved pass this check; [`check_new_username`] refuses them for self-registration.
pub fn valid_username(name: &str) -> bool {
    let count = name.chars().count();
    (4..=32).contains(&count) && name.chars().all(allowed_char)
}

/// Names only the site may use, compared ignoring case, separators and trailing digits.
const RESERVED_NAMES: &[&str] = &[
    "admin",
    "administrator",
    "root",
    "system",
    "sysadmin",
    "superuser",
    "support",
    "service",
    "operator",
    "official",
    "staff",
    "moderator",
    "webmaster",
    "postmaster",
    "security",
    "wenjian",
    "null",
    "undefined",
    "文鉴",
    "管理员",
    "客服",
    "系统",
    "官方",
    "运营",
];

/// Words that make any name containing them look like the site's own staff.
const RESERVED_PARTS: &[&str] = &["文鉴", "管理员", "客服", "官方"];

pub fn is_reserved_username(name: &str) -> bool {
    let folded: String = name
        .to_lowercase()
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | '.' | '@'))
        .collect();
    let stem = folded.trim_end_matches(|c: char| c.is_ascii_digit());
    RESERVED_NAMES.contains(&stem)
        || RESERVED_NAMES.contains(&folded.as_str())
        || RESERVED_PARTS.iter().any(|part| folded.contains(part))
}

/// The checks on a name chosen at registration: `invalid_username` (length or characters, with
/// a message naming full-width and foreign-script letters) or `reserved_username`.
pub fn check_new_username(name: &str) -> Result<(), ApiError> {
    if !valid_username(name) {
        let message = if name.chars().any(is_width_variant) {
            "用户名不能使用全角字符，请改用半角英文字母和数字"
        } else if name
            .chars()
            .any(|c| c.is_alphanumeric() && !c.is_ascii() && !is_cjk_ideograph(c))
        {
            "用户名只能使用英文字母、数字、汉字及 _ - . @，不能使用其他文字的字母（如西里尔字母、希腊字母），以免与他人的名字混淆"
        } else {
            USERNAME_RULE
        };
        return Err(ApiError::bad_request("invalid_username", message));
    }
    if is_reserved_username(name) {
        return Err(ApiError::bad_request(
            "reserved_username",
            "该用户名为系统保留名称，请换一个",
        ));
    }
    Ok(())
}

/// The most common passwords of 8 characters or more (Chinese and international leak lists),
/// lower case.
const COMMON_PASSWORDS: &[&str] = &[
    "12345678",
    "123456789",
    "1234567890",
    "0123456789",
    "87654321",
    "987654321",
    "11111111",
    "00000000",
    "88888888",
    "66666666",
    "12341234",
    "11223344",
    "12344321",
    "123123123",
    "147258369",
    "123456abc",
    "a1234567",
    "a12345678",
    "a123456789",
    "aa123456",
    "aa12345678",
    "abc12345",
    "abc123456",
    "abcd1234",
    "qq123456",
    "qwertyui",
    "qwertyuiop",
    "qwerty123",
    "asdfghjk",
    "asdfghjkl",
    "asdf1234",
    "zxcvbnm123",
    "1qaz2wsx",
    "1q2w3e4r",
    "1q2w3e4r5t",
    "q1w2e3r4",
    "qazwsxedc",
    "zaq12wsx",
    "password",
    "password1",
    "password123",
    "passw0rd",
    "p@ssw0rd",
    "p@ssword",
    "iloveyou",
    "iloveyou1",
    "woaini1314",
    "woaini520",
    "5201314520",
    "admin123",
    "admin888",
    "admin1234",
    "letmein1",
    "welcome1",
    "sunshine",
    "princess",
    "football",
    "baseball",
    "superman",
    "trustno1",
];

/// Whether a password is one of the common ones, or one character repeated.
pub fn is_common_password(password: &str) -> bool {
    let lower = password.to_lowercase();
    let mut chars = lower.chars();
    let first = chars.next();
    COMMON_PASSWORDS.contains(&lower.as_str()) || first.is_some_and(|f| chars.all(|c| c == f))
}

/// The checks on a new password (registration and password change): `weak_password` (too
/// short, or not both letters and digits), `invalid_password` (too long), `blank_password`, `password_contains_username`,
/// `common_password`.
pub fn check_new_password(password: &str, username: &str) -> Result<(), ApiError> {
    let count = password.chars().count();
    if count < 8 {
        return Err(ApiError::bad_request(
            "weak_password",
            "密码至少需要 8 个字符",
        ));
    }
    if count > 128 {
        return Err(ApiError::bad_request(
            "invalid_password",
            "密码不能超过 128 个字符",
        ));
    }
    if password.trim().is_empty() {
        return Err(ApiError::bad_request(
            "blank_password",
            "密码不能全部由空格组成",
        ));
    }
    let name = username.trim().to_lowercase();
    if !name.is_empty() && password.to_lowercase().contains(&name) {
        return Err(ApiError::bad_request(
            "password_contains_username",
            "密码不能与用户名相同，也不能包含用户名",
        ));
    }
    if is_common_password(password.trim()) {
        return Err(ApiError::bad_request(
            "common_password",
            "该密码过于常见，很容易被猜中，请换一个更复杂的密码",
        ));
    }
    // The same rule the registration form states (web/src/utils/validate.ts).
    if !password.chars().any(|c| c.is_ascii_alphabetic())
        || !password.chars().any(|c| c.is_ascii_digit())
    {
        return Err(ApiError::bad_request(
            "weak_password",
            "密码需同时包含字母和数字",
        ));
    }
    Ok(())
}

/// Parameter names that hold a password. They must come in the request body: query strings are
/// written to proxy and server logs and kept in browser history.
const SECRET_PARAMS: &[&str] = &["password", "old_password", "new_password"];

/// `400 credentials_in_url` when the query string carries a password.
pub fn refuse_credentials_in_url(query: Option<&str>) -> Result<(), ApiError> {
    let Some(query) = query else {
        return Ok(());
    };
    let leaked = serde_urlencoded::from_str::<Vec<(String, String)>>(query)
        .map(|pairs| {
            pairs
                .iter()
                .any(|(k, _)| SECRET_PARAMS.contains(&k.as_str()))
        })
        // An unparsable query is refused on suspicion when it names a password at all.
        .unwrap_or_else(|_| SECRET_PARAMS.iter().any(|p| query.contains(p)));
    if leaked {
        return Err(ApiError::bad_request(
            "credentials_in_url",
            "出于安全考虑，密码不能放在网址中，请放在请求体（JSON 或表单）里发送",
        ));
    }
    Ok(())
}

/// An extractor that refuses (400 `credentials_in_url`) a request whose query string carries a
/// password; put it before the body extractor so the refusal comes first.
pub struct CredentialsInBody;

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for CredentialsInBody {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, ApiError> {
        refuse_credentials_in_url(parts.uri.query()).map(|()| CredentialsInBody)
    }
}

/// The tracing span of an HTTP request: method and path only. The query string is left out so
/// that no log line can carry a credential or a QR id someone sent in the address.
pub fn request_span<B>(req: &axum::http::Request<B>) -> tracing::Span {
    tracing::debug_span!(
        "request",
        method = %req.method(),
        path = %req.uri().path(),
        version = ?req.version(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn username_rules() {
        assert!(valid_username("abcd"));
        assert!(valid_username("张三同学"));
        assert!(valid_username("a.b-c_d@x"));
        assert!(!valid_username("abc"));
        assert!(!valid_username("has space"));
        assert!(!valid_username(&"x".repeat(33)));
        assert!(valid_username(&"x".repeat(32)));
        // Look-alikes: Cyrillic а and о, Greek ο, full-width letters, a compatibility ideograph.
        assert!(!valid_username("аdmin_01"));
        assert!(!valid_username("stud\u{03bf}nt"));
        assert!(!valid_username("ｓｔｕｄｅｎｔ"));
        assert!(!valid_username("student１"));
        assert!(!valid_username("\u{F900}同学们"));
        assert!(
            valid_username("𠀀同学们"),
            "extension B ideographs are fine"
        );
    }

    #[test]
    fn reserved_names() {
        for name in [
            "admin",
            "ADMIN",
            "Admin_01",
            "administrator",
            "root",
            "system",
            "support",
            "wenjian",
            "Wen-Jian",
            "文鉴",
            "文鉴客服",
            "管理员",
            "客服小王",
            "官方账号",
        ] {
            assert!(is_reserved_username(name), "{name}");
        }
        for name in ["student01", "adminton", "张三同学", "rooted_tree"] {
            assert!(!is_reserved_username(name), "{name}");
        }
    }

    #[test]
    fn password_rules() {
        let code = |p: &str, u: &str| check_new_password(p, u).err().map(|e| e.code);
        assert_eq!(code("password-123", "student01"), None);
        assert_eq!(code("short", "student01"), Some("weak_password"));
        assert_eq!(code("abcdefgh-x", "student01"), Some("weak_password"));
        assert_eq!(code("2468013579", "student01"), Some("weak_password"));
        assert_eq!(code("        ", "student01"), Some("blank_password"));
        assert_eq!(
            code("\t \u{3000}     ", "student01"),
            Some("blank_password")
        );
        assert_eq!(
            code("student01", "student01"),
            Some("password_contains_username")
        );
        assert_eq!(
            code("xxSTUDENT01!", "student01"),
            Some("password_contains_username")
        );
        for common in [
            "12345678",
            "password",
            "11111111",
            "qwertyui",
            "88888888",
            "a1234567",
            "iloveyou",
            "PassWord",
            "zzzzzzzzzz",
        ] {
            assert_eq!(
                code(common, "student01"),
                Some("common_password"),
                "{common}"
            );
        }
    }

    #[test]
    fn credentials_in_query_are_refused() {
        assert!(refuse_credentials_in_url(None).is_ok());
        assert!(refuse_credentials_in_url(Some("id=abc&username=amy")).is_ok());
        for q in [
            "username=a&password=b",
            "new_password=x",
            "old_password=&x=1",
            "password",
        ] {
            let err = refuse_credentials_in_url(Some(q)).unwrap_err();
            assert_eq!(
                (err.status.as_u16(), err.code),
                (400, "credentials_in_url"),
                "{q}"
            );
        }
    }
}
