//! The commit digest: a SHA-256 over every file of a commit, recorded in the properties of
//! every snapshot the coordinator publishes, so that whoever finds a commit user's identifier
//! committed can tell whether that snapshot holds this very commit (rule `identifier-owner`,
//! `commit.rs`).
//!
//! Two cases need it. A rerun after a crash: it must report "already committed" only for the
//! payloads the dead attempt committed, and with compaction results (two snapshots, APPEND
//! then COMPACT) commit the COMPACT half only if it is the very compaction the APPEND
//! snapshot recorded. Two coordinators racing with one commit user and identifier (an
//! engine's failover: the old and the new coordinator commit one transaction): the loser's
//! commit returns without publishing, because the paimon crate's identifier filter finds the
//! winner's snapshot, and it must not report that snapshot as its own unless it holds the same
//! commit.
//!
//! The digest does not depend on the order of messages or files (payloads arrive in any
//! order): each file's canonical encoding (its list, partition, bucket and the metadata the
//! commit writes) is hashed, the hashes are sorted, and the sorted list is hashed again.

use std::sync::Arc;

use paimon::spec::{DataFileMeta, IndexFileMeta};
use paimon::table::CommitMessage;
use sha2::{Digest, Sha256};

use super::rules::shared::buckets::partition_key;
use super::rules::shared::fields::{
    COMPACT_BEFORE, COMPACT_NEW_INDEX_FILES, DATA_LISTS, INDEX_LISTS,
};

/// The snapshot property holding the digest of the commit that made the snapshot.
pub(crate) const COMMIT_DIGEST_PROPERTY: &str = "paimon-wire.commit-digest";

/// Feeds length-prefixed fields of one file's canonical encoding to SHA-256 as they come: no
/// buffer, and a file's hash starts from its list's (a clone of the hasher's state).
#[derive(Default, Clone)]
struct Canonical(Sha256);

impl Canonical {
    fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.0.update((bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
        self
    }
    fn str(&mut self, value: &str) -> &mut Self {
        self.bytes(value.as_bytes())
    }
    fn int(&mut self, value: i64) -> &mut Self {
        self.0.update(value.to_le_bytes());
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
    fn finish(self) -> [u8; 32] {
        self.0.finalize().into()
    }
}

fn data_file(place: &Canonical, file: &DataFileMeta) -> [u8; 32] {
    let mut c = place.clone();
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
    let mut c = place.clone();
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

/// Which lists of a commit a digest covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lists {
    /// Every list: what a snapshot records.
    All,
    /// The data increment only (no compaction list): what the APPEND snapshot of a commit
    /// that carried no compaction recorded.
    DataIncrement,
}

/// The digest of `messages` (hex) over `lists`, independent of the order of messages and
/// files.
pub(crate) fn commit_digest(messages: &[CommitMessage], partitioned: bool, lists: Lists) -> String {
    let mut hashes: Vec<[u8; 32]> = Vec::new();
    for message in messages {
        let partition = partition_key(partitioned, &message.partition);
        let place = |list: &str| LeafPlace::new(list, partition, message.bucket);
        let data_lists: [&[DataFileMeta]; 6] = [
            &message.new_files,
            &message.deleted_files,
            &message.new_changelog_files,
            &message.compact_before,
            &message.compact_after,
            &message.compact_changelog_files,
        ];
        for (slot, (list, files)) in DATA_LISTS.iter().zip(data_lists).enumerate() {
            if lists == Lists::DataIncrement && slot >= COMPACT_BEFORE {
                continue;
            }
            let place = place(list);
            hashes.extend(files.iter().map(|file| place.leaf(file)));
        }
        let index_lists: [&[IndexFileMeta]; 4] = [
            &message.new_index_files,
            &message.deleted_index_files,
            &message.compact_new_index_files,
            &message.compact_deleted_index_files,
        ];
        for (slot, (list, files)) in INDEX_LISTS.iter().zip(index_lists).enumerate() {
            if lists == Lists::DataIncrement && slot >= COMPACT_NEW_INDEX_FILES {
                continue;
            }
            let place = place(list);
            hashes.extend(files.iter().map(|file| index_file(&place.0, file)));
        }
    }
    digest_of_leaves(hashes)
}

/// Where data files sit in a commit, for their leaves of the commit digest: a list (one of
/// [`DATA_LISTS`]) of the message at a partition (its [`partition_key`]) and a bucket. Made
/// once per message and list, as [`commit_digest`] makes it; the streamed commit keeps the
/// leaves instead of the messages.
pub(crate) struct LeafPlace(Canonical);

impl LeafPlace {
    /// The place of `list` of the message at `partition` and `bucket`.
    pub(crate) fn new(list: &str, partition: &[u8], bucket: i32) -> Self {
        let mut place = Canonical::default();
        place.str(list).bytes(partition).int(i64::from(bucket));
        Self(place)
    }

    /// The leaf of `file` here: what [`commit_digest`] hashes for it.
    pub(crate) fn leaf(&self, file: &DataFileMeta) -> [u8; 32] {
        data_file(&self.0, file)
    }
}

/// The commit digest (hex) of every file's leaf, in any order: the leaves are sorted and
/// hashed.
pub(crate) fn digest_of_leaves(mut leaves: Vec<[u8; 32]>) -> String {
    leaves.sort_unstable();
    let mut all = Sha256::new();
    for leaf in &leaves {
        all.update(leaf);
    }
    all.finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>()
}

/// One added data or changelog file as a snapshot's manifests name it: its partition, bucket,
/// name, row count and size, hashed to 16 bytes. The same for a payload's file and for the
/// manifest entry a commit made of it (fields a commit may fill in, such as a first row id,
/// are left out).
pub(crate) fn added_file_fingerprint(partition: &[u8], bucket: i32, file: &DataFileMeta) -> u128 {
    let mut c = Canonical::default();
    c.bytes(partition)
        .int(i64::from(bucket))
        .str(&file.file_name)
        .int(file.row_count)
        .int(file.file_size);
    let hash = c.finish();
    let mut low = [0u8; 16];
    low.copy_from_slice(&hash[..16]);
    u128::from_le_bytes(low)
}

/// What a commit is, for telling it from another commit under the same identifier: the
/// digest every snapshot it makes records, and the fingerprints of the data and changelog
/// files it adds (sorted).
pub(crate) struct CommitIdentity {
    /// [`commit_digest`] over every list.
    pub(crate) digest: String,
    /// [`added_file_fingerprint`] of every new data and changelog file, sorted.
    pub(crate) added: Vec<u128>,
    /// Whether the commit only adds data and changelog files (no deletes, no index files,
    /// no compaction): such a commit is in a snapshot that adds every one of its files,
    /// whatever else that snapshot adds.
    pub(crate) adds_only: bool,
}

impl CommitIdentity {
    /// The identity of `messages`. The fingerprints and the digest are independent hashes of
    /// every file: the fingerprints are computed on a thread of their own while the calling
    /// thread computes the digest (on 10^6 files, 0.69 s on one core before).
    pub(crate) fn of(messages: &[CommitMessage], partitioned: bool) -> Self {
        let added_fingerprints = || {
            let mut added: Vec<u128> = messages
                .iter()
                .flat_map(|m| {
                    let partition = partition_key(partitioned, &m.partition);
                    (m.new_files.iter().chain(&m.new_changelog_files))
                        .map(move |f| added_file_fingerprint(partition, m.bucket, f))
                })
                .collect();
            added.sort_unstable();
            added
        };
        let (added, digest) = std::thread::scope(|scope| {
            let added = scope.spawn(added_fingerprints);
            let digest = commit_digest(messages, partitioned, Lists::All);
            let added = added
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (added, digest)
        });
        let adds_only = messages.iter().all(|m| {
            m.deleted_files.is_empty()
                && m.new_index_files.is_empty()
                && m.deleted_index_files.is_empty()
                && !super::rules::shared::check::has_compaction(m)
        });
        Self {
            digest,
            added,
            adds_only,
        }
    }
}

/// [`CommitIdentity::of`], computed on a thread of its own while the commit reads the table
/// (the identifier's status, the table-state rules), which needs the identity only after.
pub(crate) enum PendingIdentity {
    /// Computing: the thread answers once, after releasing its reference to the messages.
    Running(futures::channel::oneshot::Receiver<std::thread::Result<CommitIdentity>>),
    /// Computed on the calling thread (no thread could be started).
    Ready(CommitIdentity),
}

impl PendingIdentity {
    /// Starts computing the identity of `messages`.
    pub(crate) fn start(messages: &Arc<Vec<CommitMessage>>, partitioned: bool) -> Self {
        let shared = Arc::clone(messages);
        let (sender, receiver) = futures::channel::oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("paimon-wire-commit-identity".into())
            .spawn(move || {
                let identity = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    CommitIdentity::of(&shared, partitioned)
                }));
                // Released before answering: the commit that awaits the answer then holds the
                // only reference, and takes the messages back without copying them.
                drop(shared);
                // The commit stopped waiting (it failed before needing the identity).
                let _ = sender.send(identity);
            });
        match spawned {
            Ok(_) => Self::Running(receiver),
            Err(_) => Self::Ready(CommitIdentity::of(messages, partitioned)),
        }
    }

    /// The identity of the `messages` it was started on (given again, for the case its
    /// thread ended without answering).
    pub(crate) async fn finish(
        self,
        messages: &[CommitMessage],
        partitioned: bool,
    ) -> CommitIdentity {
        match self {
            Self::Ready(identity) => identity,
            Self::Running(receiver) => match receiver.await {
                Ok(Ok(identity)) => identity,
                // Hashing does not panic on validated messages; if it did, the panic goes to
                // the caller as it would without the thread.
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
                Err(futures::channel::oneshot::Canceled) => {
                    CommitIdentity::of(messages, partitioned)
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::data_file as file;

    #[test]
    fn the_digest_ignores_order_and_sees_every_file_and_list() {
        let mut a = CommitMessage::new(vec![], 0, vec![file("a", 1), file("b", 2)]);
        a.compact_before = vec![file("c", 3)];
        let b = CommitMessage::new(vec![], 1, vec![file("d", 4)]);
        let digest = commit_digest(&[a.clone(), b.clone()], false, Lists::All);
        // Order of messages and of files does not matter.
        let mut reordered = a.clone();
        reordered.new_files.reverse();
        assert_eq!(
            commit_digest(&[b.clone(), reordered], false, Lists::All),
            digest
        );
        // A changed row count, another list, another bucket: another digest.
        let mut changed = a.clone();
        changed.new_files[0].row_count = 9;
        assert_ne!(
            commit_digest(&[changed, b.clone()], false, Lists::All),
            digest
        );
        let mut moved = a.clone();
        moved.compact_after = std::mem::take(&mut moved.compact_before);
        assert_ne!(
            commit_digest(&[moved, b.clone()], false, Lists::All),
            digest
        );
        let mut rebucketed = b.clone();
        rebucketed.bucket = 2;
        assert_ne!(
            commit_digest(&[a.clone(), rebucketed], false, Lists::All),
            digest
        );
        // A file added: another digest.
        let mut more = a.clone();
        more.compact_after.push(file("e", 3));
        assert_ne!(commit_digest(&[more, b], false, Lists::All), digest);
    }
}
