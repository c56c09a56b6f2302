//! Reaching a warehouse: which storage backends this build has, the catalog options a caller
//! passes (endpoint, region, credentials, `metastore=rest`, ...), and keeping credentials out
//! of every message.
//!
//! The C library, the CLI and the Python module all open and create tables through
//! [`open_catalog`], so a URI whose backend is not compiled in is refused the same way
//! everywhere ([`CoordinatorError::StorageBackendNotCompiled`], naming the cargo feature), and
//! option values that look like credentials ([`is_secret_option`]) are replaced by
//! [`REDACTED`] in every error that passes through here.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use paimon::catalog::Catalog;
use paimon::{CatalogFactory, CatalogOptions, Options};

use crate::coordinator::{CoordinatorError, CoordinatorResult};

/// Catalog and table options, key to value (e.g. `s3.endpoint`, `s3.access-key`,
/// `metastore`, `uri`, `token`). Ordered, so anything printed from it is deterministic.
pub type WarehouseOptions = BTreeMap<String, String>;

pub use crate::secrets::REDACTED;

/// One storage backend of the paimon crate: the URI schemes it serves and the cargo feature
/// (of this crate, and of the CLI, C library and Python module) that compiles it in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageBackend {
    /// Short name (`s3`, `oss`, ...).
    pub name: &'static str,
    /// URI schemes (lowercase) served by this backend.
    pub schemes: &'static [&'static str],
    /// The cargo feature that compiles it in (`None`: always compiled in).
    pub feature: Option<&'static str>,
    /// Whether this build has it.
    pub compiled: bool,
}

/// Every storage backend the paimon crate offers, with whether this build has it.
pub const STORAGE_BACKENDS: &[StorageBackend] = &[
    StorageBackend {
        name: "fs",
        schemes: &["file", "fs"],
        feature: None,
        compiled: true,
    },
    StorageBackend {
        name: "memory",
        schemes: &["memory"],
        feature: None,
        compiled: true,
    },
    StorageBackend {
        name: "s3",
        schemes: &["s3", "s3a"],
        feature: Some("storage-s3"),
        compiled: cfg!(feature = "storage-s3"),
    },
    StorageBackend {
        name: "oss",
        schemes: &["oss"],
        feature: Some("storage-oss"),
        compiled: cfg!(feature = "storage-oss"),
    },
    StorageBackend {
        name: "gcs",
        schemes: &["gs", "gcs"],
        feature: Some("storage-gcs"),
        compiled: cfg!(feature = "storage-gcs"),
    },
    StorageBackend {
        name: "azdls",
        schemes: &["abfs", "abfss", "az", "azdfs", "azdls", "azure"],
        feature: Some("storage-azdls"),
        compiled: cfg!(feature = "storage-azdls"),
    },
    StorageBackend {
        name: "cos",
        schemes: &["cos", "cosn"],
        feature: Some("storage-cos"),
        compiled: cfg!(feature = "storage-cos"),
    },
    StorageBackend {
        name: "obs",
        schemes: &["obs"],
        feature: Some("storage-obs"),
        compiled: cfg!(feature = "storage-obs"),
    },
    StorageBackend {
        name: "hdfs",
        schemes: &["hdfs", "hdfs-native", "hdfs_native"],
        feature: Some("storage-hdfs"),
        compiled: cfg!(feature = "storage-hdfs"),
    },
];

/// The lowercase scheme of `warehouse` if it is a URI (`s3://bucket/wh` → `s3`); `None` for
/// a local path (`/data/wh`, `file:/data/wh` is `file`).
pub fn warehouse_scheme(warehouse: &str) -> Option<String> {
    let (scheme, _) = warehouse.split_once(':')?;
    let valid = !scheme.is_empty()
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.' | '_'));
    valid.then(|| scheme.to_ascii_lowercase())
}

/// The backend serving `scheme` (lowercase), compiled in or not.
pub fn backend_for_scheme(scheme: &str) -> Option<&'static StorageBackend> {
    STORAGE_BACKENDS
        .iter()
        .find(|backend| backend.schemes.contains(&scheme))
}

/// Checks that this build reaches `warehouse`: a local path, or a URI whose backend is
/// compiled in. A REST catalog's warehouse is a name, not a URI, and always passes.
pub fn check_storage_backend(warehouse: &str) -> CoordinatorResult<()> {
    let Some(scheme) = warehouse_scheme(warehouse) else {
        return Ok(());
    };
    match backend_for_scheme(&scheme) {
        Some(backend) if backend.compiled => Ok(()),
        Some(backend) => Err(CoordinatorError::StorageBackendNotCompiled {
            scheme,
            feature: backend.feature.unwrap_or("storage-fs"),
        }),
        None => Err(CoordinatorError::UnknownStorageScheme { scheme }),
    }
}

/// Whether the option `key` holds a credential, so its value never appears in messages:
/// keys naming a secret, password, token, credential, access key, account key, SAS or
/// encryption key (case-insensitive). Errs on the side of hiding.
pub fn is_secret_option(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    const MARKERS: &[&str] = &[
        "secret",
        "password",
        "token",
        "credential",
        "access-key",
        "access.key",
        "access_key",
        "accesskey",
        "account-key",
        "account.key",
        "account_key",
        "sas",
        "private",
        "sse-c.key",
        "sse.key",
        "dlf.access",
    ];
    MARKERS.iter().any(|marker| key.contains(marker))
}

/// `text` with the value of every secret option ([`is_secret_option`]) replaced by
/// [`REDACTED`], in every spelling a server or proxy may echo it (see [`crate::secrets`]),
/// and every `Bearer`/`Basic` credential replaced whatever it is.
pub fn redact_secrets(text: &str, options: &WarehouseOptions) -> String {
    crate::secrets::redact(text, secret_values(options))
}

/// The values of the secret options of `options`.
fn secret_values(options: &WarehouseOptions) -> impl Iterator<Item = &str> {
    options
        .iter()
        .filter(|(key, value)| is_secret_option(key) && !value.is_empty())
        .map(|(_, value)| value.as_str())
}

/// Options shown safely: secret values replaced by [`REDACTED`].
pub struct DisplayOptions<'a>(pub &'a WarehouseOptions);

impl fmt::Display for DisplayOptions<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (key, value)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let value = if is_secret_option(key) {
                REDACTED
            } else {
                value
            };
            write!(f, "{key}={value}")?;
        }
        Ok(())
    }
}

/// Why an option assignment or an options file was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionSyntaxError {
    /// Where (`--option`, `line 3`).
    pub location: String,
    /// What is wrong. Never contains the value.
    pub reason: String,
}

impl fmt::Display for OptionSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.reason)
    }
}

impl std::error::Error for OptionSyntaxError {}

/// Parses `KEY=VALUE` (the value may contain `=`; the key is trimmed and must not be empty).
pub fn parse_option_assignment(
    assignment: &str,
    location: &str,
) -> Result<(String, String), OptionSyntaxError> {
    let error = |reason: &str| OptionSyntaxError {
        location: location.to_string(),
        reason: reason.to_string(),
    };
    let (key, value) = assignment
        .split_once('=')
        .ok_or_else(|| error("expected KEY=VALUE"))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(error("the key before '=' is empty"));
    }
    if key.chars().any(char::is_whitespace) {
        return Err(error("the key contains whitespace"));
    }
    Ok((key.to_string(), value.to_string()))
}

/// Parses an options file: one `KEY=VALUE` per line; blank lines and lines starting with
/// `#` are skipped; a later line overrides an earlier one with the same key. Values are taken
/// verbatim after the first `=` (trailing `\r` removed), so they may contain `=` and `#`.
pub fn parse_options_file(text: &str) -> Result<WarehouseOptions, OptionSyntaxError> {
    let mut options = WarehouseOptions::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (key, value) = parse_option_assignment(trimmed, &format!("line {}", index + 1))?;
        options.insert(key, value);
    }
    Ok(options)
}

/// Whether `options` select a REST catalog (`metastore=rest`, any case). Its warehouse is a
/// name the server knows, not a path: callers must pass it on unchanged (never make it an
/// absolute local path, never create a directory for it).
pub fn is_rest_catalog(options: &WarehouseOptions) -> bool {
    options
        .get(CatalogOptions::METASTORE)
        .is_some_and(|metastore| metastore.trim().eq_ignore_ascii_case("rest"))
}

/// The warehouse as the paimon crate takes it: a REST catalog's warehouse name
/// ([`is_rest_catalog`]) and a URI as given, a local path made absolute (the crate refuses
/// relative paths). The CLI and the Python module resolve what their users type with it; the
/// error is a sentence naming the warehouse.
pub fn resolve_warehouse(warehouse: &str, options: &WarehouseOptions) -> Result<String, String> {
    if warehouse.is_empty() {
        return Err("the warehouse must not be empty".to_string());
    }
    if is_rest_catalog(options) || warehouse.contains("://") || warehouse.starts_with("file:") {
        return Ok(warehouse.to_string());
    }
    let absolute =
        std::path::absolute(warehouse).map_err(|e| format!("cannot resolve {warehouse:?}: {e}"))?;
    absolute
        .into_os_string()
        .into_string()
        .map_err(|_| format!("the warehouse path {warehouse:?} is not UTF-8"))
}

/// Opens the catalog of `warehouse` with `options` (`metastore=rest` selects a REST catalog;
/// anything else goes to the paimon crate as catalog options, e.g. storage credentials).
/// Refuses a URI whose backend is not compiled in, and an option `warehouse` that names
/// another warehouse than `warehouse`; errors never contain a secret value.
pub async fn open_catalog(
    warehouse: &str,
    options: &WarehouseOptions,
) -> CoordinatorResult<Arc<dyn Catalog>> {
    // From now on no coordinator error of this process shows these values.
    crate::secrets::remember(secret_values(options));
    if let Some(option) = options.get(CatalogOptions::WAREHOUSE) {
        if option != warehouse {
            return Err(CoordinatorError::paimon(
                "opening the warehouse",
                paimon::Error::ConfigInvalid {
                    message: format!(
                        "two warehouses given: {warehouse:?} and the option warehouse={option:?}; \
                         give one"
                    ),
                },
            ));
        }
    }
    check_storage_backend(warehouse)?;
    let mut catalog_options = Options::new();
    for (key, value) in options {
        catalog_options.set(key, value);
    }
    catalog_options.set(CatalogOptions::WAREHOUSE, warehouse);
    CatalogFactory::create(catalog_options)
        .await
        .map_err(|e| paimon_error(format!("opening the warehouse {warehouse:?}"), e, options))
}

/// A [`CoordinatorError::Paimon`] whose message carries no secret of `options`: they are
/// remembered ([`crate::secrets::remember`]), and every coordinator error hides what is
/// remembered (`CoordinatorError::paimon`).
pub(crate) fn paimon_error(
    during: String,
    source: paimon::Error,
    options: &WarehouseOptions,
) -> CoordinatorError {
    crate::secrets::remember(secret_values(options));
    CoordinatorError::paimon(during, source)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_catalog_is_selected_by_the_metastore_option() {
        let options = |value: &str| WarehouseOptions::from([("metastore".into(), value.into())]);
        assert!(is_rest_catalog(&options("rest")));
        assert!(is_rest_catalog(&options(" REST ")));
        assert!(!is_rest_catalog(&options("filesystem")));
        assert!(!is_rest_catalog(&WarehouseOptions::new()));
    }

    #[test]
    fn a_rest_warehouse_is_a_name_and_a_path_is_made_absolute() {
        let rest = WarehouseOptions::from([("metastore".into(), "rest".into())]);
        assert_eq!(resolve_warehouse("my_wh", &rest).unwrap(), "my_wh");
        let local = resolve_warehouse("my_wh", &WarehouseOptions::new()).unwrap();
        assert!(std::path::Path::new(&local).is_absolute(), "{local}");
        assert!(local.ends_with("/my_wh"), "{local}");
        assert_eq!(
            resolve_warehouse("s3://b/wh", &WarehouseOptions::new()).unwrap(),
            "s3://b/wh"
        );
        assert!(resolve_warehouse("", &rest).is_err());
    }

    #[test]
    fn a_second_warehouse_in_the_options_is_refused_by_name() {
        let options = WarehouseOptions::from([("warehouse".into(), "other".into())]);
        let err = futures::executor::block_on(open_catalog("/tmp/wh", &options))
            .err()
            .expect("refused");
        let text = err.to_string();
        assert!(text.contains("two warehouses given"), "{text}");
        assert!(text.contains("\"other\""), "{text}");
    }

    #[test]
    fn schemes_of_uris_and_paths() {
        assert_eq!(warehouse_scheme("s3://b/wh").as_deref(), Some("s3"));
        assert_eq!(warehouse_scheme("S3A://b/wh").as_deref(), Some("s3a"));
        assert_eq!(warehouse_scheme("file:/tmp/wh").as_deref(), Some("file"));
        assert_eq!(warehouse_scheme("/tmp/wh"), None);
        assert_eq!(warehouse_scheme("relative/wh"), None);
        // A REST catalog's warehouse is a plain name.
        assert_eq!(warehouse_scheme("my_warehouse"), None);
    }

    #[test]
    fn backend_not_compiled_names_the_feature() {
        for backend in STORAGE_BACKENDS {
            for scheme in backend.schemes {
                let result = check_storage_backend(&format!("{scheme}://bucket/warehouse"));
                match (backend.compiled, result) {
                    (true, Ok(())) => {}
                    (
                        false,
                        Err(CoordinatorError::StorageBackendNotCompiled {
                            scheme: got,
                            feature,
                        }),
                    ) => {
                        assert_eq!(got, *scheme);
                        assert_eq!(Some(feature), backend.feature);
                    }
                    (compiled, other) => {
                        panic!("{scheme}: compiled={compiled}, got {other:?}")
                    }
                }
            }
        }
        assert!(matches!(
            check_storage_backend("ftp://host/warehouse"),
            Err(CoordinatorError::UnknownStorageScheme { scheme }) if scheme == "ftp"
        ));
    }

    #[test]
    fn secrets_are_recognised_and_redacted() {
        for key in [
            "s3.secret-key",
            "s3.access-key",
            "fs.s3a.access.key",
            "fs.oss.accessKeySecret",
            "token",
            "dlf.access-key-id",
            "fs.azure.account.key",
            "s3.session.token",
        ] {
            assert!(is_secret_option(key), "{key}");
        }
        for key in ["s3.endpoint", "s3.region", "metastore", "uri", "warehouse"] {
            assert!(!is_secret_option(key), "{key}");
        }
        let options: WarehouseOptions = [
            ("s3.secret-key".to_string(), "SECRETVALUE".to_string()),
            (
                "s3.endpoint".to_string(),
                "http://127.0.0.1:9000".to_string(),
            ),
        ]
        .into();
        assert_eq!(
            redact_secrets(
                "signing with SECRETVALUE at http://127.0.0.1:9000",
                &options
            ),
            "signing with <redacted> at http://127.0.0.1:9000"
        );
        assert_eq!(
            DisplayOptions(&options).to_string(),
            "s3.endpoint=http://127.0.0.1:9000, s3.secret-key=<redacted>"
        );
    }

    #[test]
    fn options_files() {
        let parsed = parse_options_file(
            "# creds\n\ns3.endpoint=http://h:1/\r\nk=a=b#c\n  s3.region=x\nk=last\n",
        )
        .unwrap();
        assert_eq!(parsed.get("s3.endpoint").unwrap(), "http://h:1/");
        assert_eq!(parsed.get("k").unwrap(), "last");
        assert_eq!(parsed.get("s3.region").unwrap(), "x");
        let error = parse_options_file("a=1\nno-equals-sign-SECRET\n").unwrap_err();
        assert_eq!(error.location, "line 2");
        assert!(!error.to_string().contains("SECRET"));
        assert!(parse_option_assignment("=v", "--option").is_err());
    }
}
