//! One worker's payloads split for a size-bounded transport ([`crate::split`]), put back
//! together.
//!
//! A split payload does not know its siblings: the engine sends each with its index and the
//! count of the set, as it sends the serializer version. From those, `order` proves the set
//! whole before anything is decoded:
//!
//! - every index below the count is present: a missing payload is refused, naming the gaps,
//!   because committing the rest would commit part of a worker's write as if it were all;
//! - one index delivered twice with the same bytes is kept once (an engine's retry);
//!   with other bytes it is refused, as the coordinator cannot know which is true;
//! - every payload names the same count.
//!
//! The payloads are then decoded in index order as one worker's payload, so a primary-key
//! bucket whose files span two payloads is one writer's, not two.

use std::collections::BTreeMap;
use std::fmt;

/// How many missing indexes [`PartsError::Missing`] lists.
pub const SHOWN_MISSING: usize = 10;

/// One payload of a split set, as the engine delivers it.
#[derive(Debug, Clone, Copy)]
pub struct PayloadPart<'a> {
    /// Its position in the set, from 0.
    pub index: u32,
    /// How many payloads the set has.
    pub count: u32,
    /// The payload: a standard `serializeList`.
    pub bytes: &'a [u8],
}

/// Why a set of split payloads is not one whole set.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PartsError {
    /// No payload was given.
    Empty,
    /// Two payloads name different counts for their set.
    CountsDisagree {
        /// The count of the first payload.
        first: u32,
        /// Another count.
        other: u32,
    },
    /// A payload's index is not below the set's count.
    IndexOutOfRange {
        /// The index.
        index: u32,
        /// The count.
        count: u32,
    },
    /// Payloads of the set are missing.
    Missing {
        /// The count of the set.
        count: u32,
        /// How many are missing.
        missing: u32,
        /// The first missing indexes, ascending (at most [`SHOWN_MISSING`]).
        first_missing: Vec<u32>,
    },
    /// One index was delivered twice with different bytes.
    Conflicting {
        /// The index.
        index: u32,
    },
}

impl fmt::Display for PartsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartsError::Empty => write!(f, "no payload of the split set was given"),
            PartsError::CountsDisagree { first, other } => write!(
                f,
                "the payloads of one split set name different counts ({first} and {other})"
            ),
            PartsError::IndexOutOfRange { index, count } => write!(
                f,
                "payload index {index} is not below the set's count of {count}"
            ),
            PartsError::Missing {
                count,
                missing,
                first_missing,
            } => {
                let shown: Vec<String> = first_missing.iter().map(u32::to_string).collect();
                let more = if *missing as usize > first_missing.len() {
                    ", …"
                } else {
                    ""
                };
                write!(
                    f,
                    "{missing} of the set's {count} payloads are missing (index {}{more}); \
                     committing the others would commit part of the worker's write as if it \
                     were all",
                    shown.join(", ")
                )
            }
            PartsError::Conflicting { index } => write!(
                f,
                "payload index {index} was delivered twice with different bytes"
            ),
        }
    }
}

impl std::error::Error for PartsError {}

/// The payloads of a whole set in index order, one copy of each (see the module
/// documentation).
pub(crate) fn order<'a>(parts: &[PayloadPart<'a>]) -> Result<Vec<&'a [u8]>, PartsError> {
    let count = parts.first().ok_or(PartsError::Empty)?.count;
    // Keyed by index, not a vector of `count` slots: the count comes from another machine.
    let mut slots: BTreeMap<u32, &'a [u8]> = BTreeMap::new();
    for part in parts {
        if part.count != count {
            return Err(PartsError::CountsDisagree {
                first: count,
                other: part.count,
            });
        }
        if part.index >= count {
            return Err(PartsError::IndexOutOfRange {
                index: part.index,
                count,
            });
        }
        match slots.get(&part.index) {
            Some(seen) if *seen != part.bytes => {
                return Err(PartsError::Conflicting { index: part.index })
            }
            Some(_) => {}
            None => {
                slots.insert(part.index, part.bytes);
            }
        }
    }
    let present = slots.len() as u32;
    if present < count {
        let first_missing = (0..count)
            .filter(|index| !slots.contains_key(index))
            .take(SHOWN_MISSING)
            .collect();
        return Err(PartsError::Missing {
            count,
            missing: count - present,
            first_missing,
        });
    }
    Ok(slots.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(index: u32, count: u32, bytes: &[u8]) -> PayloadPart<'_> {
        PayloadPart {
            index,
            count,
            bytes,
        }
    }

    #[test]
    fn any_order_gives_index_order() {
        let parts = [part(2, 3, b"c"), part(0, 3, b"a"), part(1, 3, b"b")];
        assert_eq!(order(&parts).unwrap(), vec![&b"a"[..], b"b", b"c"]);
    }

    #[test]
    fn a_payload_delivered_twice_is_kept_once() {
        let parts = [part(0, 2, b"a"), part(1, 2, b"b"), part(0, 2, b"a")];
        assert_eq!(order(&parts).unwrap(), vec![&b"a"[..], b"b"]);
    }

    #[test]
    fn a_missing_payload_is_named() {
        let parts = [part(0, 4, b"a"), part(2, 4, b"c")];
        let error = order(&parts).unwrap_err();
        assert_eq!(
            error,
            PartsError::Missing {
                count: 4,
                missing: 2,
                first_missing: vec![1, 3]
            }
        );
        assert!(error
            .to_string()
            .contains("2 of the set's 4 payloads are missing (index 1, 3)"));
    }

    #[test]
    fn the_same_index_with_other_bytes_is_refused() {
        let parts = [part(0, 2, b"a"), part(0, 2, b"x"), part(1, 2, b"b")];
        assert_eq!(
            order(&parts).unwrap_err(),
            PartsError::Conflicting { index: 0 }
        );
    }

    #[test]
    fn counts_must_agree_and_indexes_fit() {
        assert_eq!(
            order(&[part(0, 2, b"a"), part(1, 3, b"b")]).unwrap_err(),
            PartsError::CountsDisagree { first: 2, other: 3 }
        );
        assert_eq!(
            order(&[part(2, 2, b"a")]).unwrap_err(),
            PartsError::IndexOutOfRange { index: 2, count: 2 }
        );
        assert_eq!(order(&[]).unwrap_err(), PartsError::Empty);
        assert!(matches!(
            order(&[part(0, 0, b"a")]).unwrap_err(),
            PartsError::IndexOutOfRange { index: 0, count: 0 }
        ));
    }

    #[test]
    fn a_huge_count_from_another_machine_allocates_nothing_for_it() {
        let error = order(&[part(0, u32::MAX, b"a")]).unwrap_err();
        match &error {
            PartsError::Missing {
                missing,
                first_missing,
                ..
            } => {
                assert_eq!(*missing, u32::MAX - 1);
                assert_eq!(first_missing, &(1..=10).collect::<Vec<u32>>());
            }
            other => panic!("expected Missing, got {other:?}"),
        }
        assert!(error
            .to_string()
            .contains("(index 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …)"));
    }
}
