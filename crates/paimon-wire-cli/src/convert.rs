//! `paimon-wire convert`: re-encodes a payload at another serializer version.

use paimon_wire::{serialize_list_with, EncodeOptions, LossyField, SerializerVersion};

use crate::error::{CliError, CliResult};
use crate::payload::DecodedPayload;

/// Encodes the messages of `payload` at `to`, dropping only the fields in `drop` when `to`
/// cannot carry them. A field that would be lost and isn't listed fails the conversion,
/// and the error names it and the version (the codec's `CodecError` does).
pub fn convert(
    payload: &DecodedPayload,
    to: SerializerVersion,
    drop: &[LossyField],
) -> CliResult<Vec<u8>> {
    let options = drop
        .iter()
        .fold(EncodeOptions::default(), |options, field| {
            options.allow_dropping(*field)
        });
    serialize_list_with(&payload.messages, to, &options).map_err(|e| {
        let hint = match e.kind() {
            paimon_wire::CodecErrorKind::Unrepresentable { .. } => {
                " (pass --drop FIELD to accept losing it)"
            }
            _ => "",
        };
        CliError::input(format!(
            "cannot convert from version {} to version {to}: {e}{hint}",
            payload.version
        ))
    })
}
