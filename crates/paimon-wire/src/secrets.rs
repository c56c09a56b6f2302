//! Keeping credentials out of every message: the spellings a secret can take in a server's or
//! proxy's answer, the `Authorization` schemes whose tokens are hidden whatever they are, and
//! the secrets this process was given.
//!
//! A secret reaches an error message in many spellings: as given, JSON-escaped by a REST
//! server that echoes a request (`/` as `\/`, non-ASCII as `\u00e9`), percent-encoded by a
//! proxy that quotes a URL (`%2F`, `%2f`, `+` for a space), or as the credential of an
//! `Authorization: Bearer …` header that a server copies into its body. [`redact`] replaces
//! each of them; [`remember`] records the secret values of every warehouse this process opens,
//! and [`redact_remembered`] hides those, so the coordinator's errors (built in one place,
//! `CoordinatorError::paimon`) carry none of them on any surface: Rust, C, C++, Python, CLI.

use std::sync::RwLock;

/// What replaces a credential in messages.
pub const REDACTED: &str = "<redacted>";

/// Secrets shorter than this are redacted only where they stand as a whole word: replacing
/// every occurrence of a one-letter token would garble the message around it (`une<redacted>pected`)
/// while hiding nothing such a short value protects.
const SHORT_SECRET: usize = 8;

/// The `Authorization` schemes whose credential is hidden wherever it appears, known secret or
/// not (compared without case).
const AUTHORIZATION_SCHEMES: [&str; 2] = ["bearer", "basic"];

/// The shortest text after `Bearer`/`Basic` taken for a credential when no secret names it.
const MIN_CREDENTIAL: usize = 8;

/// The secret values of the warehouses this process opened, longest first.
static REMEMBERED: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Remembers `secrets` (option values that are credentials), so that [`redact_remembered`]
/// hides them from then on.
pub fn remember<'a>(secrets: impl IntoIterator<Item = &'a str>) {
    let mut remembered = REMEMBERED.write().unwrap_or_else(|e| e.into_inner());
    for secret in secrets {
        if !secret.is_empty() && !remembered.iter().any(|known| known == secret) {
            remembered.push(secret.to_string());
        }
    }
    remembered.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
}

/// `text` with every secret [`remember`]ed so far, and every `Authorization` credential,
/// replaced by [`REDACTED`] in each spelling ([`redact`]).
pub fn redact_remembered(text: &str) -> String {
    let remembered = REMEMBERED.read().unwrap_or_else(|e| e.into_inner());
    redact(text, remembered.iter().map(String::as_str))
}

/// `text` with each of `secrets` replaced by [`REDACTED`] in every spelling: as given,
/// JSON-escaped (with and without `\/`, non-ASCII as is or as `\uXXXX`), percent-encoded
/// (upper- or lower-case hex digits, a space as `%20` or `+`). A secret of fewer than 8
/// characters is replaced only where no letter or digit touches it. Then the credential after
/// `Bearer` or `Basic` (any case) is replaced, whatever it is.
pub fn redact<'a>(text: &str, secrets: impl IntoIterator<Item = &'a str>) -> String {
    let mut spelled: Vec<String> = secrets
        .into_iter()
        .filter(|secret| !secret.is_empty())
        .flat_map(spellings)
        .collect();
    // Longest first, so a secret containing another is replaced whole.
    spelled.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    spelled.dedup();
    let mut out = text.to_string();
    for secret in &spelled {
        if !out.contains(secret.as_str()) {
            continue;
        }
        out = if secret.chars().count() >= SHORT_SECRET {
            out.replace(secret.as_str(), REDACTED)
        } else {
            replace_whole_words(&out, secret)
        };
    }
    redact_authorization(&out)
}

/// The spellings of `secret` a message may carry.
fn spellings(secret: &str) -> Vec<String> {
    let mut all = vec![
        secret.to_string(),
        json_escaped(secret, None, false),
        json_escaped(secret, Some("\\/"), false),
        json_escaped(secret, Some("\\u002f"), false),
        json_escaped(secret, None, true),
        json_escaped(secret, Some("\\/"), true),
        json_escaped(secret, Some("\\u002f"), true),
        percent_encoded(secret, false, false),
        percent_encoded(secret, true, false),
        percent_encoded(secret, false, true),
        percent_encoded(secret, true, true),
    ];
    all.sort();
    all.dedup();
    all
}

/// `secret` as a JSON string's contents: `"`, `\` and control characters escaped, `/` as
/// `slash` when given (`\/` or `\u002f`), characters beyond ASCII as `\uXXXX` (UTF-16) when
/// `ascii`.
fn json_escaped(secret: &str, slash: Option<&str>, ascii: bool) -> String {
    let mut out = String::with_capacity(secret.len() + 8);
    for c in secret.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str(slash.unwrap_or("/")),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `secret` percent-encoded as a URL component: every byte but RFC 3986's unreserved ones
/// as `%XX` (lower-case hex when `lower`), a space as `+` when `plus`.
fn percent_encoded(secret: &str, lower: bool, plus: bool) -> String {
    let mut out = String::with_capacity(secret.len() * 3);
    for byte in secret.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(byte as char)
            }
            b' ' if plus => out.push('+'),
            _ if lower => out.push_str(&format!("%{byte:02x}")),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// `text` with each occurrence of `word` that no alphanumeric character touches replaced by
/// [`REDACTED`].
fn replace_whole_words(text: &str, word: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut before: Option<char> = None;
    while let Some(at) = rest.find(word) {
        let previous = rest[..at].chars().next_back().or(before);
        let next = rest[at + word.len()..].chars().next();
        let touches = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        out.push_str(&rest[..at]);
        if touches(previous) || touches(next) {
            out.push_str(word);
        } else {
            out.push_str(REDACTED);
        }
        before = word.chars().next_back();
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// Whether `c` can be part of an `Authorization` credential as servers echo it: RFC 6750's
/// `b64token` characters, and `\` for a JSON-escaped `/`, `%` for a percent-encoded one.
fn is_credential_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~+/=\\%".contains(c)
}

/// `text` with the credential after each `Bearer` or `Basic` scheme name (any case, then
/// white space, `+` or `%20`) replaced by [`REDACTED`]. A scheme name inside a longer word
/// (`unbearerish`) is left alone, and so is prose after one (fewer than 8 characters, or one
/// lower-case word): secrets the process was given are replaced by value wherever they are.
fn redact_authorization(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut search = 0;
    while let Some((at, scheme)) = AUTHORIZATION_SCHEMES
        .iter()
        .filter_map(|scheme| lower[search..].find(scheme).map(|i| (search + i, scheme)))
        .min_by_key(|(at, _)| *at)
    {
        let after_name = at + scheme.len();
        search = after_name;
        let starts_word = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric());
        if !starts_word {
            continue;
        }
        // The separator: white space, or a space percent- or form-encoded.
        let rest = &text[after_name..];
        let separator = if let Some(stripped) = rest.strip_prefix("%20") {
            rest.len() - stripped.len()
        } else {
            rest.len() - rest.trim_start_matches([' ', '\t', '+']).len()
        };
        if separator == 0 {
            continue;
        }
        let credential_at = after_name + separator;
        let credential_len = text[credential_at..]
            .find(|c: char| !is_credential_char(c))
            .unwrap_or(text.len() - credential_at);
        let credential = &text[credential_at..credential_at + credential_len];
        // Prose ("a bearer token is required") is not a credential: a credential has at least
        // 8 characters and is not one lower-case word.
        let prose =
            credential.len() < MIN_CREDENTIAL || credential.bytes().all(|b| b.is_ascii_lowercase());
        if prose || credential.starts_with(REDACTED) {
            continue;
        }
        out.push_str(&text[copied..credential_at]);
        out.push_str(REDACTED);
        copied = credential_at + credential_len;
        search = copied;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "tok/en+é x\"1";

    #[test]
    fn every_spelling_of_a_secret_is_redacted() {
        for spelled in [
            TOKEN.to_string(),
            json_escaped(TOKEN, Some("\\/"), false),
            json_escaped(TOKEN, None, false),
            json_escaped(TOKEN, Some("\\/"), true),
            json_escaped(TOKEN, Some("\\u002f"), true),
            percent_encoded(TOKEN, false, false),
            percent_encoded(TOKEN, true, true),
        ] {
            let text = format!("the server said {{\"error\": \"{spelled}\"}} (HTTP 401)");
            let redacted = redact(&text, [TOKEN]);
            assert_eq!(
                redacted,
                format!("the server said {{\"error\": \"{REDACTED}\"}} (HTTP 401)"),
                "{spelled}"
            );
        }
        assert_eq!(
            json_escaped(TOKEN, Some("\\/"), true),
            "tok\\/en+\\u00e9 x\\\"1"
        );
        assert_eq!(
            percent_encoded(TOKEN, false, true),
            "tok%2Fen%2B%C3%A9+x%221"
        );
    }

    #[test]
    fn authorization_credentials_are_redacted_whatever_they_are() {
        assert_eq!(
            redact_authorization("{\"echo\":\"Authorization: Bearer abc.def\\/ghi==\"}"),
            format!("{{\"echo\":\"Authorization: Bearer {REDACTED}\"}}")
        );
        assert_eq!(
            redact_authorization("authorization=bearer%20a%2Fb0123456&x=1; BASIC  dXNlcjpwYXNz"),
            format!("authorization=bearer%20{REDACTED}&x=1; BASIC  {REDACTED}")
        );
        // Not a scheme name: inside a word, or nothing after it; not a credential: prose.
        for kept in [
            "unbearerish token",
            "the bearer",
            "Bearer: x",
            "Basically",
            "token is required for bearer token provider",
            "a Bearer authentication failed",
        ] {
            assert_eq!(redact_authorization(kept), kept);
        }
    }

    #[test]
    fn short_secrets_are_redacted_as_whole_words_only() {
        assert_eq!(
            redact("unexpected error, token x; x=1 (x)", ["x"]),
            "unexpected error, token <redacted>; <redacted>=1 (<redacted>)"
        );
        assert_eq!(
            redact("abcs3cr3t-longdef", ["s3cr3t-long"]),
            "abc<redacted>def"
        );
    }

    #[test]
    fn remembered_secrets_are_redacted_from_then_on() {
        let secret = "remembered-secrets-test/value";
        assert!(redact_remembered(secret).contains("remembered-secrets-test"));
        remember([secret]);
        assert_eq!(
            redact_remembered(&format!("x {secret} y")),
            "x <redacted> y"
        );
        assert_eq!(
            redact_remembered("x remembered-secrets-test\\/value y"),
            "x <redacted> y"
        );
    }
}
