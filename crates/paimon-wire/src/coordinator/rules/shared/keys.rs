//! The key rows of a primary-key table's data files (`min_key`, `max_key`): decoded as the
//! table's key type and compared as Paimon compares keys.
//!
//! Readers trust a file's key range: they group the files of a bucket into sections by
//! their claimed ranges and merge only files whose ranges overlap. A key row of the wrong
//! arity or type, or a range whose minimum lies above its maximum, is refused (rule
//! `key-range`); compaction results must lie within their inputs' range (rule
//! `compact-ranges`, [`crate::coordinator::rules::compaction`]). That a file's keys really lie in its range can
//! only be seen by reading it.

use std::cmp::Ordering;

use paimon::spec::{BinaryRow, DataField, Datum};

/// The key type of a primary-key table: its primary keys without the partition keys
/// (Java's trimmed primary key, the row a data file's `min_key` and `max_key` hold).
#[derive(Debug, Clone, Default)]
pub(crate) struct KeyType {
    fields: Vec<DataField>,
}

/// One decoded key row: a value (or null) per key field.
pub(crate) type Key = Vec<Option<Datum>>;

impl KeyType {
    /// The key type of a table with `fields`, `primary_keys` and `partition_keys`; empty for
    /// a table without a primary key.
    pub(crate) fn new(fields: &[DataField], trimmed_primary_keys: &[String]) -> Self {
        let fields = trimmed_primary_keys
            .iter()
            .filter_map(|name| fields.iter().find(|f| f.name() == name).cloned())
            .collect();
        Self { fields }
    }

    /// Whether the table has a key (a primary-key table).
    pub(crate) fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Decodes a serialized key row, or says why it is not a row of this key type.
    pub(crate) fn decode(&self, bytes: &[u8]) -> Result<Key, String> {
        let row = BinaryRow::from_serialized_bytes(bytes)
            .map_err(|e| format!("not a binary row: {e}"))?;
        if row.arity() < 0 || row.arity() as usize != self.fields.len() {
            return Err(format!(
                "a key row of {} field(s), but the table's key has {} ({})",
                row.arity(),
                self.fields.len(),
                self.fields
                    .iter()
                    .map(DataField::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        self.fields
            .iter()
            .enumerate()
            .map(|(pos, field)| {
                row.get_datum(pos, field.data_type()).map_err(|e| {
                    format!(
                        "key field {:?} does not decode as {:?}: {e}",
                        field.name(),
                        field.data_type()
                    )
                })
            })
            .collect()
    }
}

/// Compares two keys field by field as Paimon's key comparator does (nulls first). `None`
/// when a field cannot be ordered (NaN), where no check can refuse.
pub(crate) fn compare(left: &Key, right: &Key) -> Option<Ordering> {
    for (l, r) in left.iter().zip(right) {
        let ordering = match (l, r) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(l), Some(r)) => l.partial_cmp(r)?,
        };
        if ordering != Ordering::Equal {
            return Some(ordering);
        }
    }
    Some(Ordering::Equal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use paimon::spec::{DataType, IntType, VarCharType};

    fn key_type() -> KeyType {
        let fields = vec![
            DataField::new(0, "id".into(), DataType::Int(IntType::new())),
            DataField::new(
                1,
                "name".into(),
                DataType::VarChar(VarCharType::string_type()),
            ),
        ];
        KeyType::new(&fields, &["id".into(), "name".into()])
    }

    fn row(id: Option<i32>, name: &str) -> Vec<u8> {
        let int = DataType::Int(IntType::new());
        let string = DataType::VarChar(VarCharType::string_type());
        let values = [
            (id.map(Datum::Int), &int),
            (Some(Datum::String(name.into())), &string),
        ];
        let typed: Vec<_> = values.iter().map(|(v, t)| (v.as_ref(), *t)).collect();
        BinaryRow::from_datums(&typed).to_serialized_bytes()
    }

    #[test]
    fn keys_decode_and_compare_field_by_field_with_nulls_first() {
        let keys = key_type();
        let a = keys.decode(&row(Some(1), "b")).unwrap();
        let b = keys.decode(&row(Some(2), "a")).unwrap();
        let null = keys.decode(&row(None, "z")).unwrap();
        assert_eq!(compare(&a, &b), Some(Ordering::Less));
        assert_eq!(compare(&b, &a), Some(Ordering::Greater));
        assert_eq!(compare(&a, &a), Some(Ordering::Equal));
        assert_eq!(compare(&null, &a), Some(Ordering::Less));
    }

    #[test]
    fn a_row_of_another_arity_is_not_a_key() {
        let keys = key_type();
        let one_field =
            BinaryRow::from_datums(&[(Some(&Datum::Int(1)), &DataType::Int(IntType::new()))])
                .to_serialized_bytes();
        let error = keys.decode(&one_field).unwrap_err();
        assert!(
            error.contains("1 field(s)") && error.contains("has 2"),
            "{error}"
        );
        assert!(keys.decode(&[1, 2, 3]).is_err());
    }
}
