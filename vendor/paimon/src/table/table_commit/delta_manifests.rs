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

//! Writing one commit's delta and changelog manifest files as its messages arrive.
//!
//! [`TableCommit::commit`] turns the whole list of messages into manifest entries and then
//! encodes them, so a commit of `n` files holds `n` entries at once. A
//! [`DeltaManifestWriter`] takes the messages in batches instead: each batch becomes entries,
//! the entries are encoded into the open manifest file, and a file that reaches the target
//! size is written and its entries dropped. It holds at most one open file's entries per
//! list. The files roll where a single run of [`TableCommit::write_manifest_files`] rolls
//! them (`manifest_file_is_full`), and their metadata is computed by the same code.
//!
//! It takes the files of an ADD-only commit: new files and new changelog files. Deleted files,
//! index files, compaction increments and a `check_from_snapshot` are refused, because what
//! they commit or check depends on the snapshot the commit builds on.

use super::{
    manifest_file_is_full, CommitMessage, FileKind, ManifestEntry, ManifestFileMeta, TableCommit,
    MANIFEST_ENTRY_SCHEMA,
};
use crate::spec::avro::ocf_writer::OcfWriter;
use crate::Result;
use apache_avro::Schema;

/// The manifest files one commit's [`DeltaManifestWriter`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenDeltaManifests {
    /// The delta manifest files (the data files added), in the order written.
    pub delta: Vec<ManifestFileMeta>,
    /// The changelog manifest files, in the order written.
    pub changelog: Vec<ManifestFileMeta>,
    /// The rows the delta adds: the snapshot's `deltaRecordCount`.
    pub delta_record_count: i64,
    /// The rows of the changelog files: the snapshot's `changelogRecordCount`.
    pub changelog_record_count: i64,
    /// Every path written (manifests and their sidecars), for the caller to delete if the
    /// commit is given up.
    pub paths: Vec<String>,
}

/// The manifest file of one list being filled.
struct OpenManifest {
    writer: OcfWriter,
    entries: Vec<ManifestEntry>,
}

/// One list of manifest entries (delta or changelog): its name prefix, its open file, the
/// index the next file's name takes, and what it wrote since the last `finish`.
struct ListWriter {
    prefix: String,
    open: Option<OpenManifest>,
    next_index: usize,
    written: Vec<ManifestFileMeta>,
    record_count: i64,
}

impl ListWriter {
    fn new(prefix: String) -> Self {
        Self {
            prefix,
            open: None,
            next_index: 0,
            written: Vec::new(),
            record_count: 0,
        }
    }
}

/// Writes one commit's delta and changelog manifest files from batches of messages (see the
/// module docs). Created by [`TableCommit::delta_manifest_writer`]. Call [`Self::finish`] to
/// write the last files, or [`Self::abort`] to delete what was written. After an error from
/// [`Self::add`] or [`Self::finish`], the files written so far are still the writer's:
/// [`Self::abort`] deletes them. A writer dropped without either leaves its files, which no
/// snapshot names, for orphan-file cleanup.
pub struct DeltaManifestWriter<'c> {
    commit: &'c TableCommit,
    schema: Schema,
    manifest_dir: String,
    lists: [ListWriter; 2],
    pub(super) paths: Vec<String>,
}

const DELTA: usize = 0;
const CHANGELOG: usize = 1;

impl TableCommit {
    /// A writer of this commit's delta and changelog manifest files that takes the messages
    /// in batches ([`DeltaManifestWriter`]). Its files are named as
    /// [`TableCommit::commit`] names the files of one attempt.
    pub fn delta_manifest_writer(&self) -> Result<DeltaManifestWriter<'_>> {
        Ok(DeltaManifestWriter {
            commit: self,
            schema: Schema::parse_str(MANIFEST_ENTRY_SCHEMA)?,
            manifest_dir: self.snapshot_manager.manifest_dir(),
            lists: [
                ListWriter::new(format!("manifest-{}", uuid::Uuid::new_v4())),
                ListWriter::new(format!("manifest-{}-changelog", uuid::Uuid::new_v4())),
            ],
            paths: Vec::new(),
        })
    }
}

impl DeltaManifestWriter<'_> {
    /// Adds the files of `messages`: each message's new files to the delta, its changelog
    /// files to the changelog, in message order. Writes every manifest file that reaches the
    /// target size. A message with deleted files, index files, a compaction increment or a
    /// `check_from_snapshot` is refused before any of the batch is added.
    pub async fn add(&mut self, messages: Vec<CommitMessage>) -> Result<()> {
        for message in &messages {
            let carried = [
                // A row-id check from a snapshot depends on the base snapshot too.
                ("check_from_snapshot", message.check_from_snapshot.is_none()),
                ("deleted_files", message.deleted_files.is_empty()),
                ("new_index_files", message.new_index_files.is_empty()),
                (
                    "deleted_index_files",
                    message.deleted_index_files.is_empty(),
                ),
                ("compact_before", message.compact_before.is_empty()),
                ("compact_after", message.compact_after.is_empty()),
                (
                    "compact_changelog_files",
                    message.compact_changelog_files.is_empty(),
                ),
                (
                    "compact_new_index_files",
                    message.compact_new_index_files.is_empty(),
                ),
                (
                    "compact_deleted_index_files",
                    message.compact_deleted_index_files.is_empty(),
                ),
            ];
            if let Some((list, _)) = carried.iter().find(|(_, empty)| !empty) {
                return Err(crate::Error::Unsupported {
                    message: format!(
                        "the delta manifest writer takes new files and new changelog files \
                         only; a message of partition {:?} bucket {} carries {list}",
                        message.partition, message.bucket
                    ),
                });
            }
        }
        let entries = self.commit.messages_into_entries(messages);
        self.append(DELTA, entries.data).await?;
        self.append(CHANGELOG, entries.changelog).await
    }

    /// Writes the last, partly filled, manifest file of each list and hands over every file
    /// written: the writer then holds none, so a later [`Self::abort`] deletes nothing of
    /// them. If a write fails, the writer keeps them all, for [`Self::abort`].
    pub async fn finish(&mut self) -> Result<WrittenDeltaManifests> {
        for list in [DELTA, CHANGELOG] {
            if let Some(open) = self.lists[list].open.take() {
                self.write(list, open).await?;
            }
        }
        let [delta, changelog] = &mut self.lists;
        Ok(WrittenDeltaManifests {
            delta_record_count: std::mem::take(&mut delta.record_count),
            changelog_record_count: std::mem::take(&mut changelog.record_count),
            delta: std::mem::take(&mut delta.written),
            changelog: std::mem::take(&mut changelog.written),
            paths: std::mem::take(&mut self.paths),
        })
    }

    /// Deletes every file written so far. A failed deletion is reported after the others are
    /// tried.
    pub async fn abort(self) -> Result<()> {
        let file_io = self.commit.snapshot_manager.file_io();
        let mut first_error = None;
        for path in &self.paths {
            if let Err(error) = file_io.delete_file(path).await {
                first_error.get_or_insert(error);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Encodes `entries` into the list's open file, writing each file that reaches the target
    /// size at a rolling check.
    async fn append(&mut self, list: usize, entries: Vec<ManifestEntry>) -> Result<()> {
        let target_size = self.commit.manifest_target_size.max(1) as usize;
        for entry in entries {
            // `add` admits new files only: every entry is an ADD.
            debug_assert_eq!(*entry.kind(), FileKind::Add);
            self.lists[list].record_count = self.lists[list]
                .record_count
                .checked_add(entry.file().row_count)
                .ok_or_else(|| crate::Error::DataInvalid {
                    message: "the commit's record count overflows i64".into(),
                    source: None,
                })?;
            let open = match &mut self.lists[list].open {
                Some(open) => open,
                open @ None => open.insert(OpenManifest {
                    writer: OcfWriter::new(
                        &self.schema,
                        &self.commit.manifest_compression,
                        crate::spec::DEFAULT_AVRO_BLOCK_SIZE,
                    )?,
                    entries: Vec::new(),
                }),
            };
            open.writer.append(|out| {
                crate::spec::avro::manifest_entry_encode::encode_manifest_entry(out, &entry)
            })?;
            open.entries.push(entry);
            let full = self.lists[list].open.take_if(|open| {
                manifest_file_is_full(open.entries.len(), &open.writer, target_size)
            });
            if let Some(full) = full {
                self.write(list, full).await?;
            }
        }
        Ok(())
    }

    /// Writes one filled manifest file of `list` and records it.
    async fn write(&mut self, list: usize, open: OpenManifest) -> Result<()> {
        let bytes = open.writer.into_bytes()?;
        let file = self.commit.encoded_manifest_file(&open.entries, bytes)?;
        drop(open.entries);
        let writer = &mut self.lists[list];
        let file_name = format!("{}-{}", writer.prefix, writer.next_index);
        writer.next_index += 1;
        let (meta, write) = TableCommit::place_manifest_file(
            self.commit.snapshot_manager.file_io(),
            &self.manifest_dir,
            file_name,
            file,
            &mut self.paths,
        );
        writer.written.push(meta);
        write.await
    }
}
