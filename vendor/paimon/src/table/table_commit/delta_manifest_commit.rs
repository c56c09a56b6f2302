// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

//! Publishing delta manifests written ahead ([`WrittenDeltaManifests`]) as one snapshot.
//!
//! The commit runs the attempt loop of [`TableCommit::commit_with_identifier`] (identifier
//! filter, retries, publication gate, unknown outcomes) on a plan that holds the written
//! manifests instead of entries. An attempt writes only the manifest lists and the snapshot:
//! the delta's entries do not depend on the base snapshot (the writer admits ADD-only
//! commits to tables without row tracking), so every attempt reuses the same manifests.
//!
//! The conflict check that `resolve_commit` runs on entries runs here on what the writer kept
//! ([`super::delta_manifests::DeltaFacts`]). The base snapshot's entries in the delta's
//! partitions are read one manifest file at a time, and only the files that a check reads are
//! kept: those whose identity key is one of the delta's (a possible duplicate), and the
//! fixed-bucket files (their bucket counts). A retry applies the snapshots published since
//! the last attempt to that state, as `resolve_commit` does with its base entries.
//!
//! The written manifests are never in an attempt's own `created_files`: a failed attempt
//! deletes the manifest lists it wrote, and the caller, which knows whether the outcome is
//! unknown, decides about the manifests ([`WrittenDeltaManifests::paths`]).

use super::delta_manifests::{same_commit_file, DeltaFacts};
use super::{
    commit_file_identifier_ref, CommitEntriesPlan, CommitKind, FileKind, ManifestEntry,
    PartitionFilter, ResolvedCommit, Snapshot, TableCommit, WrittenDeltaManifests,
};
use crate::spec::{CoreOptions, Manifest};
use crate::Result;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

/// The plan of a commit of written delta manifests: the manifests, and the base snapshot's
/// files the conflict check read at the last attempt.
pub(super) struct DeltaManifestPlan {
    pub(super) written: WrittenDeltaManifests,
    base: Option<BaseFiles>,
}

/// The live files of a base snapshot, in the delta's partitions, that the conflict check
/// reads: each under the key of its identity as written (the key the base's own ADD and
/// DELETE entries net by).
struct BaseFiles {
    /// The snapshot these files are the state of.
    snapshot_id: i64,
    files: HashMap<u128, BaseFile>,
    /// The partitions of `files`, numbered (the empty partition by no bytes).
    partitions: HashMap<Vec<u8>, u32>,
}

/// A live base file the conflict check reads.
struct BaseFile {
    partition: u32,
    /// Its bucket count, if it is in a fixed bucket (`bucket >= 0`, `total_buckets > 0`).
    fixed_total_buckets: Option<i32>,
    /// The entry itself, if its identity key is one of the delta's: a possible duplicate,
    /// confirmed by reading the delta back.
    possible_duplicate: Option<Box<ManifestEntry>>,
}

impl TableCommit {
    /// Publishes the delta manifests a [`super::DeltaManifestWriter`] of this table wrote,
    /// as one APPEND snapshot under `commit_identifier`: the snapshot, manifests and answers
    /// of [`Self::commit_with_identifier`] for the same messages.
    ///
    /// On failure the written manifests are left in place: delete them
    /// ([`WrittenDeltaManifests::paths`]) unless the error is
    /// [`crate::Error::CommitOutcomeUnknown`], when a snapshot may name them.
    pub async fn commit_delta_manifests_with_identifier(
        &self,
        written: &WrittenDeltaManifests,
        commit_identifier: i64,
    ) -> Result<()> {
        self.commit_delta_manifests(written, commit_identifier, false)
            .await
    }

    /// [`Self::commit_delta_manifests_with_identifier`], skipped if `commit_identifier` is
    /// already committed: the counterpart of [`Self::filter_and_commit_with_identifier`],
    /// for retrying an uncertain result.
    pub async fn filter_and_commit_delta_manifests_with_identifier(
        &self,
        written: &WrittenDeltaManifests,
        commit_identifier: i64,
    ) -> Result<()> {
        self.commit_delta_manifests(written, commit_identifier, true)
            .await
    }

    async fn commit_delta_manifests(
        &self,
        written: &WrittenDeltaManifests,
        commit_identifier: i64,
        filter_committed: bool,
    ) -> Result<()> {
        if self.table.is_format_table() {
            return Err(crate::Error::Unsupported {
                message: "Format Table commits have no checkpoint identifiers".into(),
            });
        }
        CoreOptions::new(self.table.schema().options()).ensure_read_authorized()?;
        super::super::write_builder::ensure_table_write_allowed(&self.table)?;
        self.ensure_delta_manifests_admitted()?;
        let manifest_dir = self.snapshot_manager.manifest_dir();
        if written.facts.manifest_dir != manifest_dir {
            return Err(crate::Error::DataInvalid {
                message: format!(
                    "the delta manifests were written to '{}', not to this table's '{manifest_dir}'",
                    written.facts.manifest_dir
                ),
                source: None,
            });
        }
        self.try_commit(
            CommitEntriesPlan::DeltaManifests(Box::new(DeltaManifestPlan {
                written: written.clone(),
                base: None,
            })),
            None,
            commit_identifier,
            filter_committed,
        )
        .await
    }

    /// `resolve_commit` for written delta manifests: the conflict check, when a commit of the
    /// same entries would run it, and the index manifest the snapshot keeps.
    pub(super) async fn resolve_delta_manifests<'plan>(
        &self,
        plan: &'plan mut DeltaManifestPlan,
        latest_snapshot: &Option<Snapshot>,
        check_append_files: bool,
    ) -> Result<ResolvedCommit<'plan>> {
        let facts = &plan.written.facts;
        // The entries themselves were checked by the writer (`validate_file_entries` of the
        // delta, its bucket counts).
        let detect_conflicts =
            check_append_files || facts.has_partition_bucket_counts || facts.has_postpone_entries;
        if detect_conflicts {
            let base = self
                .delta_manifest_base_files(plan.base.take(), latest_snapshot, &plan.written.facts)
                .await?;
            let checked = self
                .check_delta_manifests_against_base(&plan.written, &base)
                .await;
            plan.base = Some(base);
            checked?;
        }
        let file_io = self.snapshot_manager.file_io();
        let manifest_dir = self.snapshot_manager.manifest_dir();
        let previous =
            Self::read_prev_index_entries(file_io, &manifest_dir, latest_snapshot).await?;
        let all = Self::merge_index_entries(&previous, &[], false)?;
        self.check_deletion_vector_references(latest_snapshot, &[], &[], &all)
            .await?;
        let index_manifest_changed = all != previous;
        let written: &'plan WrittenDeltaManifests = &plan.written;
        Ok(ResolvedCommit {
            entries: Cow::Borrowed(&[]),
            changelog_entries: Cow::Borrowed(&[]),
            kind: CommitKind::APPEND,
            index_manifest_name: latest_snapshot
                .as_ref()
                .and_then(|s| s.index_manifest().map(str::to_string)),
            index_manifest_changed,
            new_index_manifest_entries: index_manifest_changed.then_some(all),
            base_data_files: None,
            written: Some(written),
        })
    }

    /// The base files the conflict check reads, as of `latest_snapshot`: the last attempt's,
    /// brought forward by the delta manifests of the snapshots published since (as
    /// `resolve_conflict_base_entries` does after a lost race), or read afresh.
    async fn delta_manifest_base_files(
        &self,
        previous: Option<BaseFiles>,
        latest_snapshot: &Option<Snapshot>,
        facts: &DeltaFacts,
    ) -> Result<BaseFiles> {
        let filter = self.delta_partition_filter(facts)?;
        let Some(latest) = latest_snapshot else {
            return Ok(BaseFiles::new(0));
        };
        if let Some(previous) = previous {
            if let Some(base) = self
                .bring_forward(previous, latest, filter.as_ref(), facts)
                .await?
            {
                return Ok(base);
            }
        }
        let mut base = BaseFiles::new(latest.id());
        self.for_each_manifest_entry(
            &[latest.base_manifest_list(), latest.delta_manifest_list()],
            filter.as_ref(),
            |entry| {
                base.apply(facts, entry);
                Ok(())
            },
        )
        .await?;
        Ok(base)
    }

    /// `base` as of `latest`: the delta manifests of the snapshots after `base`'s applied in
    /// order; `None` if one of them is gone (expired) or `base` is newer than `latest`.
    async fn bring_forward(
        &self,
        mut base: BaseFiles,
        latest: &Snapshot,
        filter: Option<&PartitionFilter>,
        facts: &DeltaFacts,
    ) -> Result<Option<BaseFiles>> {
        if base.snapshot_id > latest.id() {
            return Ok(None);
        }
        for snapshot_id in base.snapshot_id + 1..=latest.id() {
            let Ok(snapshot) = self.snapshot_manager.get_snapshot(snapshot_id).await else {
                return Ok(None);
            };
            self.for_each_manifest_entry(&[snapshot.delta_manifest_list()], filter, |entry| {
                base.apply(facts, entry);
                Ok(())
            })
            .await?;
        }
        base.snapshot_id = latest.id();
        Ok(Some(base))
    }

    /// The partition filter of the delta's partitions (`build_entries_partition_filter`).
    fn delta_partition_filter(&self, facts: &DeltaFacts) -> Result<Option<PartitionFilter>> {
        let partition_fields = self.table.schema().partition_fields();
        if partition_fields.is_empty() {
            return Ok(None);
        }
        let partitions: HashSet<Vec<u8>> = facts.partitions.keys().cloned().collect();
        Ok(Some(PartitionFilter::from_partition_set(
            partitions,
            &partition_fields,
        )?))
    }

    /// `check_commit_conflicts` of an ADD-only delta against the base: no delta file is live
    /// in the base (`validate_file_entries` of both), and each partition keeps one bucket
    /// count over the base's live fixed-bucket files and the delta's
    /// (`check_total_bucket_conflicts` of the merged files).
    async fn check_delta_manifests_against_base(
        &self,
        written: &WrittenDeltaManifests,
        base: &BaseFiles,
    ) -> Result<()> {
        let candidates: Vec<&ManifestEntry> = base
            .files
            .values()
            .filter_map(|file| file.possible_duplicate.as_deref())
            .collect();
        if !candidates.is_empty() {
            let duplicate = written
                .find_delta_entry(self, |entry| {
                    candidates
                        .iter()
                        .any(|candidate| same_commit_file(candidate, entry))
                })
                .await?;
            if let Some(entry) = duplicate {
                return Err(crate::Error::DataInvalid {
                    message: format!(
                        "Duplicate ADD entry for file '{}' in bucket {}.",
                        entry.file().file_name,
                        entry.bucket(),
                    ),
                    source: None,
                });
            }
        }
        let mut bucket_counts: HashMap<u32, i32> = HashMap::new();
        let delta_bucket_counts = base.partitions.iter().filter_map(|(partition, index)| {
            let count = written.facts.partitions.get(partition).copied().flatten()?;
            Some((*index, count))
        });
        let base_bucket_counts = base
            .files
            .values()
            .filter_map(|file| Some((file.partition, file.fixed_total_buckets?)));
        for (partition, count) in base_bucket_counts.chain(delta_bucket_counts) {
            if let Some(previous) = bucket_counts.insert(partition, count) {
                if previous != count {
                    return Err(crate::Error::DataInvalid {
                        message: format!(
                            "Fixed-bucket conflict: one partition uses different total bucket counts {previous} and {count}"
                        ),
                        source: None,
                    });
                }
            }
        }
        Ok(())
    }

    /// `check_recovered_files_exist` for written delta manifests: the files their entries
    /// add exist, read back one manifest file at a time.
    pub(super) async fn check_delta_manifest_files_exist(
        &self,
        written: &WrittenDeltaManifests,
    ) -> Result<()> {
        let file_io = self.snapshot_manager.file_io();
        for meta in written.delta.iter().chain(&written.changelog) {
            let path = format!("{}/{}", written.facts.manifest_dir, meta.file_name());
            let entries = Manifest::read(file_io, &path).await?;
            self.check_recovery_entries(&entries, &[], &[]).await?;
        }
        Ok(())
    }
}

impl BaseFiles {
    fn new(snapshot_id: i64) -> Self {
        Self {
            snapshot_id,
            files: HashMap::new(),
            partitions: HashMap::new(),
        }
    }

    /// Applies one base entry in order: an ADD makes its file live (kept if a check reads
    /// it), a DELETE ends it (`merge_active_entries`).
    fn apply(&mut self, facts: &DeltaFacts, entry: ManifestEntry) {
        let key = facts.hasher.written_key(&entry);
        if *entry.kind() == FileKind::Delete {
            self.files.remove(&key);
            return;
        }
        let fixed_total_buckets =
            (entry.bucket() >= 0 && entry.total_buckets() > 0).then_some(entry.total_buckets());
        let possible_duplicate = facts.file_keys.contains(&facts.hasher.key(&entry));
        if fixed_total_buckets.is_none() && !possible_duplicate {
            self.files.remove(&key);
            return;
        }
        let next = self.partitions.len() as u32;
        // Every spelling of the empty partition is one partition, as in the delta's facts.
        let partition = commit_file_identifier_ref(&entry).partition;
        let partition = match self.partitions.get(partition) {
            Some(index) => *index,
            None => *self.partitions.entry(partition.to_vec()).or_insert(next),
        };
        self.files.insert(
            key,
            BaseFile {
                partition,
                fixed_total_buckets,
                possible_duplicate: possible_duplicate.then(|| Box::new(entry)),
            },
        );
    }
}
