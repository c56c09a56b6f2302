//! Reading payloads from files or stdin, writing them back, and turning them into messages.

use std::io::Read;
use std::path::Path;

use paimon_wire::{deserialize_list, dpcm, envelope, CommitMessage, SerializerVersion};

use crate::error::{CliError, CliResult};

/// The path that means stdin (for inputs) or stdout (for outputs).
pub const STDIO: &str = "-";

/// Parses a `--version` value: an integer 1 to 14. Used as a clap value parser, so a bad
/// value is a usage error that names the supported range.
pub fn parse_version(s: &str) -> Result<SerializerVersion, String> {
    let n: i32 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a serializer version number"))?;
    SerializerVersion::try_from(n).map_err(|e| e.to_string())
}

/// Reads the whole of `path`, or stdin if `path` is `-`.
pub fn read_input(path: &Path) -> CliResult<Vec<u8>> {
    if path.as_os_str() == STDIO {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|e| CliError::input(format!("cannot read stdin: {e}")))?;
        Ok(bytes)
    } else {
        std::fs::read(path)
            .map_err(|e| CliError::input(format!("cannot read {}: {e}", path.display())))
    }
}

/// Writes `bytes` to `path`, or stdout if `path` is `-`.
pub fn write_output(path: &Path, bytes: &[u8]) -> CliResult<()> {
    if path.as_os_str() == STDIO {
        crate::output::write_stdout(bytes)
    } else {
        std::fs::write(path, bytes)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))
    }
}

/// How the bytes of an input are framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// An envelope if the bytes start with its magic (`PWIR`), a Doris frame if they start
    /// with `DPCM`, a raw payload otherwise.
    Detect,
    /// An envelope; anything else is an error.
    Envelope,
}

/// The raw payload inside an input and the version to read it at.
pub struct Unframed<'a> {
    /// Java `CommitMessageSerializer.serializeList` bytes.
    pub raw: &'a [u8],
    /// The serializer version the raw bytes are read at.
    pub version: SerializerVersion,
    /// The frame the input came in (`envelope`, `DPCM frame`), `None` for a raw payload.
    pub framed_as: Option<&'static str>,
}

/// Finds the raw payload in `bytes` read from `source`. An envelope carries its version; a
/// raw payload needs `version` from the command line. When both are there they must agree.
pub fn unframe<'a>(
    source: &Path,
    bytes: &'a [u8],
    version: Option<SerializerVersion>,
    framing: Framing,
) -> CliResult<Unframed<'a>> {
    let name = display_source(source);
    if framing == Framing::Envelope || envelope::is_envelope(bytes) {
        let (framed_version, raw) =
            envelope::unwrap(bytes).map_err(|e| CliError::input(format!("{name}: {e}")))?;
        if let Some(given) = version.filter(|v| *v != framed_version) {
            return Err(CliError::input(format!(
                "{name}: the envelope says serializer version {framed_version}, but --version \
                 {given} was given"
            )));
        }
        return Ok(Unframed {
            raw,
            version: framed_version,
            framed_as: Some("envelope"),
        });
    }
    if dpcm::is_frame(bytes) {
        let (framed_version, raw) =
            dpcm::unframe(bytes).map_err(|e| CliError::input(format!("{name}: {e}")))?;
        if let Some(given) = version.filter(|v| *v != framed_version) {
            return Err(CliError::input(format!(
                "{name}: the DPCM frame says serializer version {framed_version}, but \
                 --version {given} was given"
            )));
        }
        return Ok(Unframed {
            raw,
            version: framed_version,
            framed_as: Some("DPCM frame"),
        });
    }
    let version = version.ok_or_else(|| {
        CliError::usage(format!(
            "{name} is a raw payload (no envelope), so its serializer version must be given \
             with --version N"
        ))
    })?;
    Ok(Unframed {
        raw: bytes,
        version,
        framed_as: None,
    })
}

/// A decoded payload: its messages and the version they were read at.
pub struct DecodedPayload {
    /// The messages, in payload order.
    pub messages: Vec<CommitMessage>,
    /// The serializer version the bytes were read at.
    pub version: SerializerVersion,
}

/// Reads the input at `path` (or stdin), unwraps an envelope or a DPCM frame if there is
/// one, and decodes
/// the messages.
pub fn read_payload(
    path: &Path,
    version: Option<SerializerVersion>,
    framing: Framing,
) -> CliResult<DecodedPayload> {
    let bytes = read_input(path)?;
    let unframed = unframe(path, &bytes, version, framing)?;
    let messages = deserialize_list(unframed.version, unframed.raw)
        .map_err(|e| CliError::input(format!("{}: {e}", display_source(path))))?;
    Ok(DecodedPayload {
        messages,
        version: unframed.version,
    })
}

/// How an input path is named in messages.
pub fn display_source(path: &Path) -> String {
    if path.as_os_str() == STDIO {
        "stdin".to_string()
    } else {
        path.display().to_string()
    }
}
