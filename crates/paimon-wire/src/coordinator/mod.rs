//! The coordinator: one process that takes the commit-message payloads of many workers,
//! checks them against the table it is bound to, merges them, and commits them once.
//!
//! ```text
//! bytes ─► Coordinator::deserialize ─► BoundMessages ─► Coordinator::merge ─► Coordinator::commit
//!           (decode + validate + bind)                   (dedup / conflicts)   (exactly once per id)
//! ```
//!
//! ```no_run
//! # async fn run(payloads: Vec<Vec<u8>>) -> Result<(), paimon_wire::coordinator::CoordinatorError> {
//! use paimon_wire::coordinator::{open_table, Binding, CommitOutcome, Coordinator};
//! use paimon_wire::SerializerVersion;
//!
//! let table = open_table("/warehouse", "db.orders").await?;
//! let coordinator = Coordinator::bind(table, Binding::append("job-42")).await?;
//! let mut parts = Vec::new();
//! for payload in &payloads {
//!     parts.push(coordinator.deserialize(SerializerVersion::CURRENT, payload)?);
//! }
//! let merged = coordinator.merge(parts)?;
//! match coordinator.commit(merged, 7).await? {
//!     CommitOutcome::Committed { snapshot_id } => println!("snapshot {snapshot_id}"),
//!     CommitOutcome::AlreadyCommitted { snapshot_id } => println!("done before: {snapshot_id:?}"),
//!     CommitOutcome::NothingToCommit => println!("no files"),
//! }
//! # Ok(()) }
//! ```
//!
//! # Staged commits
//!
//! [`Coordinator::begin`] starts a commit whose payloads are added one at a time
//! ([`StagedCommit::add_payload`]) and committed once ([`StagedCommit::commit`]), with the
//! checks and answers of `deserialize`, `merge` and `commit`. When the payloads only add
//! files (append mode, no row tracking, no dynamic buckets) it is streamed: each payload's
//! files are written into delta manifests as it arrives and its messages dropped, so a commit
//! of 10^6 files holds about 300 MB instead of 1.6 GB (`docs/SCALE.md`).
//!
//! ```no_run
//! # async fn run(payloads: Vec<Vec<u8>>) -> Result<(), paimon_wire::coordinator::CoordinatorError> {
//! use paimon_wire::coordinator::{open_table, Binding, Coordinator};
//! use paimon_wire::SerializerVersion;
//!
//! let table = open_table("/warehouse", "db.orders").await?;
//! let coordinator = Coordinator::bind(table, Binding::append("job-42")).await?;
//! let mut staged = coordinator.begin(7);
//! for payload in &payloads {
//!     staged.add_payload(SerializerVersion::CURRENT, payload).await?;
//! }
//! let outcome = staged.commit().await?;
//! # let _ = outcome; Ok(()) }
//! ```
//!
//! # Trust model
//!
//! A payload is untrusted input: it comes over the network from a worker that may be buggy,
//! stale, or a retry of itself. Before anything is committed the coordinator checks every
//! message against the **bound table** (its schema, options and schema history, read once
//! when the coordinator is bound):
//!
//! - **partition**: the partition row has one field per partition key, every field decodes
//!   as the key's type, no NOT NULL key is null, and the bytes are the canonical encoding
//!   of the decoded values — what Java's `BinaryRowWriter` writes, or what the paimon
//!   crate's writer writes (the two differ only for a null DECIMAL with precision > 18 or
//!   TIMESTAMP with precision > 3, where Java reserves space). Paimon compares partitions
//!   as bytes, so any other encoding would create a second copy of an existing partition;
//! - **bucket**: fixed tables `0..bucket-1`; dynamic-bucket primary-key tables
//!   `0..32767` (Java's range, [`validate::MAX_DYNAMIC_BUCKETS`]);
//!   bucket-unaware append tables (`bucket = -1`) `0`; postpone tables (`bucket = -2`)
//!   `-2`, or `0..total_buckets-1` for postpone fixed-bucket writes (see below);
//! - **total-buckets**: absent or equal to the table's `bucket` option (Java writers send
//!   it); for postpone fixed-bucket writes present, positive and the same for every message
//!   of one partition;
//! - **plain-file-name**: data, changelog, extra, deletion-vector and index file names are
//!   plain names — not empty, no `/`, `\` or NUL, not `.` or `..` — so no file can point
//!   outside its bucket directory;
//! - **external-path**: a data or index file's external path must be exactly a root listed
//!   in the table's `data-file.external-paths` + the message's own partition and bucket
//!   directories (+ four entropy directories when the strategy is `entropy-inject`) + the
//!   file name, or for an index file `global-index.external-path` + the file name. Paths are
//!   compared in the spelling the reader resolves: `file:///x` and `file:/x` are one path,
//!   nothing else is normalized (scheme case, `//`, `.`/`..` never match). A table with no
//!   external roots accepts no external path;
//! - **schema-id**: every file's schema id exists in the table's schema history;
//! - **non-negative**: sizes, row counts, delete counts (at most the row count), levels,
//!   first row ids, deletion-vector offsets, lengths and cardinalities, `check_from_snapshot`;
//! - **index-type**: `DELETION_VECTORS`, `HASH`, or a global index type the paimon crate
//!   knows (`btree`, `bitmap`, `multivalue`, `fm`, `full-text`, `lumina`, `ivf-*`,
//!   `diskann`);
//! - **compact-increment**: compaction results (`compact_before`, `compact_after`, compact
//!   changelog and index files) are taken by default — Java writers compact by default — and
//!   committed as Java's committer does (see *Compaction* below); a binding that refuses them
//!   ([`Binding::without_compaction`]) and overwrite mode refuse them by this rule. Their
//!   files pass every per-file rule above;
//! - **compact-levels**: a file upgraded in place (in `compact_before` and `compact_after`)
//!   moves to a higher level, and a primary-key table's compaction result is not at level 0
//!   (postpone tables exempt);
//! - **change-kind**: unless the binding opts in ([`Binding::with_deletes`]), no deleted data
//!   files, no deletion-vector index files (added or deleted) and no deleted index files
//!   other than a HASH index the same message replaces: the binding, not the payload,
//!   decides whether a commit may remove rows;
//! - **bounds**: per file, row counts ≤ 2^48, sizes ≤ 2^50, sequence numbers and
//!   `first_row_id + row_count` within ±2^62, deletion-vector ranges inside their index
//!   file, postpone fixed-bucket `total_buckets` ≤ 65,536 (see [`validate`]'s constants);
//!   a global index's `index_field_id` must be a field of the schema (**schema-id**), and
//!   global index types must be spelled in lower case as Paimon writes them.
//!
//! At commit time, against the latest snapshot and only for the partitions and buckets the
//! messages touch, the coordinator also checks the table's state: an added data, changelog
//! or index file is not already live at any level (**already-live**), a deleted file is
//! live at the level named (**not-live**), one file has one role (**two-roles**), and the
//! snapshot's record count and next row id plus every added row stay within 2^62 with
//! checked arithmetic (**bounds**). On a primary-key table ordered by sequence number, an
//! append commit's new files start above every live file of their bucket and an overwrite
//! commit's start at 0 (**sequence-numbers**): the payload does not carry the writer's mode,
//! its sequence numbers do. For compaction results: each `compact_before` file is
//! live at the level named or added at that level by the same commit (**not-live**), each
//! `compact_after` and compact changelog file is new unless upgraded in place
//! (**already-live**) and exists in storage with its extra files (**missing-file**), and
//! compact index files are checked as the other index files. A refusal commits nothing.
//!
//! What the coordinator passes on as given: `check_from_snapshot` beyond its sign (the
//! snapshot from which the paimon crate checks write conflicts; it takes the smallest one).
//!
//! What comes from the coordinator and never from the payload: the table, the
//! `commit_user`, append or overwrite, and the fixed-bucket overwrite flag (Java's wire
//! format does not carry it).
//!
//! What the coordinator **cannot** check: that new files exist or hold what the metadata
//! says (sizes, row counts, statistics, min/max keys, sequence numbers are taken on trust —
//! a worker that lies about row counts corrupts statistics, not the commit), that a worker
//! wrote the rows it was given, that a worker wrote each key into the bucket the key
//! belongs to, or that a
//! payload is from a worker of this job at all (authenticate the transport; the optional
//! [`crate::envelope`] detects corruption, not forgery). A commit also takes the paimon
//! crate's own checks (file conflicts with the latest snapshot, bucket ownership for
//! postpone fixed-bucket writes).
//!
//! What it checks across payloads, in [`Coordinator::merge`]: a file named twice is the same
//! file ([`MergeConflict`]), and each bucket of a primary-key table that gets new level-0
//! files gets them from one payload ([`SharedBucket`]; postpone tables are exempt), so
//! two writers of one bucket cannot make the winning row of a key arbitrary.
//!
//! # Postpone fixed-bucket tables
//!
//! A postpone table (`bucket = -2`) is written either by the standard writer (messages with
//! bucket `-2`) or by the paimon crate's postpone fixed-bucket writer
//! (`Table::new_postpone_fixed_bucket_write_builder`: bucket `0..n-1` and
//! `total_buckets = n`). Both travel as the same Java bytes, so the coordinator is told
//! which one it commits ([`WriteKind`]) and refuses the other by name: a standard
//! coordinator rejects a message with `total_buckets > 0` on a postpone table, a
//! fixed-bucket coordinator rejects one without it. In overwrite mode a fixed-bucket
//! coordinator marks each message for the fixed-bucket overwrite path, as
//! `CommitMessage::deserialize_for_fixed_bucket_overwrite` does.
//!
//! # Compaction
//!
//! A commit whose messages carry compaction results makes two snapshots under its one
//! identifier, as Java's `FileStoreCommitImpl#commit` does: APPEND (or OVERWRITE, when the
//! data increment deletes) for the new files, then COMPACT for the compaction, which the
//! paimon crate checks as Java does — every file it removes must still be live in the latest
//! snapshot, or the COMPACT part fails (a lost publication race is retried; files removed by
//! a concurrent commit are an error). [`CommitOutcome::Committed`] then names the COMPACT
//! snapshot. Who compacts a table that only native (paimon crate) workers write: nobody in
//! this library — run a Java dedicated compaction job (see the README).
//!
//! # Exactly once
//!
//! [`Coordinator::commit`] takes a commit identifier. Identifiers must increase for one
//! `commit_user`; a snapshot records the user and identifier it committed. Committing an
//! identifier that a snapshot of this user already carries (or that is below the user's
//! latest identifier) commits nothing and returns [`CommitOutcome::AlreadyCommitted`], so a
//! coordinator that crashed mid-commit can rerun the same commit safely. With compaction
//! results, the identifier is committed once its COMPACT snapshot is there: a rerun after a
//! crash between the APPEND and the COMPACT snapshot commits the COMPACT part only (Java's
//! committer would drop it). [`Coordinator::commit_status`] does not see the messages, so it
//! reports an identifier with only its APPEND snapshot as committed.
//!
//! # Outcome unknown
//!
//! A commit whose snapshot request went unanswered (a timeout, a lost answer) fails with
//! [`CoordinatorError::OutcomeUnknown`] ([`CoordinatorError::outcome_unknown`]): its snapshot
//! may be in the table, or may land later. Every other error is known to have committed
//! nothing. After an unknown outcome, commit the same messages again with the same
//! identifier: that reports [`CommitOutcome::AlreadyCommitted`] if the snapshot landed.
//! [`Coordinator::abort`] refuses to delete anything while one of the coordinator's commits
//! has an unknown outcome younger than [`Coordinator::outcome_horizon`], the time after which
//! none of its requests can still be applied; after that, it reads the identifier's status and
//! keeps every file a snapshot references. The record is the coordinator's own: an abort from
//! another process knows nothing of it, so wait out the horizon before aborting there.

mod batch;
mod binding;
mod commit;
mod digest;
mod error;
mod outcome;
pub mod parts;
pub mod rules;
mod staged;
pub mod table;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use paimon::table::{CommitMessage, Table};

pub use batch::PayloadRefused;
pub use binding::{Binding, CommitMode, WriteKind};
pub use commit::{AbortReport, CommitOutcome, SkippedFile};
pub use error::{
    without_secrets, CoordinatorError, CoordinatorResult, MergeConflict, MessageOrigin,
    PlainPaimonError, Rule, SharedBucket, ValidationError,
};
pub use outcome::{DEFAULT_LOCAL_OUTCOME_HORIZON, DEFAULT_OBJECT_STORE_OUTCOME_HORIZON};
pub use parts::{PartsError, PayloadPart};
pub use rules::hash_index::{
    DEFAULT_HASH_INDEX_BUDGET, HASH_INDEX_READ_CHUNK, MAX_HASH_INDEX_BYTES,
};
pub use rules::registry::{self, KeptOff, Reads, RuleEntry, Stage, REGISTRY, STREAMED_LISTS};
pub use rules::shared::limits::BucketMode;
pub use rules::validate;
pub use staged::{StagedCommit, StagedPath};
pub use table::{
    check_file_format_compiled, create_table_with_options, is_fixed_table_option, open_table,
    open_table_with_options, parse_table_name, TableDefinition,
};

use rules::shared::state::TableContext;
use rules::shared::table_rules::TableRules;
use rules::{merge, one_writer, verify};

/// A process-unique number for one [`Coordinator`], carried by every [`BoundMessages`] it
/// makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CoordinatorId(u64);

impl CoordinatorId {
    fn next() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        CoordinatorId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

/// Messages decoded, validated and bound to one coordinator: only that coordinator can
/// merge, commit or abort them.
///
/// Invariant: no file appears twice (see [`Coordinator::merge`]).
#[derive(Debug, Clone)]
pub struct BoundMessages {
    coordinator: CoordinatorId,
    messages: Vec<CommitMessage>,
    origins: Vec<MessageOrigin>,
}

impl BoundMessages {
    /// The coordinator these messages are bound to.
    pub fn coordinator_id(&self) -> CoordinatorId {
        self.coordinator
    }

    /// The messages, with the coordinator's mode applied.
    pub fn messages(&self) -> &[CommitMessage] {
        &self.messages
    }

    /// Where each message came from, parallel to [`Self::messages`].
    pub fn origins(&self) -> &[MessageOrigin] {
        &self.origins
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether there are no messages.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// Number of new data files across all messages.
    pub fn data_file_count(&self) -> usize {
        self.messages.iter().map(|m| m.new_files.len()).sum()
    }

    /// Sum of the row counts the workers reported for their new data files (taken on
    /// trust; see the trust model).
    pub fn reported_row_count(&self) -> i64 {
        self.messages
            .iter()
            .flat_map(|m| &m.new_files)
            .map(|f| f.row_count)
            .fold(0i64, i64::saturating_add)
    }
}

/// The coordinator bound to one table, commit user, mode and write kind.
///
/// Made once per commit job with [`Coordinator::bind`]; it reads the table's schema history
/// then, so bind a new coordinator after the table's schema changes.
#[derive(Debug)]
pub struct Coordinator {
    id: CoordinatorId,
    table: Table,
    binding: Binding,
    rules: TableRules,
    limits: crate::DecodeLimits,
    /// Most bytes of memory one commit's HASH index checks may hold.
    hash_index_budget: u64,
    /// How long after an unknown outcome a request of the commit may still be applied.
    outcome_horizon: Duration,
    /// This coordinator's commits whose outcome is unknown.
    unknown_outcomes: outcome::UnknownOutcomes,
}

impl Coordinator {
    /// Binds a coordinator to `table`. Reads the table's schema history; refuses tables and
    /// bindings it cannot commit (format tables, an empty commit user, a fixed-bucket binding
    /// on a table that is not a postpone table, an unknown bucket option).
    pub async fn bind(table: Table, binding: Binding) -> CoordinatorResult<Self> {
        if binding.commit_user.is_empty() {
            return Err(CoordinatorError::Unsupported {
                reason: "the commit user is empty; give the job's commit user (the one its \
                         workers were created with)"
                    .into(),
            });
        }
        let rules = TableRules::load(&table, &binding).await?;
        if binding.verify_compaction {
            if let Some(reason) = verify::unverifiable(&table, &rules) {
                return Err(CoordinatorError::Unsupported {
                    reason: format!(
                        "compactions of table {} cannot be verified: {reason}; allow compaction \
                         without verification (Rust Binding::with_compaction, C \
                         PAIMON_WIRE_BINDING_ALLOW_COMPACTION, CLI --allow-compaction, Python \
                         allow_compaction=True) or leave it refused",
                        rules.table_name()
                    ),
                });
            }
        }
        Ok(Self {
            id: CoordinatorId::next(),
            binding,
            rules,
            limits: crate::DecodeLimits::default(),
            hash_index_budget: DEFAULT_HASH_INDEX_BUDGET,
            outcome_horizon: outcome::default_horizon(table.location(), table.rest_env().is_some()),
            unknown_outcomes: outcome::UnknownOutcomes::default(),
            table,
        })
    }

    /// The same coordinator decoding payloads under `limits` instead of
    /// [`crate::DecodeLimits::default`].
    pub fn with_decode_limits(mut self, limits: crate::DecodeLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The same coordinator giving one commit's HASH index checks (dynamic-bucket tables, rule
    /// `hash-index-keys`) at most `bytes` of memory instead of [`DEFAULT_HASH_INDEX_BUDGET`]:
    /// 12 bytes for each key of the HASH index files the commit adds, replaces or must check
    /// against (the live indexes of the partitions whose indexes it changes). A commit that
    /// would need more is refused before any index is read (rule `bounds`, naming the
    /// budget), so a payload of a few hundred bytes cannot make the coordinator read
    /// gigabytes of index. A budget of 0 refuses every commit that checks a HASH index (the
    /// C library, Python and the CLI refuse 0 as an argument).
    pub fn with_hash_index_budget(mut self, bytes: u64) -> Self {
        self.hash_index_budget = bytes;
        self
    }

    /// The memory budget of one commit's HASH index checks ([`Self::with_hash_index_budget`]).
    pub fn hash_index_budget(&self) -> u64 {
        self.hash_index_budget
    }

    /// The same coordinator assuming that a request of a commit whose outcome is unknown may
    /// still be applied for `horizon` after the commit failed, instead of the default
    /// ([`DEFAULT_OBJECT_STORE_OUTCOME_HORIZON`] for object stores and REST catalogs,
    /// [`DEFAULT_LOCAL_OUTCOME_HORIZON`] for local file systems). [`Self::abort`] deletes
    /// nothing within it. Set it to at least the longest time a request can spend in the
    /// store's client, the network and the server (its retries included).
    pub fn with_outcome_horizon(mut self, horizon: Duration) -> Self {
        self.outcome_horizon = horizon;
        self
    }

    /// The outcome horizon ([`Self::with_outcome_horizon`]).
    pub fn outcome_horizon(&self) -> Duration {
        self.outcome_horizon
    }

    /// The limits [`Self::deserialize`] applies to each payload.
    pub fn decode_limits(&self) -> &crate::DecodeLimits {
        &self.limits
    }

    /// This coordinator's process-unique id.
    pub fn id(&self) -> CoordinatorId {
        self.id
    }

    /// The bound table.
    pub fn table(&self) -> &Table {
        &self.table
    }

    /// What the table-state rules read of this coordinator.
    pub(crate) fn context(&self) -> TableContext<'_> {
        TableContext {
            table: &self.table,
            rules: &self.rules,
            binding: &self.binding,
            hash_index_budget: self.hash_index_budget,
        }
    }

    /// The binding (commit user, mode, write kind).
    pub fn binding(&self) -> &Binding {
        &self.binding
    }

    /// The bucket mode of the bound table, as validation sees it.
    pub fn bucket_mode(&self) -> BucketMode {
        self.rules.bucket_mode()
    }

    /// Decodes one payload (Java `CommitMessageSerializer.serializeList` bytes at
    /// `version`), validates every message against the bound table, applies the binding, drops
    /// identical duplicate files and returns the messages bound to this coordinator.
    ///
    /// The payload may come in Apache Doris's `DPCM` frame ([`crate::dpcm`]), told by its
    /// magic: its version must then be `version`.
    ///
    /// Validation and duplicate detection read the payload in place
    /// ([`crate::view::PayloadView`]): owned `CommitMessage`s are built only for a payload that
    /// passes, and without its duplicate files, so a refused payload costs no copy of its
    /// files. [`Self::bind_messages`] runs the same rules on owned messages.
    ///
    /// The payload is decoded under the coordinator's [`crate::DecodeLimits`]
    /// ([`Self::with_decode_limits`]; the defaults unless set).
    ///
    /// Errors: [`CoordinatorError::Codec`] if the bytes do not decode or go over a limit,
    /// [`CoordinatorError::Frame`] if a `DPCM` frame is malformed or names another version,
    /// [`CoordinatorError::Validation`] naming the message, field and rule a message breaks,
    /// [`CoordinatorError::Merge`] if the payload names one file twice with different
    /// metadata.
    pub fn deserialize(
        &self,
        version: crate::SerializerVersion,
        payload: &[u8],
    ) -> CoordinatorResult<BoundMessages> {
        self.deserialize_counted(version, payload)
            .map(|(bound, _)| bound)
    }

    /// [`Self::deserialize`] for many payloads, in two overlapping stages: a helper thread
    /// reads and checks each payload (everything that can refuse it) while the calling thread
    /// builds the owned messages of the one before. The bound payloads come back in the order
    /// given, ready for [`Self::merge`]; on a machine with one core, one after the other.
    ///
    /// The helper takes the payloads from `payloads` one at a time, in order, and at most a
    /// few checked ones wait for the calling thread, so an iterator that reads each payload
    /// when it is taken (from a file, a socket) holds a few, not all. A coordinator that has
    /// every worker's payload when it commits (an engine's transaction, a Ray job's driver)
    /// decodes them in about the time of building their messages alone.
    ///
    /// The answer is what calling [`Self::deserialize`] on each payload in order answers: on a
    /// refusal, the first payload refused, as [`PayloadRefused`] naming its position and the
    /// error. Nothing is bound then, and no payload after the refused one is taken.
    ///
    /// ```no_run
    /// # fn run(coordinator: &paimon_wire::coordinator::Coordinator, payloads: Vec<Vec<u8>>)
    /// # -> Result<(), Box<dyn std::error::Error>> {
    /// use paimon_wire::SerializerVersion;
    ///
    /// let parts = coordinator.deserialize_all(SerializerVersion::CURRENT, &payloads)?;
    /// let merged = coordinator.merge(parts)?;
    /// # let _ = merged; Ok(()) }
    /// ```
    pub fn deserialize_all<I, P>(
        &self,
        version: crate::SerializerVersion,
        payloads: I,
    ) -> Result<Vec<BoundMessages>, PayloadRefused>
    where
        I: IntoIterator<Item = P>,
        I::IntoIter: Send,
        P: AsRef<[u8]> + Send,
    {
        let versioned = payloads.into_iter().map(move |payload| (version, payload));
        batch::deserialize_all(self, versioned, batch::may_overlap())
    }

    /// [`Self::deserialize_all`] for payloads that each come with the serializer version
    /// they were written at: workers of different Paimon releases, or payloads unwrapped from
    /// envelopes or `DPCM` frames, which name their version. The answer is what calling
    /// [`Self::deserialize`] on each `(version, payload)` in order answers.
    ///
    /// ```no_run
    /// # fn run(coordinator: &paimon_wire::coordinator::Coordinator, frames: Vec<Vec<u8>>)
    /// # -> Result<(), Box<dyn std::error::Error>> {
    /// let payloads = frames
    ///     .iter()
    ///     .map(|frame| paimon_wire::dpcm::unframe(frame))
    ///     .collect::<Result<Vec<_>, _>>()?;
    /// let parts = coordinator.deserialize_all_versioned(payloads)?;
    /// let merged = coordinator.merge(parts)?;
    /// # let _ = merged; Ok(()) }
    /// ```
    pub fn deserialize_all_versioned<I, P>(
        &self,
        payloads: I,
    ) -> Result<Vec<BoundMessages>, PayloadRefused>
    where
        I: IntoIterator<Item = (crate::SerializerVersion, P)>,
        I::IntoIter: Send,
        P: AsRef<[u8]> + Send,
    {
        batch::deserialize_all(self, payloads, batch::may_overlap())
    }

    /// [`Self::deserialize`], and how many messages the payload held before duplicates and
    /// empty messages were dropped (the origins' `message_index` runs below it).
    fn deserialize_counted(
        &self,
        version: crate::SerializerVersion,
        payload: &[u8],
    ) -> CoordinatorResult<(BoundMessages, usize)> {
        let view = self.parse_payload(version, payload)?;
        let duplicates = self.check_payload(&view)?;
        Ok(self.bind_checked(&view, &duplicates))
    }

    /// The messages of a payload, read in place: its Doris frame stripped, its structure
    /// checked under the coordinator's decode limits.
    fn parse_payload<'p>(
        &self,
        version: crate::SerializerVersion,
        payload: &'p [u8],
    ) -> CoordinatorResult<crate::view::PayloadView<'p>> {
        // A Doris frame is told by its magic (a raw payload's message count can never be
        // those four bytes under any decode limit) and must carry the version it was handed
        // over with.
        let payload = crate::dpcm::strip_frame(version, payload)?;
        Ok(crate::view::PayloadView::parse_with_limits(
            version,
            payload,
            &self.limits,
        )?)
    }

    /// Validates every message of a parsed payload and finds its identical duplicate files:
    /// everything that can refuse a payload, without building an owned value.
    fn check_payload(
        &self,
        view: &crate::view::PayloadView<'_>,
    ) -> CoordinatorResult<std::collections::HashSet<merge::FileAt>> {
        let views = view.messages();
        for (index, message) in views.iter().enumerate() {
            self.rules.validate(index, message, self.binding.mode)?;
        }
        merge::find_duplicates(views, &first_part_origins(views.len()), &self.rules)
    }

    /// The owned messages of a payload [`Self::check_payload`] accepted, without its
    /// duplicates, the binding applied; and how many messages the payload held.
    fn bind_checked(
        &self,
        view: &crate::view::PayloadView<'_>,
        duplicates: &std::collections::HashSet<merge::FileAt>,
    ) -> (BoundMessages, usize) {
        let views = view.messages();
        let messages = views
            .iter()
            .enumerate()
            .map(|(index, message)| {
                let mut owned = merge::materialize_kept(message, index, duplicates);
                self.rules.apply(&mut owned, self.binding.mode);
                owned
            })
            .collect();
        let (messages, origins) = merge::drop_empty(messages, first_part_origins(views.len()));
        (
            BoundMessages {
                coordinator: self.id,
                messages,
                origins,
            },
            views.len(),
        )
    }

    /// Decodes the payloads one worker's messages were split into ([`crate::split_list`]),
    /// each with its index and the set's count as the engine delivered them, as the one
    /// payload they were split from: in index order, bound as one worker's, so a bucket whose
    /// files span two payloads is not two writers'.
    ///
    /// The set must be whole ([`CoordinatorError::Parts`]): every index below the count,
    /// and an index delivered twice only with the same bytes (kept once). Each payload is
    /// decoded and validated as [`Self::deserialize`] does; a file in two payloads is merged
    /// as [`Self::merge`] does. Merge the result with other workers' payloads as usual.
    pub fn deserialize_parts(
        &self,
        version: crate::SerializerVersion,
        parts: &[PayloadPart<'_>],
    ) -> CoordinatorResult<BoundMessages> {
        let ordered = parts::order(parts).map_err(CoordinatorError::Parts)?;
        let mut messages = Vec::new();
        let mut origins = Vec::new();
        // Message indexes count through the set, as in the payload it was split from.
        let mut offset = 0;
        for bytes in ordered {
            let (bound, decoded_count) = self.deserialize_counted(version, bytes)?;
            messages.extend(bound.messages);
            origins.extend(bound.origins.into_iter().map(|origin| MessageOrigin {
                part: 0,
                message_index: offset + origin.message_index,
            }));
            offset += decoded_count;
        }
        let (messages, origins) = merge::dedup(messages, origins, &self.rules)?;
        Ok(BoundMessages {
            coordinator: self.id,
            messages,
            origins,
        })
    }

    /// [`Self::deserialize`] with the version as the `i32` that travels beside the bytes.
    pub fn deserialize_raw_version(
        &self,
        version: i32,
        payload: &[u8],
    ) -> CoordinatorResult<BoundMessages> {
        self.deserialize(crate::SerializerVersion::try_from(version)?, payload)
    }

    /// Validates and binds messages already in memory (e.g. from an in-process
    /// `TableWrite::prepare_commit`), exactly as [`Self::deserialize`] does after decoding.
    pub fn bind_messages(&self, messages: Vec<CommitMessage>) -> CoordinatorResult<BoundMessages> {
        let mut bound = Vec::with_capacity(messages.len());
        for (index, message) in messages.into_iter().enumerate() {
            bound.push(
                self.rules
                    .validate_and_apply(index, message, self.binding.mode)?,
            );
        }
        let origins = first_part_origins(bound.len());
        let (messages, origins) = merge::dedup(bound, origins, &self.rules)?;
        Ok(BoundMessages {
            coordinator: self.id,
            messages,
            origins,
        })
    }

    /// Merges payloads from many workers into one set: concatenates them, keeps one copy of
    /// a file that appears more than once with identical partition, bucket and metadata (a
    /// worker retry), and refuses a file name that appears with different partition,
    /// bucket or metadata ([`CoordinatorError::Merge`]). Messages left without files are
    /// dropped. Every part must be bound to this coordinator.
    ///
    /// On a primary-key table (except a postpone one, `bucket = -2`) each (partition, bucket)
    /// may get new level-0 files from one part only: two writers of one bucket make the
    /// winning row of a key arbitrary ([`CoordinatorError::SharedBucket`]; route rows with
    /// [`crate::BucketRouter`]). Merge every worker's payload in one call for the check to
    /// see them all.
    pub fn merge(
        &self,
        parts: impl IntoIterator<Item = BoundMessages>,
    ) -> CoordinatorResult<BoundMessages> {
        let mut messages = Vec::new();
        let mut origins = Vec::new();
        for (part, bound) in parts.into_iter().enumerate() {
            self.check_owner(&bound)?;
            for (message, origin) in bound.messages.into_iter().zip(bound.origins) {
                messages.push(message);
                origins.push(MessageOrigin {
                    part,
                    message_index: origin.message_index,
                });
            }
        }
        let (messages, origins) = merge::dedup(messages, origins, &self.rules)?;
        one_writer::check_one_writer_per_bucket(&messages, &origins, &self.rules)?;
        Ok(BoundMessages {
            coordinator: self.id,
            messages,
            origins,
        })
    }

    /// Commits `messages` once under `identifier`: if a snapshot of this commit user
    /// already carries `identifier` (a rerun after a crash), commits nothing and says so.
    /// Append mode adds the files; overwrite mode replaces the partitions they touch.
    pub async fn commit(
        &self,
        messages: BoundMessages,
        identifier: i64,
    ) -> CoordinatorResult<CommitOutcome> {
        self.check_owner(&messages)?;
        let table = self.table.identifier().full_name();
        let user = &self.binding.commit_user;
        log::debug!(
            target: crate::log_policy::COORDINATOR_TARGET,
            "committing {} messages to {table} as {user:?}, identifier {identifier}",
            messages.messages.len()
        );
        let outcome = commit::commit_once(self, messages.messages, identifier).await;
        self.record_outcome(identifier, &outcome);
        outcome
    }

    /// Records and logs the outcome of a commit of `identifier`: an unknown outcome is kept
    /// for [`Self::abort`], a known one settles an earlier unknown one.
    fn record_outcome(&self, identifier: i64, outcome: &CoordinatorResult<CommitOutcome>) {
        let table = self.table.identifier().full_name();
        let user = &self.binding.commit_user;
        match outcome {
            Ok(outcome) => {
                self.unknown_outcomes.settle(identifier);
                log::info!(
                    target: crate::log_policy::COORDINATOR_TARGET,
                    "{table}, {user:?}, identifier {identifier}: {outcome:?}"
                )
            }
            Err(error) if error.outcome_unknown() => {
                self.unknown_outcomes.record(identifier);
                log::warn!(
                    target: crate::log_policy::COORDINATOR_TARGET,
                    "{table}, {user:?}, identifier {identifier}: {error}"
                )
            }
            // Nothing of this attempt was committed; an earlier attempt's unknown outcome
            // stays unknown.
            Err(error) => log::warn!(
                target: crate::log_policy::COORDINATOR_TARGET,
                "{table}, {user:?}, identifier {identifier}: not committed: {error}"
            ),
        }
    }

    /// Deletes the files `messages` prepared, for a write that is abandoned and will never
    /// be committed. Deletes only what it can prove the job wrote and nobody uses: a file
    /// any snapshot of the table references is skipped, as are the files a message deletes;
    /// the report lists what was deleted and what was skipped, with why. Deleting is best
    /// effort.
    ///
    /// While a commit of this coordinator has an unknown outcome
    /// ([`CoordinatorError::OutcomeUnknown`]) younger than [`Self::outcome_horizon`], deletes
    /// nothing and fails with [`CoordinatorError::OutcomeUnknown`] (source `None`): a request
    /// of that commit may still publish a snapshot referencing these files. Past the horizon
    /// it reads the identifier's status first, so the snapshot, if it landed, is seen and its
    /// files kept. Rerunning [`Self::commit`] with the same identifier settles the outcome at
    /// once.
    pub async fn abort(&self, messages: &BoundMessages) -> CoordinatorResult<AbortReport> {
        self.check_owner(messages)?;
        outcome::check_before_abort(
            &self.unknown_outcomes,
            &self.binding.commit_user,
            self.outcome_horizon,
            |identifier| async move { Ok(self.commit_status(identifier).await?.is_some()) },
        )
        .await?;
        commit::abort(self, &messages.messages).await
    }

    /// [`Self::abort`] without waiting for unknown outcomes to settle: for an engine that knows
    /// from elsewhere that no request of its failed commit can still land (its own
    /// reconciliation, a store that fenced the client). Files that snapshots reference when it
    /// reads the table are still kept, but a snapshot published after that read is broken.
    pub async fn abort_despite_unknown_outcome(
        &self,
        messages: &BoundMessages,
    ) -> CoordinatorResult<AbortReport> {
        self.check_owner(messages)?;
        commit::abort(self, &messages.messages).await
    }

    /// Checks `messages` against the table's latest snapshot as [`Self::commit`] does before
    /// committing (see the trust model: **already-live**, **not-live**, **two-roles**, and
    /// the checked sums of **bounds**), reading only the partitions and buckets they touch.
    /// Commits nothing. A `commit` runs this check itself.
    pub async fn check_against_table(&self, messages: &BoundMessages) -> CoordinatorResult<()> {
        self.check_owner(messages)?;
        rules::check_against_table(self.context(), &messages.messages).await
    }

    /// Whether `identifier` is already committed for this commit user:
    /// `Some(CommitOutcome::AlreadyCommitted { .. })` if it is (or a higher identifier of
    /// the user supersedes it and its snapshot may have expired), `None` if not — also when
    /// a higher identifier supersedes one that was provably never committed (committing it
    /// would then fail with [`CoordinatorError::IdentifierSuperseded`]). Reads the table's
    /// snapshots; commits nothing.
    pub async fn commit_status(&self, identifier: i64) -> CoordinatorResult<Option<CommitOutcome>> {
        use commit::IdentifierStatus;
        Ok(
            match commit::identifier_status(self, identifier, false).await? {
                IdentifierStatus::Committed(snapshot_id)
                | IdentifierStatus::AppendOnly(snapshot_id) => {
                    Some(CommitOutcome::AlreadyCommitted {
                        snapshot_id: Some(snapshot_id),
                    })
                }
                IdentifierStatus::Superseded {
                    never_committed: false,
                    ..
                } => Some(CommitOutcome::AlreadyCommitted { snapshot_id: None }),
                IdentifierStatus::Superseded {
                    never_committed: true,
                    ..
                }
                | IdentifierStatus::NotCommitted => None,
            },
        )
    }

    fn check_owner(&self, messages: &BoundMessages) -> CoordinatorResult<()> {
        if messages.coordinator == self.id {
            Ok(())
        } else {
            Err(CoordinatorError::ForeignMessages {
                bound_to: format!("coordinator #{}", messages.coordinator.0),
                handed_to: self.to_string(),
            })
        }
    }
}

/// The origins of the messages of one part, before [`Coordinator::merge`] numbers the parts.
fn first_part_origins(messages: usize) -> Vec<MessageOrigin> {
    (0..messages)
        .map(|message_index| MessageOrigin {
            part: 0,
            message_index,
        })
        .collect()
}

impl fmt::Display for Coordinator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "coordinator #{} (table {}, commit user {:?}, {}, {} messages)",
            self.id.0,
            self.rules.table_name(),
            self.binding.commit_user,
            self.binding.mode,
            self.binding.write_kind
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>(_: &T) {}

    #[test]
    fn handles_cross_threads_and_commits_run_on_any_runtime() {
        assert_send_sync::<Coordinator>();
        assert_send_sync::<BoundMessages>();
        assert_send_sync::<CoordinatorError>();
        // The futures must be Send so a multi-threaded runtime can drive them.
        fn futures_are_send(coordinator: &Coordinator, messages: BoundMessages) {
            assert_send(&coordinator.commit(messages.clone(), 1));
            assert_send(&coordinator.abort(&messages));
            assert_send(&coordinator.abort_despite_unknown_outcome(&messages));
            assert_send(&coordinator.commit_status(1));
            assert_send(&Coordinator::bind(
                coordinator.table().clone(),
                Binding::append("u"),
            ));
            assert_send(&open_table("w", "d.t"));
        }
        let _ = futures_are_send;
    }

    #[test]
    fn coordinator_ids_are_unique() {
        let ids: std::collections::HashSet<_> = (0..100).map(|_| CoordinatorId::next()).collect();
        assert_eq!(ids.len(), 100);
    }
}
