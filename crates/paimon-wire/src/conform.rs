//! Conforming a worker's Arrow batch to the table's columns before it is written.
//!
//! Every door that writes rows (the Python `Writer` and the Ray sink through it) takes
//! columns the same way, by [`conform_batch`]:
//!
//! - columns are matched **by name**, so any order is accepted; the result is in the
//!   table's order;
//! - a column the table does not have is an error naming it (never dropped), and so is a
//!   table column the batch lacks, and so is a column name that appears more than once;
//! - a `_VALUE_KIND` column ([`paimon::spec::VALUE_KIND_FIELD_NAME`], the row kind of each
//!   row on a primary-key table) is passed through unchanged and placed last, where the
//!   paimon crate's writer reads it (the writer decides whether the table accepts it);
//! - a column whose Arrow type differs from the table's is cast when the cast is
//!   **lossless**: string and binary views and large variants, dictionary-encoded columns,
//!   timestamps in another unit (when every value converts exactly), decimals of another
//!   precision or scale (when every value converts exactly). A cast that would change a
//!   value is refused naming the column and the first row it would change. Other type
//!   differences are left for the paimon crate's writer to accept or refuse.

use std::fmt;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch, RecordBatchOptions};
use arrow_cast::{can_cast_types, cast_with_options, CastOptions};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use paimon::spec::VALUE_KIND_FIELD_NAME;
use paimon::table::Table;

/// Why a batch does not fit the table's columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConformError {
    /// The batch has columns the table does not have.
    ExtraColumns {
        /// Their names, in batch order.
        names: Vec<String>,
    },
    /// The batch lacks columns of the table.
    MissingColumns {
        /// Their names, in table order.
        names: Vec<String>,
    },
    /// A column's values cannot be converted to the table's type without changing one.
    LossyCast {
        /// The column.
        column: String,
        /// The batch's Arrow type.
        from: String,
        /// The table's Arrow type.
        to: String,
        /// The first row whose value would change (or not convert).
        row: usize,
    },
    /// The batch has column names that appear more than once.
    DuplicateColumns {
        /// Each repeated name once, in batch order.
        names: Vec<String>,
    },
    /// Arrow refused a conversion that should have been possible (the message says why).
    Cast {
        /// The column.
        column: String,
        /// Arrow's message.
        message: String,
    },
}

impl fmt::Display for ConformError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConformError::ExtraColumns { names } => write!(
                f,
                "the rows have column(s) the table does not have: {}; drop them before writing",
                names.join(", ")
            ),
            ConformError::MissingColumns { names } => write!(
                f,
                "the rows lack column(s) of the table: {}",
                names.join(", ")
            ),
            ConformError::DuplicateColumns { names } => write!(
                f,
                "the rows have column name(s) more than once: {}; keep one of each",
                names.join(", ")
            ),
            ConformError::LossyCast {
                column,
                from,
                to,
                row,
            } => write!(
                f,
                "column {column} is {from} but the table stores {to}, and the value in row \
                 {row} would change in that conversion; convert it yourself if that is intended"
            ),
            ConformError::Cast { column, message } => {
                write!(
                    f,
                    "column {column} cannot be converted to the table's type: {message}"
                )
            }
        }
    }
}

impl std::error::Error for ConformError {}

/// The Arrow schema rows of `table` are written with (the paimon crate's own mapping of
/// the table's fields).
pub fn table_arrow_schema(table: &Table) -> paimon::Result<SchemaRef> {
    paimon::arrow::build_target_arrow_schema(table.schema().fields())
}

/// `batch` with its columns matched by name to `table_schema`, in the table's order, each
/// cast losslessly to the table's type where it differs (see the module documentation).
pub fn conform_batch(
    batch: &RecordBatch,
    table_schema: &Schema,
) -> Result<RecordBatch, ConformError> {
    let input = batch.schema();
    let mut duplicated: Vec<String> = Vec::new();
    for (index, field) in input.fields().iter().enumerate() {
        let name = field.name();
        let seen_before = input.fields()[..index].iter().any(|f| f.name() == name);
        if seen_before && !duplicated.contains(name) {
            duplicated.push(name.clone());
        }
    }
    if !duplicated.is_empty() {
        return Err(ConformError::DuplicateColumns { names: duplicated });
    }
    // The row kind column is not a table column; the writer reads it after the table's.
    let value_kind = input
        .index_of(VALUE_KIND_FIELD_NAME)
        .ok()
        .filter(|_| table_schema.field_with_name(VALUE_KIND_FIELD_NAME).is_err());
    let extra: Vec<String> = input
        .fields()
        .iter()
        .filter(|f| table_schema.field_with_name(f.name()).is_err())
        .filter(|f| value_kind.is_none() || f.name() != VALUE_KIND_FIELD_NAME)
        .map(|f| f.name().clone())
        .collect();
    if !extra.is_empty() {
        return Err(ConformError::ExtraColumns { names: extra });
    }
    let missing: Vec<String> = table_schema
        .fields()
        .iter()
        .filter(|f| input.index_of(f.name()).is_err())
        .map(|f| f.name().clone())
        .collect();
    if !missing.is_empty() {
        return Err(ConformError::MissingColumns { names: missing });
    }
    let table_columns = table_schema.fields().len();
    let unchanged = input.fields().len() == table_columns + usize::from(value_kind.is_some())
        && value_kind.is_none_or(|index| index == table_columns)
        && input
            .fields()
            .iter()
            .zip(table_schema.fields())
            .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
    if unchanged {
        return Ok(batch.clone());
    }
    let mut fields = Vec::with_capacity(table_columns + 1);
    let mut columns = Vec::with_capacity(table_columns + 1);
    for target in table_schema.fields() {
        let index = input
            .index_of(target.name())
            .map_err(|_| ConformError::MissingColumns {
                names: vec![target.name().clone()],
            })?;
        let source = input.field(index);
        let column = conform_column(target.name(), batch.column(index), target.data_type())?;
        fields.push(Field::new(
            target.name(),
            column.data_type().clone(),
            source.is_nullable(),
        ));
        columns.push(column);
    }
    if let Some(index) = value_kind {
        fields.push(input.field(index).clone());
        columns.push(batch.column(index).clone());
    }
    let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    RecordBatch::try_new_with_options(Arc::new(Schema::new(fields)), columns, &options).map_err(
        |e| ConformError::Cast {
            column: String::new(),
            message: e.to_string(),
        },
    )
}

/// Which lossless conversion, if any, takes `from` to `to`.
enum Conversion {
    /// Same type, or a difference the paimon crate's writer decides on.
    None,
    /// Always exact when Arrow can do it (string/binary layouts, dictionary unpacking).
    Exact,
    /// Exact only for some values: checked by converting back.
    Checked,
}

fn conversion(from: &DataType, to: &DataType) -> Conversion {
    use DataType::*;
    if from == to {
        return Conversion::None;
    }
    let strings = |t: &DataType| matches!(t, Utf8 | LargeUtf8 | Utf8View);
    let binaries = |t: &DataType| matches!(t, Binary | LargeBinary | BinaryView);
    match (from, to) {
        (Dictionary(_, values), _) => match conversion(values, to) {
            Conversion::None if values.as_ref() == to => Conversion::Exact,
            Conversion::None => Conversion::None,
            other => other,
        },
        (a, b) if strings(a) && strings(b) => Conversion::Exact,
        (a, b) if binaries(a) && binaries(b) => Conversion::Exact,
        (Timestamp(_, a), Timestamp(_, b)) if a.is_some() == b.is_some() => Conversion::Checked,
        (Decimal32(..) | Decimal64(..) | Decimal128(..) | Decimal256(..), Decimal128(..)) => {
            Conversion::Checked
        }
        _ => Conversion::None,
    }
}

fn conform_column(name: &str, column: &ArrayRef, to: &DataType) -> Result<ArrayRef, ConformError> {
    let from = column.data_type();
    let checked = match conversion(from, to) {
        Conversion::None => return Ok(column.clone()),
        Conversion::Exact => false,
        Conversion::Checked => true,
    };
    let cast_error = |e: arrow_schema::ArrowError| ConformError::Cast {
        column: name.to_string(),
        message: e.to_string(),
    };
    if !can_cast_types(from, to) {
        return Ok(column.clone());
    }
    // Safe casts: a value that does not fit becomes null, which the check below catches.
    let options = CastOptions::default();
    let converted = cast_with_options(column, to, &options).map_err(cast_error)?;
    if checked {
        // The source's own values (a dictionary unpacked), to compare against.
        let plain = match from {
            DataType::Dictionary(_, values) => {
                cast_with_options(column, values, &options).map_err(cast_error)?
            }
            _ => column.clone(),
        };
        let back =
            cast_with_options(&converted, plain.data_type(), &options).map_err(cast_error)?;
        if let Some(row) = first_difference(&plain, &back) {
            return Err(ConformError::LossyCast {
                column: name.to_string(),
                from: from.to_string(),
                to: to.to_string(),
                row,
            });
        }
    }
    Ok(converted)
}

/// The first row where `a` and `b` differ (in value or nullness), if any.
fn first_difference(a: &ArrayRef, b: &ArrayRef) -> Option<usize> {
    if a.as_ref() == b.as_ref() {
        return None;
    }
    (0..a.len()).find(|&row| a.slice(row, 1).as_ref() != b.slice(row, 1).as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::types::Int32Type;
    use arrow_array::{
        Decimal128Array, DictionaryArray, Int32Array, Int64Array, LargeStringArray, StringArray,
        TimestampMicrosecondArray, TimestampNanosecondArray,
    };
    use arrow_schema::TimeUnit;

    fn table_schema() -> Schema {
        Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("at", DataType::Timestamp(TimeUnit::Microsecond, None), true),
            Field::new("price", DataType::Decimal128(10, 2), true),
        ])
    }

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(columns).unwrap()
    }

    #[test]
    fn reordered_and_lossless_columns_are_conformed() {
        let names: DictionaryArray<Int32Type> = vec!["a", "b", "a"].into_iter().collect();
        let input = batch(vec![
            (
                "price",
                Arc::new(
                    Decimal128Array::from(vec![1230, 50, -700])
                        .with_precision_and_scale(12, 3)
                        .unwrap(),
                ) as ArrayRef,
            ),
            ("name", Arc::new(names)),
            (
                "at",
                Arc::new(TimestampNanosecondArray::from(vec![
                    1_000, 2_000_000, 3_000,
                ])),
            ),
            ("id", Arc::new(Int64Array::from(vec![1, 2, 3]))),
        ]);
        let out = conform_batch(&input, &table_schema()).unwrap();
        assert_eq!(
            out.schema()
                .fields()
                .iter()
                .map(|f| f.name().as_str())
                .collect::<Vec<_>>(),
            ["id", "name", "at", "price"]
        );
        for (field, expected) in out.schema().fields().iter().zip(table_schema().fields()) {
            assert_eq!(field.data_type(), expected.data_type());
        }
        let at = out
            .column(2)
            .as_any()
            .downcast_ref::<TimestampMicrosecondArray>()
            .unwrap();
        assert_eq!(at.values().to_vec(), [1, 2_000, 3]);
        let price = out
            .column(3)
            .as_any()
            .downcast_ref::<Decimal128Array>()
            .unwrap();
        assert_eq!(price.values().to_vec(), [123, 5, -70]);
        let name = out
            .column(1)
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap();
        assert_eq!(
            name.iter().collect::<Vec<_>>(),
            [Some("a"), Some("b"), Some("a")]
        );
    }

    #[test]
    fn extra_missing_and_lossy_columns_are_refused_by_name() {
        let base = || {
            vec![
                ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
                ("name", Arc::new(LargeStringArray::from(vec!["x", "y"]))),
                ("at", Arc::new(TimestampMicrosecondArray::from(vec![1, 2]))),
                (
                    "price",
                    Arc::new(
                        Decimal128Array::from(vec![100, 200])
                            .with_precision_and_scale(10, 2)
                            .unwrap(),
                    ),
                ),
            ]
        };
        assert!(conform_batch(&batch(base()), &table_schema()).is_ok());

        let mut extra = base();
        extra.push(("extra", Arc::new(Int32Array::from(vec![0, 0]))));
        assert_eq!(
            conform_batch(&batch(extra), &table_schema()).unwrap_err(),
            ConformError::ExtraColumns {
                names: vec!["extra".into()]
            }
        );
        let mut missing = base();
        missing.remove(1);
        assert_eq!(
            conform_batch(&batch(missing), &table_schema()).unwrap_err(),
            ConformError::MissingColumns {
                names: vec!["name".into()]
            }
        );
        let mut nanos = base();
        nanos[2].1 = Arc::new(TimestampNanosecondArray::from(vec![1_000, 1_001]));
        let error = conform_batch(&batch(nanos), &table_schema()).unwrap_err();
        assert!(
            matches!(&error, ConformError::LossyCast { column, row: 1, .. } if column == "at"),
            "{error:?}"
        );
        assert!(error.to_string().contains("column at"), "{error}");
        let mut cents = base();
        cents[3].1 = Arc::new(
            Decimal128Array::from(vec![1000, 1001])
                .with_precision_and_scale(10, 3)
                .unwrap(),
        );
        assert!(matches!(
            conform_batch(&batch(cents), &table_schema()).unwrap_err(),
            ConformError::LossyCast { column, row: 1, .. } if column == "price"
        ));
        let mut too_wide = base();
        too_wide[3].1 = Arc::new(
            Decimal128Array::from(vec![1, 10_i128.pow(20)])
                .with_precision_and_scale(30, 2)
                .unwrap(),
        );
        assert!(matches!(
            conform_batch(&batch(too_wide), &table_schema()).unwrap_err(),
            ConformError::LossyCast { column, row: 1, .. } if column == "price"
        ));
    }

    #[test]
    fn a_value_kind_column_is_passed_through_last() {
        let kinds = || Arc::new(arrow_array::Int8Array::from(vec![0, 3])) as ArrayRef;
        let table_columns = || {
            vec![
                ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
                ("name", Arc::new(StringArray::from(vec!["x", "y"]))),
                ("at", Arc::new(TimestampMicrosecondArray::from(vec![1, 2]))),
                (
                    "price",
                    Arc::new(
                        Decimal128Array::from(vec![100, 200])
                            .with_precision_and_scale(10, 2)
                            .unwrap(),
                    ),
                ),
            ]
        };
        let names = |b: &RecordBatch| {
            b.schema()
                .fields()
                .iter()
                .map(|f| f.name().clone())
                .collect::<Vec<_>>()
        };
        let expected = ["id", "name", "at", "price", VALUE_KIND_FIELD_NAME];

        // Already in the writer's layout: returned as it is.
        let mut last = table_columns();
        last.push((VALUE_KIND_FIELD_NAME, kinds()));
        let out = conform_batch(&batch(last), &table_schema()).unwrap();
        assert_eq!(names(&out), expected);
        assert_eq!(out.column(4).as_ref(), kinds().as_ref());

        // First, with the other columns reordered and one cast: moved last, unchanged.
        let mut first = table_columns();
        first.reverse();
        first[2].1 = Arc::new(LargeStringArray::from(vec!["x", "y"]));
        first.insert(0, (VALUE_KIND_FIELD_NAME, kinds()));
        let out = conform_batch(&batch(first), &table_schema()).unwrap();
        assert_eq!(names(&out), expected);
        assert_eq!(out.column(1).data_type(), &DataType::Utf8);
        assert_eq!(out.column(4).as_ref(), kinds().as_ref());
        assert_eq!(out.num_rows(), 2);
    }

    #[test]
    fn duplicated_column_names_are_refused() {
        let fields = vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
            Field::new("at", DataType::Timestamp(TimeUnit::Microsecond, None), true),
            Field::new("price", DataType::Decimal128(10, 2), true),
            Field::new("id", DataType::Int64, false),
            Field::new("id", DataType::Int64, false),
            Field::new(VALUE_KIND_FIELD_NAME, DataType::Int8, false),
            Field::new(VALUE_KIND_FIELD_NAME, DataType::Int8, false),
        ];
        let columns: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from(vec![1])),
            Arc::new(StringArray::from(vec!["x"])),
            Arc::new(TimestampMicrosecondArray::from(vec![1])),
            Arc::new(
                Decimal128Array::from(vec![100])
                    .with_precision_and_scale(10, 2)
                    .unwrap(),
            ),
            Arc::new(Int64Array::from(vec![2])),
            Arc::new(Int64Array::from(vec![3])),
            Arc::new(arrow_array::Int8Array::from(vec![0])),
            Arc::new(arrow_array::Int8Array::from(vec![0])),
        ];
        let input = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
        let error = conform_batch(&input, &table_schema()).unwrap_err();
        assert_eq!(
            error,
            ConformError::DuplicateColumns {
                names: vec!["id".into(), VALUE_KIND_FIELD_NAME.into()]
            }
        );
        assert!(error.to_string().contains("id, _VALUE_KIND"), "{error}");
    }
}
