//! What a streamed commit keeps of its files once their messages are dropped: a name key per
//! file, the per-bucket state the rules read, running sums, and the digest's leaves and the
//! fingerprints the rule `identifier-owner` reads (see `docs/SCALE.md`, "What is kept per
//! file"). The rules decide on it (`rules::stage_streamed`, `table_state`'s streamed
//! checks); this module only keeps it.
//!
//! A file name is kept as a keyed 128-bit hash ([`NameKeys`]): two SipHash-1-3 states with
//! random keys of this process, so a payload's author cannot aim for a collision, and an
//! accidental one among 10^7 names has a probability of about 10^-25. A collision can only
//! make a rule refuse (a file taken for one seen before), never let a file through twice.

use std::collections::hash_map::RandomState;
use std::collections::HashMap;
use std::hash::BuildHasher;

use paimon::spec::DataFileMeta;

use super::buckets::BucketKey;

/// The keyed hash of a file name.
#[derive(Clone)]
pub(crate) struct NameKeys([RandomState; 2]);

impl NameKeys {
    /// A hasher with fresh random keys.
    pub(crate) fn new() -> Self {
        Self([RandomState::new(), RandomState::new()])
    }

    /// The 128-bit key of `name`.
    pub(crate) fn key(&self, name: &str) -> u128 {
        let [high, low] = &self.0;
        (u128::from(high.hash_one(name)) << 64) | u128::from(low.hash_one(name))
    }
}

/// Where a file was first seen, and what it was there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileSeen {
    /// Its bucket ([`StreamedFacts::bucket_id`]).
    pub(crate) bucket: u32,
    /// Its list: an index into `fields::DATA_LISTS`.
    pub(crate) list: u8,
    /// Its leaf of the commit digest, by position in [`StreamedFacts::leaves`]: the same leaf
    /// is the same file in the same list, partition and bucket, with the same metadata.
    pub(crate) leaf: u32,
    /// The payload it came in, counting from 0 in the order added.
    pub(crate) payload: u32,
    /// The message of that payload it came in.
    pub(crate) message: u32,
    /// Whether the file is directly in its bucket's directory (no external path, no extra
    /// files): rule `missing-file` then finds it by listing that directory at commit.
    pub(crate) in_directory: bool,
}

/// A file of a bucket that a streamed check may have to name: its name, and the number the
/// check compares.
#[derive(Debug, Clone)]
pub(crate) struct NamedNumber {
    /// The file name.
    pub(crate) file_name: String,
    /// The number (a sequence number).
    pub(crate) value: i64,
    /// Its payload and message ([`FileSeen::payload`], [`FileSeen::message`]).
    pub(crate) payload: u32,
    /// See [`Self::payload`].
    pub(crate) message: u32,
}

/// What a streamed commit keeps of one bucket it writes.
#[derive(Debug, Clone)]
pub(crate) struct BucketFacts {
    /// The bucket.
    pub(crate) key: BucketKey,
    /// The payload that wrote new data files into it first (rule of one writer per bucket).
    pub(crate) writer: Option<(u32, u32)>,
    /// Its new data file with the lowest `min_sequence_number` (rule `sequence-numbers`).
    pub(crate) lowest: Option<NamedNumber>,
    /// Its new data file with the highest `max_sequence_number` (rule `bounds`).
    pub(crate) highest: Option<NamedNumber>,
    /// How many of its files are directly in its directory ([`FileSeen::in_directory`]).
    pub(crate) in_directory: u64,
}

/// The compact state of a streamed commit (see the module docs).
pub(crate) struct StreamedFacts {
    names: NameKeys,
    /// Each file's name key, and where it was first seen.
    files: HashMap<u128, FileSeen>,
    bucket_ids: HashMap<BucketKey, u32>,
    buckets: Vec<BucketFacts>,
    /// The leaf of the commit digest of every file kept.
    leaves: Vec<[u8; 32]>,
    /// The fingerprint (`digest::added_file_fingerprint`) of every file kept.
    fingerprints: Vec<u128>,
    /// The rows of every file kept, summed with checked arithmetic (`None` past `i64`).
    added_rows: Option<i64>,
}

impl StreamedFacts {
    /// No file yet.
    pub(crate) fn new() -> Self {
        Self {
            names: NameKeys::new(),
            files: HashMap::new(),
            bucket_ids: HashMap::new(),
            buckets: Vec::new(),
            leaves: Vec::new(),
            fingerprints: Vec::new(),
            added_rows: Some(0),
        }
    }

    /// The name keys' hasher.
    pub(crate) fn names(&self) -> &NameKeys {
        &self.names
    }

    /// The number of bucket `key`, given on first sight.
    pub(crate) fn bucket_id(&mut self, key: &BucketKey) -> u32 {
        if let Some(&id) = self.bucket_ids.get(key) {
            return id;
        }
        let id = u32::try_from(self.buckets.len()).unwrap_or(u32::MAX);
        self.bucket_ids.insert(key.clone(), id);
        self.buckets.push(BucketFacts {
            key: key.clone(),
            writer: None,
            lowest: None,
            highest: None,
            in_directory: 0,
        });
        id
    }

    /// The number of bucket `key`, if a file of it was kept.
    pub(crate) fn known_bucket(&self, key: &BucketKey) -> Option<u32> {
        self.bucket_ids.get(key).copied()
    }

    /// Bucket `id`.
    pub(crate) fn bucket_mut(&mut self, id: u32) -> &mut BucketFacts {
        &mut self.buckets[id as usize]
    }

    /// Every bucket written, in the order first seen.
    pub(crate) fn buckets(&self) -> &[BucketFacts] {
        &self.buckets
    }

    /// Where the file with name key `key` was first seen, if it was.
    pub(crate) fn seen(&self, key: u128) -> Option<FileSeen> {
        self.files.get(&key).copied()
    }

    /// Whether `leaf` is the leaf kept at `position`.
    pub(crate) fn leaf_is(&self, position: u32, leaf: &[u8; 32]) -> bool {
        self.leaves.get(position as usize) == Some(leaf)
    }

    /// Keeps a file seen for the first time: its name key, leaf, fingerprint and rows.
    /// `seen.leaf` is set here.
    pub(crate) fn keep(
        &mut self,
        key: u128,
        mut seen: FileSeen,
        leaf: [u8; 32],
        fingerprint: u128,
        file: &DataFileMeta,
    ) {
        seen.leaf = u32::try_from(self.leaves.len()).unwrap_or(u32::MAX);
        if seen.in_directory {
            self.buckets[seen.bucket as usize].in_directory += 1;
        }
        self.files.insert(key, seen);
        self.leaves.push(leaf);
        self.fingerprints.push(fingerprint);
        self.added_rows = self
            .added_rows
            .and_then(|rows| rows.checked_add(file.row_count));
    }

    /// How many files are kept.
    pub(crate) fn file_count(&self) -> usize {
        self.leaves.len()
    }

    /// The rows of every file kept (`None` if the sum overflows `i64`).
    pub(crate) fn added_rows(&self) -> Option<i64> {
        self.added_rows
    }

    /// Hands over the digest's leaves and the fingerprints, sorted, leaving none.
    pub(crate) fn take_identity(&mut self) -> (Vec<[u8; 32]>, Vec<u128>) {
        let leaves = std::mem::take(&mut self.leaves);
        let mut fingerprints = std::mem::take(&mut self.fingerprints);
        fingerprints.sort_unstable();
        (leaves, fingerprints)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_keys_are_stable_within_a_hasher_and_differ_between_names() {
        let names = NameKeys::new();
        assert_eq!(names.key("data-1.parquet"), names.key("data-1.parquet"));
        assert_ne!(names.key("data-1.parquet"), names.key("data-2.parquet"));
        // Another process (another hasher) keys the same name otherwise.
        assert_ne!(
            NameKeys::new().key("data-1.parquet"),
            names.key("data-1.parquet")
        );
    }
}
