//! The commit digest: a SHA-256 over every file of a commit, recorded in the properties of the
//! snapshots a commit with compaction results makes, so a rerun can tell the crash-recovery
//! case from a payload that changed.
//!
//! A commit with compaction results makes two snapshots under one identifier, APPEND then
//! COMPACT. A coordinator that dies between them leaves the APPEND snapshot; its rerun must
//! commit the COMPACT half — but only the very compaction the dead attempt carried. A rerun
//! whose payloads add a compaction to an identifier that committed without one, or carry
//! another compaction, must commit nothing new (rule: a rerun commits nothing new unless it
//! is exactly the crash-recovery case). The APPEND snapshot's digest says what the attempt
//! carried; the rerun compares its own.
//!
//! The digest does not depend on the order of messages or files (payloads arrive in any
//! order): each file's canonical encoding (its list, partition, bucket and the metadata the
//! commit writes) is hashed, the hashes are sorted, and the sorted list is hashed again.

use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::CommitMessage;
use sha2::{Digest, Sha256};

use super::fields::{DATA_LISTS, INDEX_LISTS};
use super::table_state::partition_key;

/// The snapshot property holding the digest of the commit that made the snapshot.
pub(crate) const COMMIT_DIGEST_PROPERTY: &str = "paimon-wire.commit-digest";

/// Appends length-prefixed fields to one file's canonical encoding.
#[derive(Default)]
struct Canonical(Vec<u8>);

impl Canonical {
    fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.0
            .extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.0.extend_from_slice(bytes);
        self
    }
    fn str(&mut self, value: &str) -> &mut Self {
        self.bytes(value.as_bytes())
    }
    fn int(&mut self, value: i64) -> &mut Self {
        self.0.extend_from_slice(&value.to_le_bytes());
        self
    }
    fn optional_int(&mut self, value: Option<i64>) -> &mut Self {
        match value {
            None => self.int(0),
            Some(v) => self.int(1).int(v),
        }
    }
    fn optional_bytes(&mut self, value: Option<&[u8]>) -> &mut Self {
        match value {
            None => self.int(0),
            Some(v) => self.int(1).bytes(v),
        }
    }
    fn finish(&self) -> [u8; 32] {
        Sha256::digest(&self.0).into()
    }
}

fn data_file(place: &Canonical, file: &DataFileMeta) -> [u8; 32] {
    let mut c = Canonical(place.0.clone());
    c.str(&file.file_name)
        .int(i64::from(file.level))
        .int(file.row_count)
        .int(file.file_size)
        .int(file.min_sequence_number)
        .int(file.max_sequence_number)
        .int(file.schema_id)
        .bytes(&file.min_key)
        .bytes(&file.max_key)
        .optional_int(file.delete_row_count)
        .optional_int(file.first_row_id)
        .optional_bytes(file.embedded_index.as_deref())
        .optional_bytes(file.external_path.as_deref().map(str::as_bytes))
        .int(file.extra_files.len() as i64);
    for extra in &file.extra_files {
        c.str(extra);
    }
    c.finish()
}

fn index_file(place: &Canonical, file: &IndexFileMeta) -> [u8; 32] {
    let mut c = Canonical(place.0.clone());
    c.str(&file.index_type)
        .str(&file.file_name)
        .int(file.file_size)
        .int(file.row_count)
        .optional_bytes(file.external_path.as_deref().map(str::as_bytes));
    match &file.deletion_vectors_ranges {
        None => {
            c.int(-1);
        }
        Some(ranges) => {
            c.int(ranges.len() as i64);
            for (name, range) in ranges {
                c.str(name)
                    .int(i64::from(range.offset))
                    .int(i64::from(range.length))
                    .optional_int(range.cardinality);
            }
        }
    }
    c.finish()
}

/// The digest of `messages` (hex), independent of the order of messages and files.
pub(crate) fn commit_digest(messages: &[CommitMessage], partitioned: bool) -> String {
    let mut hashes: Vec<[u8; 32]> = Vec::new();
    for message in messages {
        let place = |list: &str| {
            let mut c = Canonical::default();
            c.str(list)
                .bytes(partition_key(partitioned, &message.partition))
                .int(i64::from(message.bucket));
            c
        };
        let data_lists: [&[DataFileMeta]; 6] = [
            &message.new_files,
            &message.deleted_files,
            &message.new_changelog_files,
            &message.compact_before,
            &message.compact_after,
            &message.compact_changelog_files,
        ];
        for (list, files) in DATA_LISTS.iter().zip(data_lists) {
            let place = place(list);
            hashes.extend(files.iter().map(|file| data_file(&place, file)));
        }
        let index_lists: [&[IndexFileMeta]; 4] = [
            &message.new_index_files,
            &message.deleted_index_files,
            &message.compact_new_index_files,
            &message.compact_deleted_index_files,
        ];
        for (list, files) in INDEX_LISTS.iter().zip(index_lists) {
            let place = place(list);
            hashes.extend(files.iter().map(|file| index_file(&place, file)));
        }
    }
    hashes.sort_unstable();
    let mut all = Sha256::new();
    for hash in &hashes {
        all.update(hash);
    }
    all.finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, rows: i64) -> DataFileMeta {
        let empty_row = vec![0u8; 12];
        let stats =
            || paimon::spec::BinaryTableStats::new(empty_row.clone(), empty_row.clone(), vec![]);
        DataFileMeta {
            file_name: name.to_string(),
            file_size: 1024,
            row_count: rows,
            min_key: empty_row.clone(),
            max_key: empty_row.clone(),
            key_stats: stats(),
            value_stats: stats(),
            min_sequence_number: 0,
            max_sequence_number: 9,
            schema_id: 0,
            level: 0,
            extra_files: vec![],
            creation_time: None,
            delete_row_count: Some(0),
            embedded_index: None,
            file_source: Some(0),
            value_stats_cols: None,
            external_path: None,
            first_row_id: None,
            write_cols: None,
            column_max_sequence_numbers: None,
        }
    }

    #[test]
    fn the_digest_ignores_order_and_sees_every_file_and_list() {
        let mut a = CommitMessage::new(vec![], 0, vec![file("a", 1), file("b", 2)]);
        a.compact_before = vec![file("c", 3)];
        let b = CommitMessage::new(vec![], 1, vec![file("d", 4)]);
        let digest = commit_digest(&[a.clone(), b.clone()], false);
        // Order of messages and of files does not matter.
        let mut reordered = a.clone();
        reordered.new_files.reverse();
        assert_eq!(commit_digest(&[b.clone(), reordered], false), digest);
        // A changed row count, another list, another bucket: another digest.
        let mut changed = a.clone();
        changed.new_files[0].row_count = 9;
        assert_ne!(commit_digest(&[changed, b.clone()], false), digest);
        let mut moved = a.clone();
        moved.compact_after = std::mem::take(&mut moved.compact_before);
        assert_ne!(commit_digest(&[moved, b.clone()], false), digest);
        let mut rebucketed = b.clone();
        rebucketed.bucket = 2;
        assert_ne!(commit_digest(&[a.clone(), rebucketed], false), digest);
        // A file added: another digest.
        let mut more = a.clone();
        more.compact_after.push(file("e", 3));
        assert_ne!(commit_digest(&[more, b], false), digest);
    }
}
