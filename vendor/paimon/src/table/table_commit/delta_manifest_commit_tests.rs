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

/// Publishes what it is given, records it, and on its first call can first let another
/// committer publish a snapshot and then report the race lost.
struct RecordingPublisher {
    manager: SnapshotManager,
    published: std::sync::Mutex<Vec<(Snapshot, Vec<PartitionStatistics>)>>,
    /// Committed (as another committer) before the first publication, which then loses.
    racer: std::sync::Mutex<Option<(TableCommit, Vec<CommitMessage>)>>,
}

#[async_trait::async_trait]
impl SnapshotCommit for RecordingPublisher {
    async fn commit(
        &self,
        _: Option<&str>,
        snapshot: &Snapshot,
        _: &str,
        statistics: &[PartitionStatistics],
    ) -> Result<bool> {
        let racer = self.racer.lock().unwrap().take();
        if let Some((racer, messages)) = racer {
            racer.commit(messages).await?;
            return Ok(false);
        }
        let published = self.manager.commit_snapshot(snapshot).await?;
        if published {
            let mut statistics = statistics.to_vec();
            statistics.sort_by_key(|stats| format!("{:?}", stats.spec.get("pt")));
            self.published
                .lock()
                .unwrap()
                .push((snapshot.clone(), statistics));
        }
        Ok(published)
    }
}

fn recording(commit: &mut TableCommit) -> Arc<RecordingPublisher> {
    commit.commit_min_retry_wait_ms = 0;
    commit.commit_max_retry_wait_ms = 0;
    let publisher = Arc::new(RecordingPublisher {
        manager: commit.snapshot_manager.clone(),
        published: std::sync::Mutex::new(Vec::new()),
        racer: std::sync::Mutex::new(None),
    });
    commit.snapshot_commit = publisher.clone();
    publisher
}

/// A snapshot without what differs between two commits of the same files: its uuid, time,
/// the names of its manifest lists, and the size of its changelog manifest list (which names
/// manifest files by random UUIDs, so its compressed size differs by a byte or two).
fn comparable(snapshot: &Snapshot) -> serde_json::Value {
    let mut value = serde_json::to_value(snapshot).unwrap();
    for field in [
        "uuid",
        "timeMillis",
        "baseManifestList",
        "deltaManifestList",
        "changelogManifestList",
        "changelogManifestListSize",
    ] {
        value.as_object_mut().unwrap().remove(field);
    }
    value
}

/// 40 messages over three partitions, each with one new file, every fourth with a changelog
/// file too.
fn partitioned_messages(prefix: &str) -> Vec<CommitMessage> {
    (0..40)
        .map(|i| {
            let pt = ["a", "b", "c"][i % 3];
            let mut message = CommitMessage::new(
                partition_bytes(pt),
                0,
                vec![test_data_file(&format!("{prefix}-{i:02}.parquet"), 1 + i as i64)],
            );
            if i % 4 == 0 {
                message.new_changelog_files =
                    vec![test_data_file(&format!("{prefix}-changelog-{i:02}.parquet"), 3)];
            }
            message
        })
        .collect()
}

/// A commit of the table at `path` by another user than the commits under test (whose
/// identifier filter would otherwise see its batch identifier as covering theirs).
fn other_user_commit(commit: &TableCommit, user: &str) -> TableCommit {
    TableCommit::new(commit.table.clone(), user.into())
}

/// Creates the data and changelog files `messages` add, empty, where the commit looks for
/// them.
async fn create_files(io: &FileIO, commit: &TableCommit, messages: &[CommitMessage]) {
    for message in messages {
        let directory = commit
            .bucket_path(&message.partition, message.bucket)
            .unwrap();
        for file in message.new_files.iter().chain(&message.new_changelog_files) {
            io.new_output(&format!("{directory}/{}", file.file_name))
                .unwrap()
                .write(bytes::Bytes::new())
                .await
                .unwrap();
        }
    }
}

/// Writes `messages` through a delta manifest writer of `commit`, in batches of `batch`.
async fn write_ahead(
    commit: &TableCommit,
    messages: Vec<CommitMessage>,
    batch: usize,
) -> WrittenDeltaManifests {
    let mut writer = commit.delta_manifest_writer().unwrap();
    for chunk in messages.chunks(batch) {
        writer.add(chunk.to_vec()).await.unwrap();
    }
    writer.finish().await.unwrap()
}

/// The entries a snapshot's changelog manifest list names.
async fn changelog_entries(io: &FileIO, path: &str, snapshot: &Snapshot) -> Vec<ManifestEntry> {
    let Some(list) = snapshot.changelog_manifest_list() else {
        return vec![];
    };
    let dir = format!("{path}/manifest");
    let mut entries = Vec::new();
    for meta in ManifestList::read(io, &format!("{dir}/{list}")).await.unwrap() {
        entries.extend(
            Manifest::read(io, &format!("{dir}/{}", meta.file_name()))
                .await
                .unwrap(),
        );
    }
    entries
}

fn sorted_by_name(mut entries: Vec<ManifestEntry>) -> Vec<ManifestEntry> {
    entries.sort_by(|a, b| a.file().file_name.cmp(&b.file().file_name));
    entries
}

/// Commits the same messages to two tables of the same history: one with
/// `commit_with_identifier` (or its filtering form), one as delta manifests written ahead in
/// batches. The snapshots agree in everything but uuid, time and list names; the live files,
/// the changelog files and the partition statistics are the same; and the snapshot names the
/// manifests written ahead, which it did not rewrite. With `race`, another committer
/// publishes first, so both commits publish on their second attempt.
async fn assert_same_snapshot_as_the_materialized_commit(filter: bool, race: bool) {
    let io = test_file_io();
    let mut outcomes = Vec::new();
    for streamed in [false, true] {
        let path = format!("memory:/delta-manifest-parity-{filter}-{race}-{streamed}");
        setup_dirs(&io, &path).await;
        let mut commit = setup_partitioned_commit(&io, &path);
        other_user_commit(&commit, "seed-user")
            .commit(partitioned_messages("seed"))
            .await
            .unwrap();
        let publisher = recording(&mut commit);
        if race {
            let racer = other_user_commit(&commit, "racer-user");
            *publisher.racer.lock().unwrap() = Some((racer, partitioned_messages("racer")));
        }
        let messages = partitioned_messages("data");
        create_files(&io, &commit, &messages).await;
        let mut written_names = None;
        match (streamed, filter) {
            (false, false) => commit.commit_with_identifier(messages, 7).await.unwrap(),
            (false, true) => commit
                .filter_and_commit_with_identifier(messages, 7)
                .await
                .unwrap(),
            (true, _) => {
                let written = write_ahead(&commit, messages, 6).await;
                if filter {
                    commit
                        .filter_and_commit_delta_manifests_with_identifier(&written, 7)
                        .await
                        .unwrap();
                } else {
                    commit
                        .commit_delta_manifests_with_identifier(&written, 7)
                        .await
                        .unwrap();
                }
                for written_path in written.paths() {
                    assert!(io.exists(written_path).await.unwrap(), "{written_path}");
                }
                written_names = Some(
                    written
                        .delta()
                        .iter()
                        .map(|meta| meta.file_name().to_string())
                        .collect::<Vec<_>>(),
                );
            }
        }
        let snapshot = latest_snapshot(&io, &path).await.unwrap();
        assert_eq!(snapshot.id(), if race { 3 } else { 2 });
        if let Some(names) = written_names {
            let list = format!("{path}/manifest/{}", snapshot.delta_manifest_list());
            let listed: Vec<String> = ManifestList::read(&io, &list)
                .await
                .unwrap()
                .iter()
                .map(|meta| meta.file_name().to_string())
                .collect();
            assert_eq!(listed, names);
        }
        let published = publisher.published.lock().unwrap().clone();
        assert_eq!(published.len(), 1);
        outcomes.push((
            comparable(&snapshot),
            sorted_by_name(active_entries(&io, &path, &snapshot).await),
            sorted_by_name(changelog_entries(&io, &path, &snapshot).await),
            published[0].1.clone(),
        ));
    }
    let streamed = outcomes.pop().unwrap();
    let materialized = outcomes.pop().unwrap();
    assert_eq!(streamed.0, materialized.0);
    assert_eq!(streamed.1.len(), if race { 120 } else { 80 });
    assert_eq!(streamed.1, materialized.1);
    assert_eq!(streamed.2.len(), 10);
    assert_eq!(streamed.2, materialized.2);
    assert_eq!(streamed.3.len(), 3);
    assert_eq!(streamed.3, materialized.3);
}

#[tokio::test]
async fn written_delta_manifests_commit_the_snapshot_of_commit_with_identifier() {
    for filter in [false, true] {
        assert_same_snapshot_as_the_materialized_commit(filter, false).await;
    }
}

#[tokio::test]
async fn a_retry_after_a_lost_race_reuses_the_written_delta_manifests() {
    for filter in [false, true] {
        assert_same_snapshot_as_the_materialized_commit(filter, true).await;
    }
}

/// A rerun of a committed identifier, through the filtering form, publishes nothing again.
#[tokio::test]
async fn a_committed_identifier_is_not_published_again_from_written_manifests() {
    let io = test_file_io();
    let path = "memory:/delta-manifest-rerun";
    setup_dirs(&io, path).await;
    let commit = setup_partitioned_commit(&io, path);
    let messages = partitioned_messages("data");
    create_files(&io, &commit, &messages).await;
    let written = write_ahead(&commit, messages, 5).await;
    commit
        .filter_and_commit_delta_manifests_with_identifier(&written, 3)
        .await
        .unwrap();
    commit
        .filter_and_commit_delta_manifests_with_identifier(&written, 3)
        .await
        .unwrap();
    let snapshot = latest_snapshot(&io, path).await.unwrap();
    assert_eq!(snapshot.id(), 1);
    assert_eq!(active_entries(&io, path, &snapshot).await.len(), 40);
}

/// Runs the filtering commit of `messages` both ways on a table whose history is `seed`, and
/// returns the two errors' messages.
async fn refusals_of_both_paths(
    name: &str,
    options: HashMap<String, String>,
    seed: Vec<CommitMessage>,
    messages: Vec<CommitMessage>,
    constant_keys: bool,
    files_exist: bool,
) -> (String, String) {
    let io = test_file_io();
    let mut refusals = Vec::new();
    for streamed in [false, true] {
        let path = format!("memory:/delta-manifest-refusal-{name}-{streamed}");
        setup_dirs(&io, &path).await;
        let commit = TableCommit::new(
            test_table_with_options(&io, &path, options.clone()),
            "test-user".into(),
        );
        other_user_commit(&commit, "seed-user")
            .commit(seed.clone())
            .await
            .unwrap();
        if files_exist {
            create_files(&io, &commit, &messages).await;
        }
        let error = if streamed {
            let mut writer = commit.delta_manifest_writer().unwrap();
            writer.facts.hasher.constant = constant_keys;
            writer.add(messages.clone()).await.unwrap();
            let written = writer.finish().await.unwrap();
            commit
                .filter_and_commit_delta_manifests_with_identifier(&written, 5)
                .await
                .unwrap_err()
        } else {
            commit
                .filter_and_commit_with_identifier(messages.clone(), 5)
                .await
                .unwrap_err()
        };
        assert_eq!(latest_snapshot(&io, &path).await.unwrap().id(), 1);
        refusals.push(error.to_string());
    }
    let streamed = refusals.pop().unwrap();
    (refusals.pop().unwrap(), streamed)
}

/// A file already live in the base snapshot is refused as `filter_and_commit_with_identifier`
/// refuses it, also when every file's key collides (the check reads the delta back).
#[tokio::test]
async fn a_file_live_in_the_base_is_refused_as_the_materialized_commit_refuses_it() {
    for constant_keys in [false, true] {
        let seed: Vec<_> = (0..5)
            .map(|i| append_message(&format!("seed-{i}.parquet")))
            .collect();
        let messages = vec![
            append_message("new-0.parquet"),
            append_message("seed-3.parquet"),
            append_message("new-1.parquet"),
        ];
        let (materialized, streamed) = refusals_of_both_paths(
            &format!("duplicate-{constant_keys}"),
            HashMap::new(),
            seed,
            messages,
            constant_keys,
            true,
        )
        .await;
        assert!(
            materialized.contains("Duplicate ADD entry for file 'seed-3.parquet'"),
            "{materialized}"
        );
        assert_eq!(streamed, materialized);
    }
}

/// A retried commit whose identifier is not in the table checks that the files it adds
/// exist, as `filter_and_commit_with_identifier` does, reading the written manifests back.
#[tokio::test]
async fn a_missing_file_is_refused_as_the_materialized_commit_refuses_it() {
    let (materialized, streamed) = refusals_of_both_paths(
        "missing",
        HashMap::new(),
        vec![append_message("seed.parquet")],
        vec![append_message("absent.parquet")],
        false,
        false,
    )
    .await;
    assert!(
        materialized.contains("Cannot recover commit: file")
            && materialized.contains("absent.parquet' does not exist"),
        "{materialized}"
    );
    assert_eq!(
        streamed.replace("-true/", "/"),
        materialized.replace("-false/", "/")
    );
}

/// When every file's key collides, files that are not in the base still commit: a collision
/// costs a read of the delta, not a refusal.
#[tokio::test]
async fn colliding_keys_do_not_refuse_new_files() {
    let io = test_file_io();
    let path = "memory:/delta-manifest-collisions";
    setup_dirs(&io, path).await;
    let commit = TableCommit::new(
        test_table_with_options(
            &io,
            path,
            HashMap::from([("manifest.target-file-size".to_string(), "1 kb".to_string())]),
        ),
        "test-user".into(),
    );
    let seed: Vec<_> = (0..20)
        .map(|i| append_message(&format!("seed-{i}.parquet")))
        .collect();
    other_user_commit(&commit, "seed-user")
        .commit(seed)
        .await
        .unwrap();
    let mut writer = commit.delta_manifest_writer().unwrap();
    writer.facts.hasher.constant = true;
    // Over 1,000 files: the 1 KB manifests roll at the first rolling check, so the read-back
    // reads written files too.
    let messages: Vec<_> = (0..1100)
        .map(|i| append_message(&format!("new-{i}.parquet")))
        .collect();
    create_files(&io, &commit, &messages).await;
    for chunk in messages.chunks(50) {
        writer.add(chunk.to_vec()).await.unwrap();
    }
    let written = writer.finish().await.unwrap();
    assert!(written.delta().len() > 1);
    commit
        .filter_and_commit_delta_manifests_with_identifier(&written, 1)
        .await
        .unwrap();
    let snapshot = latest_snapshot(&io, path).await.unwrap();
    assert_eq!(active_entries(&io, path, &snapshot).await.len(), 1120);
}

/// A file added twice in one commit is refused by the writer, with the message of
/// `validate_file_entries`, whether the first is in the same batch, the open manifest file or
/// a written one, with real keys and with colliding ones. The writer then only aborts, and
/// the abort deletes what it wrote.
#[tokio::test]
async fn the_writer_refuses_a_file_added_twice_wherever_the_first_is() {
    let io = test_file_io();
    for constant_keys in [false, true] {
        // The repeated file is the first: in the same batch, in the open manifest file, or
        // (1 KB manifests roll at the first rolling check, at 1,000 files) in a written one.
        for (case, target, batch) in [
            ("batch", "8 mb", 1200),
            ("open", "8 mb", 50),
            ("written", "1 kb", 50),
        ] {
            let path = format!("memory:/delta-manifest-twice-{constant_keys}-{case}");
            setup_dirs(&io, &path).await;
            let commit = TableCommit::new(
                test_table_with_options(
                    &io,
                    &path,
                    HashMap::from([(
                        "manifest.target-file-size".to_string(),
                        target.to_string(),
                    )]),
                ),
                "test-user".into(),
            );
            let mut writer = commit.delta_manifest_writer().unwrap();
            writer.facts.hasher.constant = constant_keys;
            let mut messages: Vec<_> = (0..1100)
                .map(|i| append_message(&format!("file-{i}.parquet")))
                .collect();
            messages.push(append_message("file-0.parquet"));
            let mut refusal = None;
            for chunk in messages.chunks(batch) {
                if let Err(error) = writer.add(chunk.to_vec()).await {
                    refusal = Some(error.to_string());
                    break;
                }
            }
            let refusal = refusal.expect("the repeated file is refused");
            assert!(
                refusal.contains("Duplicate ADD entry for file 'file-0.parquet' in bucket 0."),
                "{case}: {refusal}"
            );
            assert!(writer.finish().await.is_err(), "{case}");
            assert!(writer.add(vec![]).await.is_err(), "{case}");
            let paths = writer.paths.clone();
            assert_eq!(paths.is_empty(), case != "written", "{case}");
            writer.abort().await.unwrap();
            for written in paths {
                assert!(!io.exists(&written).await.unwrap(), "{written}");
            }
        }
    }
}

/// A partition whose live fixed-bucket files have one bucket count refuses files of another,
/// as `filter_and_commit_with_identifier` refuses them.
#[tokio::test]
async fn a_second_bucket_count_in_a_partition_is_refused_as_the_materialized_commit_refuses_it(
) {
    let with_buckets = |name: &str, total_buckets: i32| {
        let mut message = append_message(name);
        message.total_buckets = Some(total_buckets);
        message
    };
    let (materialized, streamed) = refusals_of_both_paths(
        "buckets",
        HashMap::from([("bucket".to_string(), "2".to_string())]),
        vec![with_buckets("three.parquet", 3)],
        vec![with_buckets("four.parquet", 4)],
        false,
        true,
    )
    .await;
    assert!(
        materialized.contains("different total bucket counts"),
        "{materialized}"
    );
    assert!(
        streamed.contains("different total bucket counts"),
        "{streamed}"
    );
}

/// A table with row tracking cannot take delta manifests written ahead, and manifests written
/// for one table cannot be published to another.
#[tokio::test]
async fn delta_manifests_are_refused_by_row_tracking_and_by_another_table() {
    let io = test_file_io();
    let tracked = TableCommit::new(
        test_table_with_options(
            &io,
            "memory:/delta-manifest-row-tracking",
            HashMap::from([("row-tracking.enabled".to_string(), "true".to_string())]),
        ),
        "test-user".into(),
    );
    let error = tracked.delta_manifest_writer().err().unwrap().to_string();
    assert!(error.contains("row tracking"), "{error}");

    let one = "memory:/delta-manifest-table-one";
    let other = "memory:/delta-manifest-table-other";
    setup_dirs(&io, one).await;
    setup_dirs(&io, other).await;
    let written = write_ahead(&setup_commit(&io, one), vec![append_message("f.parquet")], 1).await;
    let error = setup_commit(&io, other)
        .commit_delta_manifests_with_identifier(&written, 1)
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("not to this table's"), "{error}");
    assert!(latest_snapshot(&io, other).await.is_none());
}
