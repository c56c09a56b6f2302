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

/// 2,500 messages over three buckets, each with one new file (eight extra files, so a 1 KB
/// target rolls at every rolling check), every fifth with a changelog file too.
fn delta_writer_messages() -> Vec<CommitMessage> {
    (0..2500)
        .map(|i| {
            let mut file = test_data_file(&format!("data-{i:04}.parquet"), 1 + i as i64 % 7);
            file.extra_files = (0..8).map(|j| format!("data-{i:04}-{j}.idx")).collect();
            let mut message = CommitMessage::new(vec![], i % 3, vec![file]);
            if i % 5 == 0 {
                message.new_changelog_files =
                    vec![test_data_file(&format!("changelog-{i:04}.parquet"), 2)];
            }
            message
        })
        .collect()
}

/// A manifest file's metadata without its name, which differs between two writes of the
/// same entries.
fn unnamed(metas: &[ManifestFileMeta]) -> Vec<ManifestFileMeta> {
    metas
        .iter()
        .map(|meta| meta.clone().with_file_name(String::new()).with_extra_files(None))
        .collect()
}

async fn read_entries(io: &FileIO, dir: &str, metas: &[ManifestFileMeta]) -> Vec<ManifestEntry> {
    let mut entries = Vec::new();
    for meta in metas {
        let read = crate::spec::Manifest::read(io, &format!("{dir}/{}", meta.file_name()))
            .await
            .unwrap();
        assert_eq!(read.len() as i64, meta.num_added_files(), "{}", meta.file_name());
        entries.extend(read);
    }
    entries
}

/// Messages added in batches of seven give the manifest files one call of
/// `write_manifest_files` gives the whole list (one run per list below the threshold for
/// several threads): the same entries in the same order (read back from both), rolled at the
/// same places, with the same metadata, and the snapshot's record counts.
#[tokio::test]
async fn delta_manifests_written_in_batches_match_the_whole_list_written_at_once() {
    let io = test_file_io();
    let path = "memory:/delta-manifests-in-batches";
    setup_dirs(&io, path).await;
    let table = test_table_with_options(
        &io,
        path,
        HashMap::from([("manifest.target-file-size".to_string(), "1 kb".to_string())]),
    );
    let commit = TableCommit::new(table, "test-user".to_string());
    let messages = delta_writer_messages();
    assert!(messages.len() < 2 * MIN_ENTRIES_PER_ENCODING_THREAD);

    let mut writer = commit.delta_manifest_writer().unwrap();
    for batch in messages.chunks(7) {
        writer.add(batch.to_vec()).await.unwrap();
    }
    let written = writer.finish().await.unwrap();

    let expected = commit.messages_into_entries(messages);
    let dir = format!("{path}/manifest");
    let mut created = Vec::new();
    let mut whole = commit
        .write_manifest_files(
            &io,
            &dir,
            &[
                ("manifest-whole", &expected.data[..]),
                ("manifest-whole-changelog", &expected.changelog[..]),
            ],
            &mut created,
        )
        .await
        .unwrap();
    let whole_changelog = whole.pop().unwrap();
    let whole_delta = whole.pop().unwrap();

    assert!(written.delta.len() > 1, "{} delta files", written.delta.len());
    assert_eq!(unnamed(&written.delta), unnamed(&whole_delta));
    assert_eq!(unnamed(&written.changelog), unnamed(&whole_changelog));
    let delta = read_entries(&io, &dir, &written.delta).await;
    assert_eq!(delta, read_entries(&io, &dir, &whole_delta).await);
    assert_eq!(
        read_entries(&io, &dir, &written.changelog).await,
        read_entries(&io, &dir, &whole_changelog).await
    );
    let names = |entries: &[ManifestEntry]| -> Vec<String> {
        entries.iter().map(|e| e.file().file_name.clone()).collect()
    };
    assert_eq!(names(&delta), names(&expected.data));
    assert_eq!(
        written.delta_record_count,
        expected.data.iter().map(|e| e.file().row_count).sum::<i64>()
    );
    assert_eq!(written.changelog_record_count, 2 * 500);
    let mut paths: Vec<String> = written
        .delta
        .iter()
        .chain(&written.changelog)
        .map(|meta| format!("{dir}/{}", meta.file_name()))
        .collect();
    paths.sort();
    let mut reported = written.paths.clone();
    reported.sort();
    assert_eq!(reported, paths);
}

/// Deleted files, compaction increments and a row-id check from a snapshot depend on the
/// snapshot a commit builds on: the writer refuses them, names the field, and writes nothing
/// of the batch.
#[tokio::test]
async fn the_delta_manifest_writer_refuses_lists_that_depend_on_the_base_snapshot() {
    let io = test_file_io();
    let path = "memory:/delta-manifests-refusals";
    setup_dirs(&io, path).await;
    let commit = setup_commit(&io, path);
    let with = |set: fn(&mut CommitMessage)| {
        let mut message = append_message("data.parquet");
        set(&mut message);
        message
    };
    let cases: [(&str, CommitMessage); 4] = [
        ("check_from_snapshot", with(|m| m.check_from_snapshot = Some(1))),
        (
            "deleted_files",
            with(|m| m.deleted_files = vec![test_data_file("old.parquet", 1)]),
        ),
        (
            "compact_before",
            with(|m| m.compact_before = vec![test_data_file("old.parquet", 1)]),
        ),
        (
            "compact_after",
            with(|m| m.compact_after = vec![test_data_file("new.parquet", 1)]),
        ),
    ];
    for (list, message) in cases {
        let mut writer = commit.delta_manifest_writer().unwrap();
        let error = writer
            .add(vec![append_message("first.parquet"), message])
            .await
            .unwrap_err();
        assert!(
            matches!(&error, crate::Error::Unsupported { message } if message.contains(list)),
            "{list}: {error}"
        );
        let written = writer.finish().await.unwrap();
        assert!(written.delta.is_empty() && written.paths.is_empty(), "{list}");
    }
}

/// `abort` deletes every manifest file the writer wrote.
#[tokio::test]
async fn an_aborted_delta_manifest_writer_deletes_its_files() {
    let io = test_file_io();
    let path = "memory:/delta-manifests-abort";
    setup_dirs(&io, path).await;
    let table = test_table_with_options(
        &io,
        path,
        HashMap::from([("manifest.target-file-size".to_string(), "1 kb".to_string())]),
    );
    let commit = TableCommit::new(table, "test-user".to_string());
    let mut writer = commit.delta_manifest_writer().unwrap();
    writer.add(delta_writer_messages()).await.unwrap();
    writer.settle().await.unwrap();
    let paths = writer.paths.clone();
    assert!(paths.len() > 1, "{} files written", paths.len());
    for written in &paths {
        assert!(io.exists(written).await.unwrap(), "{written}");
    }
    writer.abort().await.unwrap();
    for written in &paths {
        assert!(!io.exists(written).await.unwrap(), "{written} is left");
    }
}

/// `finish` hands the files over: `abort` afterwards deletes none of them, and files written
/// after it take new names.
#[tokio::test]
async fn a_finished_delta_manifest_writer_no_longer_owns_its_files() {
    let io = test_file_io();
    let path = "memory:/delta-manifests-finished";
    setup_dirs(&io, path).await;
    let commit = setup_commit(&io, path);
    let mut writer = commit.delta_manifest_writer().unwrap();
    writer.add(vec![append_message("first.parquet")]).await.unwrap();
    let first = writer.finish().await.unwrap();
    assert_eq!(first.paths.len(), 1);
    writer.add(vec![append_message("second.parquet")]).await.unwrap();
    let second = writer.finish().await.unwrap();
    assert_eq!(second.paths.len(), 1);
    assert_ne!(first.paths, second.paths);
    assert_eq!(second.delta_record_count, first.delta_record_count);
    writer.abort().await.unwrap();
    for written in first.paths.iter().chain(&second.paths) {
        assert!(io.exists(written).await.unwrap(), "{written} was deleted");
    }
}
