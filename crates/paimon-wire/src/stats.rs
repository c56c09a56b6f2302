//! Building the `paimon` crate's `BinaryTableStats`, whose type the crate does not export.
//!
//! `DataFileMeta::key_stats` and `value_stats` have a public field type that lives in a
//! private module, so it can't be named or constructed directly. It does implement
//! `serde::Deserialize`, and a generic function whose type parameter is inferred from the
//! field it is assigned to can call that without naming it. [`table_stats`] feeds the three
//! parts through a minimal deserializer that moves the vectors in without copying them.

use serde::de::value::Error as ValueError;
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, IntoDeserializer, SeqAccess, Visitor,
};
use serde::forward_to_deserialize_any;

/// Builds a `BinaryTableStats` (inferred as `T`) from serialized min and max value rows and
/// per-column null counts.
///
/// ```
/// use paimon_wire::paimon::spec::DataFileMeta;
/// # fn f(mut file: DataFileMeta) {
/// file.value_stats = paimon_wire::table_stats(vec![0; 12], vec![0; 12], vec![Some(0)]);
/// assert_eq!(file.value_stats.null_counts(), &vec![Some(0)]);
/// # }
/// ```
pub fn table_stats<T: DeserializeOwned>(
    min_values: Vec<u8>,
    max_values: Vec<u8>,
    null_counts: Vec<Option<i64>>,
) -> T {
    table_stats_from_counts(min_values, max_values, null_counts.into_iter())
}

/// [`table_stats`] with the null counts taken from an iterator, so a decoder can hand them
/// over straight from the payload: the stats' own vector of counts is the only one built.
pub(crate) fn table_stats_from_counts<T, I>(
    min_values: Vec<u8>,
    max_values: Vec<u8>,
    null_counts: I,
) -> T
where
    T: DeserializeOwned,
    I: ExactSizeIterator<Item = Option<i64>>,
{
    T::deserialize(Part::Stats(StatsFields {
        min: Some(min_values),
        max: Some(max_values),
        counts: Some(null_counts),
    }))
    .expect("BinaryTableStats is a struct of two byte strings and a list of counts")
}

/// One piece of a stats value, shaped the way `BinaryTableStats`'s derived `Deserialize`
/// asks for it.
enum Part<I> {
    /// The whole struct, read as a sequence of its three fields.
    Stats(StatsFields<I>),
    Bytes(Vec<u8>),
    /// `_NULL_COUNTS` is read as `Option<Vec<Option<i64>>>`.
    SomeCounts(I),
    Counts(I),
}

/// One element of `_NULL_COUNTS`, an `Option<i64>`. A type of its own rather than a variant
/// of [`Part`], so that reading an element compiles down to a branch on the option.
struct Count(Option<i64>);

impl<'de> Deserializer<'de> for Count {
    type Error = ValueError;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self.0 {
            None => visitor.visit_none(),
            Some(v) => visitor.visit_some(v.into_deserializer()),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct StatsFields<I> {
    min: Option<Vec<u8>>,
    max: Option<Vec<u8>>,
    counts: Option<I>,
}

impl<'de, I: ExactSizeIterator<Item = Option<i64>>> SeqAccess<'de> for StatsFields<I> {
    type Error = ValueError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, ValueError> {
        let part = if let Some(min) = self.min.take() {
            Part::Bytes(min)
        } else if let Some(max) = self.max.take() {
            Part::Bytes(max)
        } else if let Some(counts) = self.counts.take() {
            Part::SomeCounts(counts)
        } else {
            return Ok(None);
        };
        seed.deserialize(part).map(Some)
    }
}

struct CountElements<I>(I);

impl<'de, I: ExactSizeIterator<Item = Option<i64>>> SeqAccess<'de> for CountElements<I> {
    type Error = ValueError;

    #[inline]
    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, ValueError> {
        match self.0.next() {
            Some(count) => seed.deserialize(Count(count)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

impl<'de, I: ExactSizeIterator<Item = Option<i64>>> Deserializer<'de> for Part<I> {
    type Error = ValueError;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ValueError> {
        match self {
            Part::Stats(fields) => visitor.visit_seq(fields),
            Part::Bytes(bytes) => visitor.visit_byte_buf(bytes),
            Part::SomeCounts(counts) => visitor.visit_some(Part::Counts(counts)),
            Part::Counts(counts) => visitor.visit_seq(CountElements(counts)),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}
