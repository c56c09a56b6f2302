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

//! The thread that encodes a [`super::DeltaManifestWriter`]'s entries into manifest files.
//!
//! Encoding (Avro records, block compression) is most of a manifest writer's work. On the
//! caller's task it would run in turn with whatever produces the batches (decoding payloads),
//! so the writer hands each batch to a thread of its own and goes on. The thread keeps the
//! open file of each list, rolls it by the rule of the one-shot path
//! ([`manifest_file_is_full`]), and hands each full file back, in order, for the writer to
//! name and write. At most [`BATCHES_IN_FLIGHT`] batches wait for it, so a caller faster than
//! the encoder waits instead of piling batches up.

use super::OpenManifest;
use crate::spec::avro::manifest_entry_encode::encode_manifest_entry;
use crate::spec::avro::ocf_writer::OcfWriter;
use crate::spec::ManifestEntry;
use crate::table::table_commit::manifest_file_is_full;
use crate::Result;
use apache_avro::Schema;
use tokio::sync::mpsc;

/// Batches sent to the encoder and not yet taken by it.
const BATCHES_IN_FLIGHT: usize = 2;

/// The open file of each list (delta, changelog).
pub(super) type OpenFiles = [Option<OpenManifest>; 2];

/// What the writer asks of the encoder thread.
enum Job {
    /// Encode these entries into `list`'s open file.
    Encode {
        list: usize,
        entries: Vec<ManifestEntry>,
    },
    /// Hand back the open files, once every batch before is encoded.
    HandBackOpen,
    /// Keep these open files (handed back before) and go on filling them.
    Restore(Box<OpenFiles>),
}

/// What the encoder thread hands back, in the order of the jobs.
pub(super) enum Encoded {
    /// A file of `list` that reached the target size, to be written.
    Full { list: usize, file: OpenManifest },
    /// The open files, answering a hand-back request.
    Open(Box<OpenFiles>),
}

/// The writer's end of its encoder thread. Dropping it ends the thread once the batch it is
/// encoding is done; full files it had not handed back are never written.
pub(super) struct ManifestEncoder {
    jobs: mpsc::Sender<Job>,
    encoded: mpsc::UnboundedReceiver<Result<Encoded>>,
}

impl ManifestEncoder {
    /// Starts the thread: it encodes with `schema` and `compression`, and rolls files at
    /// `target_size` bytes.
    pub(super) fn start(schema: Schema, compression: String, target_size: usize) -> Result<Self> {
        let (jobs, job_queue) = mpsc::channel(BATCHES_IN_FLIGHT);
        let (results, encoded) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("paimon-manifest-encoder".into())
            .spawn(move || encode_jobs(&schema, &compression, target_size, job_queue, results))
            .map_err(|error| crate::Error::UnexpectedError {
                message: "cannot start the manifest encoder thread".into(),
                source: Some(Box::new(error)),
            })?;
        Ok(Self { jobs, encoded })
    }

    /// Queues `entries` for `list`, waiting while [`BATCHES_IN_FLIGHT`] batches are queued.
    pub(super) async fn encode(&mut self, list: usize, entries: Vec<ManifestEntry>) -> Result<()> {
        self.send(Job::Encode { list, entries }).await
    }

    /// Asks for the open files: the answer comes after the full files of every batch queued.
    pub(super) async fn request_open(&mut self) -> Result<()> {
        self.send(Job::HandBackOpen).await
    }

    /// Gives back open files taken with [`Self::request_open`].
    pub(super) async fn restore(&mut self, open: OpenFiles) -> Result<()> {
        self.send(Job::Restore(Box::new(open))).await
    }

    /// The next thing handed back, if the thread has one ready.
    pub(super) fn ready(&mut self) -> Result<Option<Encoded>> {
        match self.encoded.try_recv() {
            Ok(encoded) => encoded.map(Some),
            Err(mpsc::error::TryRecvError::Empty) => Ok(None),
            Err(mpsc::error::TryRecvError::Disconnected) => Err(stopped()),
        }
    }

    /// The next thing handed back, waiting for it.
    pub(super) async fn next(&mut self) -> Result<Encoded> {
        self.encoded.recv().await.ok_or_else(stopped)?
    }

    async fn send(&mut self, job: Job) -> Result<()> {
        self.jobs.send(job).await.map_err(|_| stopped())
    }
}

/// The error of a writer whose encoder thread ended: after an encoding error (reported
/// before this one) or a panic.
fn stopped() -> crate::Error {
    crate::Error::UnexpectedError {
        message: "the manifest encoder thread has stopped".into(),
        source: None,
    }
}

/// The encoder thread: runs the jobs in order until the writer drops its end, or until an
/// encoding error, which it hands back last.
fn encode_jobs(
    schema: &Schema,
    compression: &str,
    target_size: usize,
    mut jobs: mpsc::Receiver<Job>,
    results: mpsc::UnboundedSender<Result<Encoded>>,
) {
    let mut open: OpenFiles = [None, None];
    while let Some(job) = jobs.blocking_recv() {
        let outcome = match job {
            Job::Encode { list, entries } => {
                encode_entries(
                    schema,
                    compression,
                    target_size,
                    &mut open[list],
                    entries,
                    |file| {
                        // A writer that stopped listening is gone: nothing is left to write.
                        let _ = results.send(Ok(Encoded::Full { list, file }));
                    },
                )
            }
            Job::HandBackOpen => {
                let _ = results.send(Ok(Encoded::Open(Box::new(std::mem::take(&mut open)))));
                Ok(())
            }
            Job::Restore(files) => {
                open = *files;
                Ok(())
            }
        };
        if let Err(error) = outcome {
            let _ = results.send(Err(error));
            return;
        }
    }
}

/// Encodes `entries` into the open file `open`, handing each file that reaches the target
/// size at a rolling check to `full`.
fn encode_entries(
    schema: &Schema,
    compression: &str,
    target_size: usize,
    open: &mut Option<OpenManifest>,
    entries: Vec<ManifestEntry>,
    mut full: impl FnMut(OpenManifest),
) -> Result<()> {
    for entry in entries {
        let file = match open {
            Some(file) => file,
            None => open.insert(OpenManifest {
                writer: OcfWriter::new(schema, compression, crate::spec::DEFAULT_AVRO_BLOCK_SIZE)?,
                entries: Vec::new(),
            }),
        };
        file.writer
            .append(|out| encode_manifest_entry(out, &entry))?;
        file.entries.push(entry);
        if let Some(file) = open
            .take_if(|file| manifest_file_is_full(file.entries.len(), &file.writer, target_size))
        {
            full(file);
        }
    }
    Ok(())
}
