//! The context of the checks of one message ([`Check`]: the table's rules and where the
//! message is, for error reports), and what every family asks of a message's lists.

use super::fields::{
    MessageFields, COMPACT_BEFORE, COMPACT_NEW_INDEX_FILES, DATA_LISTS, INDEX_LISTS,
};
use super::table_rules::TableRules;
use crate::coordinator::error::{Rule, ValidationError};

/// The checks of one message, carrying where the message is for error reports.
pub(crate) struct Check<'a> {
    pub(crate) rules: &'a TableRules,
    pub(crate) message_index: usize,
    /// The message's partition and bucket, which fix where its files may be.
    pub(crate) partition: &'a [u8],
    pub(crate) bucket: i32,
    /// [`TableRules::relative_bucket_path`] of the message, computed on first use.
    pub(crate) relative_bucket_path: std::cell::OnceCell<Option<String>>,
}

impl<'a> Check<'a> {
    /// The checks of message `message_index`, of `partition` and `bucket`, against `rules`.
    pub(crate) fn new(
        rules: &'a TableRules,
        message_index: usize,
        partition: &'a [u8],
        bucket: i32,
    ) -> Self {
        Self {
            rules,
            message_index,
            partition,
            bucket,
            relative_bucket_path: std::cell::OnceCell::new(),
        }
    }

    /// The rules of the table the message is checked against.
    pub(crate) fn rules(&self) -> &TableRules {
        self.rules
    }

    /// A refusal of this message under `rule`.
    pub(crate) fn fail(&self, field: String, rule: Rule, reason: String) -> ValidationError {
        ValidationError {
            message_index: self.message_index,
            field,
            rule,
            reason,
        }
    }
}
/// The path of one file in a message's list (`new_files[3]`), formatted only when a check
/// fails: validation runs for every file of every payload, and almost all pass.
pub(crate) struct ListElement<'a>(pub(crate) &'a str, pub(crate) usize);

impl std::fmt::Display for ListElement<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}[{}]", self.0, self.1)
    }
}

/// The compaction lists of `message` with their lengths, in wire order.
pub(crate) fn compaction_lists<M: MessageFields>(
    message: &M,
) -> impl Iterator<Item = (&'static str, usize)> + '_ {
    let data = (COMPACT_BEFORE..DATA_LISTS.len())
        .map(|slot| (DATA_LISTS[slot], message.data_file_count(slot)));
    let index = (COMPACT_NEW_INDEX_FILES..INDEX_LISTS.len())
        .map(|slot| (INDEX_LISTS[slot], message.index_file_count(slot)));
    data.chain(index)
}

/// Whether `message` carries a compaction result.
pub(crate) fn has_compaction<M: MessageFields>(message: &M) -> bool {
    compaction_lists(message).any(|(_, n)| n > 0)
}
