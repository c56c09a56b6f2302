//! Showing a message's partition row as values, for `inspect --format table`.
//!
//! A partition is a serialized `BinaryRow` (a big-endian arity, then the row). Its bytes
//! don't say the types of its fields, so there are two ways to show it:
//!
//! - **typed**: with the table's partition columns (`--warehouse W --table DB.T`), each
//!   field is read with its type and shown as `name=value`;
//! - **untyped** (best effort): each fixed-width slot is shown as `null`, a string when the
//!   slot is a variable-length pointer to valid, printable UTF-8, or else an integer (the
//!   slot's low 4 bytes as a signed `int` when its high 4 bytes are zero, otherwise the
//!   whole slot as a `bigint`). The guess can be wrong (a `bigint` above 2^31 shows as a
//!   negative `int`, a date shows as its epoch day), so the output is marked `untyped`.

use paimon_wire::paimon::spec::{BinaryRow, DataType};

/// A partition column: its name and type.
#[derive(Debug, Clone)]
pub struct PartitionColumn {
    /// The column name.
    pub name: String,
    /// The column type.
    pub data_type: DataType,
}

/// How partition rows are shown.
#[derive(Debug, Clone)]
pub enum PartitionDecoder {
    /// With the table's partition columns.
    Typed(Vec<PartitionColumn>),
    /// Without a table: a best-effort reading of each slot.
    Untyped,
}

impl PartitionDecoder {
    /// The partition row `bytes` as text: `(name=value, ...)` when typed,
    /// `untyped (value, ...)` otherwise, or why it could not be read.
    pub fn describe(&self, bytes: &[u8]) -> String {
        let row = match BinaryRow::from_serialized_bytes(bytes) {
            Ok(row) => row,
            Err(e) => return format!("not a binary row: {e}"),
        };
        match self {
            Self::Typed(columns) => describe_typed(&row, columns),
            Self::Untyped => describe_untyped(&row),
        }
    }
}

fn describe_typed(row: &BinaryRow, columns: &[PartitionColumn]) -> String {
    let arity = usize::try_from(row.arity()).unwrap_or(0);
    if arity != columns.len() {
        return format!(
            "arity {arity} does not match the table's {} partition column(s); {}",
            columns.len(),
            describe_untyped(row)
        );
    }
    let values: Vec<String> = columns
        .iter()
        .enumerate()
        .map(|(pos, column)| {
            let value = match row.get_datum(pos, &column.data_type) {
                Ok(Some(datum)) => datum.to_string(),
                Ok(None) => "null".to_string(),
                Err(e) => format!("<unreadable: {e}>"),
            };
            format!("{}={value}", column.name)
        })
        .collect();
    format!("({})", values.join(", "))
}

fn describe_untyped(row: &BinaryRow) -> String {
    let arity = usize::try_from(row.arity()).unwrap_or(0);
    if arity == 0 {
        return "unpartitioned".to_string();
    }
    let values: Vec<String> = (0..arity).map(|pos| guess_slot(row, pos)).collect();
    format!("untyped ({})", values.join(", "))
}

/// Bit 63 of a slot marks a variable-length value stored inline in the slot itself.
const INLINE_MARK: u64 = 1 << 63;
/// Inline values are at most 7 bytes long.
const MAX_INLINE_LEN: u64 = 7;

fn guess_slot(row: &BinaryRow, pos: usize) -> String {
    if row.is_null_at(pos) {
        return "null".to_string();
    }
    let Ok(slot) = row.get_long(pos) else {
        return "<truncated>".to_string();
    };
    let raw = slot as u64;
    let fixed_part =
        usize::try_from(BinaryRow::cal_fix_part_size_in_bytes(row.arity())).unwrap_or(usize::MAX);
    let looks_var_length = if raw & INLINE_MARK != 0 {
        (raw & !INLINE_MARK) >> 56 <= MAX_INLINE_LEN
    } else {
        let offset = (raw >> 32) as usize;
        let len = (raw & 0xFFFF_FFFF) as usize;
        offset >= fixed_part && offset.saturating_add(len) <= row.data().len()
    };
    if looks_var_length {
        if let Ok(text) = row.get_string(pos) {
            if text.chars().all(|c| !c.is_control()) {
                return format!("'{text}'");
            }
        }
    }
    if raw >> 32 == 0 {
        (raw as u32 as i32).to_string()
    } else {
        slot.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use paimon_wire::paimon::spec::{BigIntType, Datum, IntType, VarCharType};

    fn string() -> DataType {
        DataType::VarChar(VarCharType::string_type())
    }

    fn int() -> DataType {
        DataType::Int(IntType::new())
    }

    fn row(values: &[(Option<Datum>, DataType)]) -> Vec<u8> {
        let refs: Vec<_> = values.iter().map(|(d, t)| (d.as_ref(), t)).collect();
        BinaryRow::from_datums(&refs).to_serialized_bytes()
    }

    #[test]
    fn untyped_guesses_ints_strings_and_nulls() {
        let bytes = row(&[
            (Some(Datum::Int(-7)), int()),
            (Some(Datum::String("2024-01-01".into())), string()),
            (Some(Datum::String("eu".into())), string()),
            (None, int()),
            (
                Some(Datum::Long(1 << 40)),
                DataType::BigInt(BigIntType::new()),
            ),
        ]);
        assert_eq!(
            PartitionDecoder::Untyped.describe(&bytes),
            "untyped (-7, '2024-01-01', 'eu', null, 1099511627776)"
        );
    }

    #[test]
    fn typed_names_each_column() {
        let bytes = row(&[
            (Some(Datum::String("2024-01-01".into())), string()),
            (Some(Datum::Int(3)), int()),
        ]);
        let decoder = PartitionDecoder::Typed(vec![
            PartitionColumn {
                name: "dt".into(),
                data_type: string(),
            },
            PartitionColumn {
                name: "hr".into(),
                data_type: int(),
            },
        ]);
        assert_eq!(decoder.describe(&bytes), "(dt='2024-01-01', hr=3)");
        let wrong_arity = PartitionDecoder::Typed(vec![PartitionColumn {
            name: "dt".into(),
            data_type: string(),
        }]);
        assert_eq!(
            wrong_arity.describe(&bytes),
            "arity 2 does not match the table's 1 partition column(s); untyped ('2024-01-01', 3)"
        );
    }

    #[test]
    fn unpartitioned_and_garbage_rows_are_described_not_panicked_on() {
        assert_eq!(
            PartitionDecoder::Untyped.describe(&row(&[])),
            "unpartitioned"
        );
        assert!(PartitionDecoder::Untyped
            .describe(&[0, 0, 0])
            .starts_with("not a binary row"));
        // Arity 1 with a slot pointing far outside the row: shown as a number.
        let slot = (1000i64 << 32) | 5;
        let mut bytes = vec![0, 0, 0, 1];
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&slot.to_le_bytes());
        assert_eq!(
            PartitionDecoder::Untyped.describe(&bytes),
            format!("untyped ({slot})")
        );
        // A typed read of a string whose pointer leaves the row reports it, no panic.
        let typed = PartitionDecoder::Typed(vec![PartitionColumn {
            name: "s".into(),
            data_type: string(),
        }]);
        assert!(typed.describe(&bytes).starts_with("(s=<unreadable"));
    }
}
