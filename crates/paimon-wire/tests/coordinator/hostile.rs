//! Hostile payloads, round two (issue 14): payloads that pass every per-field rule but
//! contradict the table or escape it. Every refusal is checked to leave the table unchanged
//! (same snapshots) and still readable (same rows).

use indexmap::IndexMap;
use paimon::spec::{DeletionVectorMeta, GlobalIndexMeta, IndexFileMeta};
use paimon::table::{CommitMessage, Table};
use paimon_wire::coordinator::validate::{MAX_FILE_ROW_COUNT, MAX_TOTAL_BUCKETS};
use paimon_wire::coordinator::{Binding, CommitOutcome, Rule};
use paimon_wire::{serialize_list, SerializerVersion};

use super::support::{
    append_coordinator, bind, expected, find_files, read_rows, rule_of, send, snapshot_count,
    worker_messages, Kind, Unchanged, Warehouse, USER,
};

const V: SerializerVersion = SerializerVersion::CURRENT;

/// A table of `kind` holding one committed worker payload of `rows` (snapshot 1), and the
/// messages of that payload.
pub async fn committed(
    warehouse: &Warehouse,
    name: &str,
    kind: Kind,
    rows: &[(i32, &str)],
) -> (Table, Vec<CommitMessage>) {
    let table = warehouse.create(name, kind).await;
    let messages = worker_messages(&table, rows).await;
    let coordinator = append_coordinator(&table).await;
    assert_eq!(
        send(&coordinator, &messages, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    (table, messages)
}

// ---- 1. External paths -------------------------------------------------------------------

#[tokio::test]
async fn external_paths_must_be_exactly_the_files_own_bucket_path_under_a_root() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("ext", Kind::ExternalAppend).await;
    let messages = worker_messages(&table, &[(1, "a"), (2, "a")]).await;
    let file = &messages[0].new_files[0];
    let path = file
        .external_path
        .clone()
        .expect("the writer used the external root");
    let name = file.file_name.clone();
    let root = warehouse.external_root();
    let root = root.to_str().unwrap();
    assert!(path.contains(root), "{path}");
    let coordinator = append_coordinator(&table).await;
    let before = Unchanged::of(&table).await;

    // Another table's directory under the same root (the finding: it injected
    // otherdb.db/payroll's data), a second-level directory, a case-changed scheme the
    // reader does not strip, a root-relative path, and another bucket.
    let other_table = format!("file:{root}/otherdb.db/payroll/bucket-0/{name}");
    let escapes = [
        other_table,
        format!("file:{root}/bucket-0/deeper/{name}"),
        path.replacen("file:", "FILE:", 1),
        format!("{root}/bucket-0/{name}"),
        format!("file:{root}/bucket-1/{name}"),
        format!("file:{root}//bucket-0/{name}"),
    ];
    for bad in escapes {
        let mut crafted = messages.clone();
        crafted[0].new_files[0].external_path = Some(bad.clone());
        let error = send(&coordinator, &crafted, 1).await.unwrap_err();
        assert_eq!(rule_of(&error), Rule::ExternalPath, "{bad}: {error}");
        assert!(
            error
                .to_string()
                .contains("is not where this table keeps file"),
            "{bad}: {error}"
        );
        before.assert_still(&table, &bad).await;
    }

    // The `file:` and `file://` spellings of the right path are the same path.
    let mut respelled = messages.clone();
    let alternative = if let Some(rest) = path.strip_prefix("file:///") {
        format!("file:/{rest}")
    } else {
        format!("file://{}", path.strip_prefix("file:").unwrap())
    };
    respelled[0].new_files[0].external_path = Some(alternative);
    assert_eq!(
        send(&coordinator, &respelled, 1).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    assert_eq!(read_rows(&table).await, expected(&[(1, "a"), (2, "a")]));
}

#[tokio::test]
async fn a_crafted_external_path_cannot_make_abort_delete_another_tables_files() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("ext", Kind::ExternalAppend).await;
    let messages = worker_messages(&table, &[(1, "a")]).await;
    let root = warehouse.external_root();
    // Another table's LATEST hint under the same external root.
    let victim_dir = root.join("otherdb.db/payroll/snapshot");
    std::fs::create_dir_all(&victim_dir).unwrap();
    let victim = victim_dir.join("LATEST");
    std::fs::write(&victim, "7").unwrap();

    let mut crafted = messages.clone();
    crafted[0].new_files[0].file_name = "LATEST".into();
    crafted[0].new_files[0].external_path = Some(format!("file:{}", victim.to_str().unwrap()));
    let coordinator = append_coordinator(&table).await;
    let error = coordinator
        .deserialize(V, &serialize_list(&crafted, V).unwrap())
        .unwrap_err();
    assert_eq!(rule_of(&error), Rule::ExternalPath, "{error}");
    // Nothing bound, so nothing to abort: the victim stays.
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "7");
    assert_eq!(snapshot_count(&table).await, 0);
}

// ---- 2. Table state at commit time --------------------------------------------------------

#[tokio::test]
async fn committed_files_sent_again_at_another_level_are_refused() {
    let warehouse = Warehouse::new();
    let rows: &[(i32, &str)] = &[(1, "a"), (2, "b"), (3, "a")];
    let (table, messages) = committed(&warehouse, "events", Kind::PartitionedAppend, rows).await;
    let before = Unchanged::of(&table).await;
    assert_eq!(before.rows, expected(rows));

    // At level 1 they are not new files at all (rule new-file-level, issue 25); sent again
    // at level 0 they are already live.
    let mut again = messages.clone();
    for file in again.iter_mut().flat_map(|m| m.new_files.iter_mut()) {
        file.level = 1;
    }
    let coordinator = append_coordinator(&table).await;
    let error = send(&coordinator, &again, 2).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::NewFileLevel, "{error}");
    before.assert_still(&table, "level 1 resend").await;
    let error = send(&coordinator, &messages, 2).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::AlreadyLive, "{error}");
    assert!(error.to_string().contains("level(s) [0]"), "{error}");
    before.assert_still(&table, "level 0 resend").await;
}

/// A payload naming a data file that is not in storage (a worker that lost it, or claims a
/// file it never wrote) would commit a snapshot no reader can read. The commit checks every
/// added file's existence (concurrently, in the paimon crate's recovery check) and refuses,
/// naming the missing file, whichever of many payloads it is in.
#[tokio::test]
async fn a_payload_naming_a_file_not_in_storage_is_refused() {
    // 12 files per bucket directory: each file is checked on its own.
    commit_with_one_file_missing(12, true).await;
}

#[tokio::test]
async fn a_missing_file_among_many_in_one_directory_is_refused() {
    // 40 files per bucket directory: the commit lists the directory instead of checking each
    // file, and must still find the one that is not there.
    commit_with_one_file_missing(40, true).await;
}

#[tokio::test]
async fn many_files_in_one_directory_all_present_commit() {
    commit_with_one_file_missing(40, false).await;
}

/// The commit's existence checks list a directory through `FileIO::list_file_names`, which on
/// the local filesystem reads the directory itself instead of through opendal: it must name the
/// same files as the opendal listing (`list_status`), directories left out, for a plain path
/// and a `file:` URI, and fail on a missing directory.
#[tokio::test]
async fn the_names_only_listing_names_what_the_opendal_listing_names() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.parquet", "b.orc", "c with space"] {
        std::fs::write(dir.path().join(name), b"x").unwrap();
    }
    std::fs::create_dir(dir.path().join("bucket-0")).unwrap();
    let plain = dir.path().to_str().unwrap().to_string();
    let uri = format!("file:{plain}");
    let file_io = paimon::io::FileIO::from_path(&plain)
        .unwrap()
        .build()
        .unwrap();
    for directory in [plain.as_str(), uri.as_str()] {
        let mut names = file_io.list_file_names(directory).await.unwrap();
        names.sort();
        let mut listed: Vec<String> = file_io
            .list_status(directory)
            .await
            .unwrap()
            .into_iter()
            .filter(|status| !status.is_dir)
            .map(|status| status.path.rsplit('/').next().unwrap().to_string())
            .collect();
        listed.sort();
        assert_eq!(names, ["a.parquet", "b.orc", "c with space"], "{directory}");
        assert_eq!(names, listed, "{directory}");
    }
    assert!(file_io
        .list_file_names(&format!("{plain}/no-such-directory"))
        .await
        .is_err());
}

/// `FileIO::missing_files` (the commit's and the coordinator's existence checks) names exactly
/// the paths that do not exist, on both of its ways: on the local disk (`stat` calls in
/// batches) and on any other backend, here `memory://`, where a directory holding many of the
/// paths is listed (two missing among them), one holding few is checked file by file (one
/// missing), and one that does not exist fails its listing, so each of its paths is checked on
/// its own and found missing.
#[tokio::test]
async fn missing_files_names_exactly_the_paths_not_in_storage() {
    let dir = tempfile::tempdir().unwrap();
    let on_disk = dir.path().to_str().unwrap().to_string();
    for root in [on_disk.as_str(), "memory:/missing-files"] {
        let file_io = paimon::io::FileIO::from_path(root)
            .unwrap()
            .build()
            .unwrap();
        let many = format!("{root}/bucket-0");
        let few = format!("{root}/bucket-1");
        let mut paths = Vec::new();
        for path in (0..40)
            .map(|i| format!("{many}/data-{i}.parquet"))
            .chain((0..2).map(|i| format!("{few}/data-{i}.parquet")))
        {
            file_io
                .new_output(&path)
                .unwrap()
                .write(bytes::Bytes::from_static(b"x"))
                .await
                .unwrap();
            paths.push(path);
        }
        let mut expected = vec![
            format!("{many}/data-missing-a.parquet"),
            format!("{many}/data-missing-b.parquet"),
            format!("{few}/data-missing.parquet"),
        ];
        expected.extend((0..20).map(|i| format!("{root}/bucket-9/data-{i}.parquet")));
        paths.extend(expected.iter().cloned());
        expected.sort();
        assert!(paths.len() > 3 * paimon::io::MISSING_FILES_LIST_DIRECTORY_AT);
        // Reversed input: the answer is sorted, whatever order the paths come in.
        paths.reverse();
        let missing = file_io.missing_files(paths.clone()).await.unwrap();
        assert_eq!(missing, expected, "{root}");
        // All present: nothing is missing.
        let present: Vec<String> = paths
            .into_iter()
            .filter(|path| !expected.contains(path))
            .collect();
        assert_eq!(present.len(), 42);
        assert!(file_io.missing_files(present).await.unwrap().is_empty());
    }
}

/// On the local disk a directory holding at least `MISSING_FILES_LOCAL_LIST_DIRECTORY_AT` of
/// the paths is read once instead of a `stat` per path. The listing only confirms regular
/// files; the other entries get their `stat` as before: a dangling symbolic link is missing, a
/// link to a present file and a directory are present (as `exists` says), and the missing names
/// among the many are named exactly, also when the directory holds far more files than are
/// checked (it is then read only in part).
#[tokio::test]
async fn missing_files_on_disk_reads_a_large_directory_once_and_confirms_only_regular_files() {
    let (dir, root, file_io) = local_file_io();
    let bucket = dir.path().join("bucket-0");
    std::fs::create_dir(&bucket).unwrap();
    let count = paimon::io::MISSING_FILES_LOCAL_LIST_DIRECTORY_AT + 10;
    let mut paths = Vec::new();
    for i in 0..count {
        std::fs::write(bucket.join(format!("data-{i}.parquet")), b"x").unwrap();
        paths.push(format!("{root}/bucket-0/data-{i}.parquet"));
    }
    // Files nobody checks, four times as many: the directory is not read to its end (at most
    // four entries per path checked), and the checked files it does not reach get a `stat`.
    for i in 0..4 * count {
        std::fs::write(bucket.join(format!("other-{i}.parquet")), b"x").unwrap();
    }
    std::os::unix::fs::symlink(bucket.join("gone.parquet"), bucket.join("dangling.parquet"))
        .unwrap();
    std::os::unix::fs::symlink(bucket.join("data-0.parquet"), bucket.join("link.parquet")).unwrap();
    std::fs::create_dir(bucket.join("a-directory.parquet")).unwrap();
    let expected = vec![
        format!("{root}/bucket-0/dangling.parquet"),
        format!("{root}/bucket-0/data-missing.parquet"),
    ];
    paths.extend(expected.iter().cloned());
    // Not confirmed by the listing, but present for `stat` (as for `exists`).
    paths.push(format!("{root}/bucket-0/a-directory.parquet"));
    paths.push(format!("{root}/bucket-0/link.parquet"));
    paths.reverse();
    let missing = file_io.missing_files(paths).await.unwrap();
    assert_eq!(missing, expected);
}

/// `FileIO::missing_files_in_directories` answers as `missing_files` does on the same files:
/// a large group is confirmed by one listing (regular files only: a dangling link, a link and
/// a directory get their `stat`), a small group by `stat` calls, a name holding a `/` by
/// `stat` (never by the listing of the group's directory), and a missing file is named as
/// `"{directory}/{name}"` once, also when given twice.
#[tokio::test]
async fn missing_files_in_directories_answers_as_missing_files_does() {
    let (dir, root, file_io) = local_file_io();
    let large = dir.path().join("bucket-0");
    let small = dir.path().join("bucket-1");
    std::fs::create_dir(&large).unwrap();
    std::fs::create_dir(&small).unwrap();
    std::fs::create_dir(large.join("sub")).unwrap();
    let mut large_names = Vec::new();
    for i in 0..paimon::io::MISSING_FILES_LOCAL_LIST_DIRECTORY_AT + 10 {
        std::fs::write(large.join(format!("data-{i}.parquet")), b"x").unwrap();
        large_names.push(format!("data-{i}.parquet"));
    }
    std::fs::write(large.join("sub").join("nested.parquet"), b"x").unwrap();
    // A file named like the nested one, directly in the directory: the listing must not
    // confirm "sub/gone.parquet" by it.
    std::fs::write(large.join("gone.parquet"), b"x").unwrap();
    std::os::unix::fs::symlink(large.join("none.parquet"), large.join("dangling.parquet")).unwrap();
    std::os::unix::fs::symlink(large.join("data-0.parquet"), large.join("link.parquet")).unwrap();
    std::fs::create_dir(large.join("a-directory.parquet")).unwrap();
    for name in [
        "dangling.parquet",
        "data-missing.parquet",
        "a-directory.parquet",
        "link.parquet",
        "sub/nested.parquet",
        "sub/gone.parquet",
        "data-missing.parquet",
    ] {
        large_names.push(name.to_string());
    }
    std::fs::write(small.join("data-a.parquet"), b"x").unwrap();
    let small_names = vec!["data-a.parquet".to_string(), "data-b.parquet".to_string()];
    let expected = vec![
        format!("{root}/bucket-0/dangling.parquet"),
        format!("{root}/bucket-0/data-missing.parquet"),
        format!("{root}/bucket-0/sub/gone.parquet"),
        format!("{root}/bucket-1/data-b.parquet"),
    ];
    let groups = vec![
        (format!("{root}/bucket-0/"), large_names.clone()),
        (format!("{root}/bucket-1"), small_names.clone()),
    ];
    let missing = file_io.missing_files_in_directories(groups).await.unwrap();
    assert_eq!(missing, expected);
    let paths = large_names
        .iter()
        .map(|name| format!("{root}/bucket-0/{name}"))
        .chain(
            small_names
                .iter()
                .map(|name| format!("{root}/bucket-1/{name}")),
        );
    assert_eq!(file_io.missing_files(paths).await.unwrap(), expected);
}

/// A temporary directory, its path, and a `FileIO` on it.
fn local_file_io() -> (tempfile::TempDir, String, paimon::io::FileIO) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap().to_string();
    let file_io = paimon::io::FileIO::from_path(&root)
        .unwrap()
        .build()
        .unwrap();
    (dir, root, file_io)
}

/// `workers` workers each write one file into each of two partitions; with `remove_one`, one
/// file is deleted from storage before the commit, which must then be refused naming it.
async fn commit_with_one_file_missing(workers: i32, remove_one: bool) {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let coordinator = append_coordinator(&table).await;
    let mut parts = Vec::new();
    let mut names = Vec::new();
    for worker in 0..workers {
        let rows = [(worker, "a"), (100 + worker, "b")];
        let messages = worker_messages(&table, &rows).await;
        names.extend(
            messages
                .iter()
                .flat_map(|m| &m.new_files)
                .map(|f| f.file_name.clone()),
        );
        parts.push(
            coordinator
                .deserialize(V, &serialize_list(&messages, V).unwrap())
                .unwrap(),
        );
    }
    assert_eq!(
        names.len(),
        2 * workers as usize,
        "one file per partition per worker"
    );
    let merged = coordinator.merge(parts).unwrap();
    if !remove_one {
        coordinator.commit(merged, 1).await.unwrap();
        assert_eq!(snapshot_count(&table).await, 1);
        assert_eq!(read_rows(&table).await.len(), 2 * workers as usize);
        return;
    }
    let missing = &names[17];
    let found = find_files(warehouse.dir.path(), missing);
    assert_eq!(found.len(), 1, "{missing}: {found:?}");
    std::fs::remove_file(&found[0]).unwrap();

    let error = coordinator.commit(merged, 1).await.unwrap_err();
    assert!(
        error.to_string().contains(missing.as_str())
            && error.to_string().contains("does not exist"),
        "{error}"
    );
    assert_eq!(snapshot_count(&table).await, 0);
    assert_eq!(read_rows(&table).await, Vec::new());
}

#[tokio::test]
async fn committed_data_files_sent_as_changelog_files_are_refused() {
    let warehouse = Warehouse::new();
    let rows: &[(i32, &str)] = &[(1, "a"), (2, "a")];
    let (table, messages) = committed(&warehouse, "events", Kind::FixedBucketPk, rows).await;
    let before = Unchanged::of(&table).await;

    let as_changelog: Vec<CommitMessage> = messages
        .iter()
        .cloned()
        .map(|mut m| {
            m.new_changelog_files = std::mem::take(&mut m.new_files);
            m
        })
        .collect();
    let coordinator = append_coordinator(&table).await;
    let error = send(&coordinator, &as_changelog, 2).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::AlreadyLive, "{error}");
    assert!(error
        .as_validation()
        .unwrap()
        .field
        .starts_with("new_changelog_files"));
    before.assert_still(&table, "changelog resend").await;
}

#[tokio::test]
async fn one_file_in_two_roles_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("users", Kind::FixedBucketPk).await;
    let mut messages = worker_messages(&table, &[(1, "a")]).await;
    messages[0].new_changelog_files = messages[0].new_files.clone();
    let coordinator = append_coordinator(&table).await;
    let error = send(&coordinator, &messages, 1).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::TwoRoles, "{error}");
    assert_eq!(snapshot_count(&table).await, 0);
    assert!(read_rows(&table).await.is_empty());
}

#[tokio::test]
async fn a_deleted_file_must_be_live_at_the_level_named() {
    let warehouse = Warehouse::new();
    let rows: &[(i32, &str)] = &[(1, "a"), (2, "a")];
    let (table, messages) = committed(&warehouse, "events", Kind::PartitionedAppend, rows).await;
    let before = Unchanged::of(&table).await;
    let deletes = bind(&table, Binding::append(USER).with_deletes()).await;

    // A file that was never committed.
    let mut never = worker_messages(&table, &[(9, "a")]).await;
    never[0].deleted_files = std::mem::take(&mut never[0].new_files);
    let error = send(&deletes, &never, 2).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::NotLive, "{error}");
    before.assert_still(&table, "never committed").await;

    // A committed file at a level it is not live at.
    let mut wrong_level = messages.clone();
    wrong_level[0].deleted_files = std::mem::take(&mut wrong_level[0].new_files);
    wrong_level[0].deleted_files[0].level = 3;
    let error = send(&deletes, &wrong_level, 2).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::NotLive, "{error}");
    before.assert_still(&table, "wrong level").await;

    // The live file at its level: the opted-in job deletes it.
    let mut live = messages.clone();
    live[0].deleted_files = std::mem::take(&mut live[0].new_files);
    assert_eq!(
        send(&deletes, &live, 2).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 2 }
    );
    assert!(read_rows(&table).await.is_empty());
}

// ---- 3. The binding decides the kinds of change -------------------------------------------

#[tokio::test]
async fn an_append_binding_refuses_deletes_unless_it_opts_in() {
    let warehouse = Warehouse::new();
    let rows: &[(i32, &str)] = &[(1, "a"), (2, "a")];
    let (table, messages) = committed(&warehouse, "events", Kind::PartitionedAppend, rows).await;
    let before = Unchanged::of(&table).await;

    let mut deleting = worker_messages(&table, &[(5, "a")]).await;
    deleting[0].deleted_files = messages[0].new_files.clone();
    let append = append_coordinator(&table).await;
    let error = append
        .deserialize(V, &serialize_list(&deleting, V).unwrap())
        .unwrap_err();
    assert_eq!(rule_of(&error), Rule::ChangeKind, "{error}");
    assert!(error.to_string().contains("with_deletes"), "{error}");
    before
        .assert_still(&table, "append with deleted_files")
        .await;

    let overwrite = bind(&table, Binding::overwrite(USER)).await;
    let error = overwrite
        .deserialize(V, &serialize_list(&deleting, V).unwrap())
        .unwrap_err();
    assert_eq!(rule_of(&error), Rule::ChangeKind, "{error}");
    before
        .assert_still(&table, "overwrite with deleted_files")
        .await;

    // Deletion-vector index files and deleted index files too.
    let dv = IndexFileMeta {
        index_type: "DELETION_VECTORS".into(),
        file_name: "index-dv-0".into(),
        file_size: 100,
        row_count: 1,
        deletion_vectors_ranges: None,
        external_path: None,
        global_index_meta: None,
    };
    for (list, with_index) in [
        ("new_index_files", {
            let mut m = messages.clone();
            m[0].new_files.clear();
            m[0].new_index_files = vec![dv.clone()];
            m
        }),
        ("deleted_index_files", {
            let mut m = messages.clone();
            m[0].new_files.clear();
            m[0].deleted_index_files = vec![dv.clone()];
            m
        }),
    ] {
        let error = append
            .deserialize(V, &serialize_list(&with_index, V).unwrap())
            .unwrap_err();
        assert_eq!(rule_of(&error), Rule::ChangeKind, "{list}: {error}");
        assert!(error.as_validation().unwrap().field.starts_with(list));
    }
    before.assert_still(&table, "index deletes").await;

    // Opted in, the same deletion commits (the live file goes, the new one arrives).
    let deletes = bind(&table, Binding::append(USER).with_deletes()).await;
    assert_eq!(
        send(&deletes, &deleting, 2).await.unwrap(),
        CommitOutcome::Committed { snapshot_id: 2 }
    );
    assert_eq!(read_rows(&table).await, expected(&[(5, "a")]));
}

// ---- 4. Abort deletes only what it can prove --------------------------------------------

#[tokio::test]
async fn abort_of_a_committed_payload_deletes_nothing_and_says_why() {
    let warehouse = Warehouse::new();
    let rows: &[(i32, &str)] = &[(1, "a"), (2, "b")];
    let (table, messages) = committed(&warehouse, "events", Kind::PartitionedAppend, rows).await;
    let before = Unchanged::of(&table).await;
    let coordinator = append_coordinator(&table).await;
    let bound = coordinator
        .deserialize(V, &serialize_list(&messages, V).unwrap())
        .unwrap();
    let report = coordinator.abort(&bound).await.unwrap();
    assert!(report.deleted.is_empty(), "{report:?}");
    assert_eq!(report.skipped.len(), 2, "{report:?}");
    assert!(report.skipped[0].reason.contains("references it"));
    for file in messages.iter().flat_map(|m| &m.new_files) {
        assert_eq!(
            find_files(warehouse.dir.path(), &file.file_name).len(),
            1,
            "{}",
            file.file_name
        );
    }
    before
        .assert_still(&table, "abort of committed files")
        .await;

    // An uncommitted payload in the same buckets is deleted and reported.
    let fresh = worker_messages(&table, &[(3, "a")]).await;
    let bound = coordinator
        .deserialize(V, &serialize_list(&fresh, V).unwrap())
        .unwrap();
    let report = coordinator.abort(&bound).await.unwrap();
    assert_eq!(
        report.deleted,
        vec![fresh[0].new_files[0].file_name.clone()]
    );
    assert!(find_files(warehouse.dir.path(), &report.deleted[0]).is_empty());
    before.assert_still(&table, "abort of fresh files").await;
}

// ---- 5. Bounds and checked sums ------------------------------------------------------------

#[tokio::test]
async fn numbers_that_would_overflow_the_commit_are_refused_before_it() {
    let warehouse = Warehouse::new();
    let rows: &[(i32, &str)] = &[(1, "a")];
    let (table, _) = committed(&warehouse, "events", Kind::PartitionedAppend, rows).await;
    let before = Unchanged::of(&table).await;
    let coordinator = append_coordinator(&table).await;
    let fresh = worker_messages(&table, &[(2, "a")]).await;

    // Per-file numbers: the finding's row_count = 2^63-1 panicked inside the paimon crate.
    type Edit = fn(&mut CommitMessage);
    let edits: [(&str, Edit); 5] = [
        ("row_count", |m| m.new_files[0].row_count = i64::MAX),
        ("file_size", |m| m.new_files[0].file_size = i64::MAX),
        ("max_sequence_number", |m| {
            m.new_files[0].max_sequence_number = i64::MAX
        }),
        ("min_sequence_number", |m| {
            m.new_files[0].min_sequence_number = i64::MIN
        }),
        ("first_row_id", |m| {
            m.new_files[0].first_row_id = Some(i64::MAX - 1)
        }),
    ];
    for (field, edit) in edits {
        let mut crafted = fresh.clone();
        edit(&mut crafted[0]);
        let error = send(&coordinator, &crafted, 2).await.unwrap_err();
        assert_eq!(rule_of(&error), Rule::Bounds, "{field}: {error}");
        assert!(
            error.as_validation().unwrap().field.ends_with(field),
            "{field}: {error}"
        );
        before.assert_still(&table, field).await;
    }

    // Each file within its bound, but their sum past the commit's: refused at commit time
    // with a typed error, never a panic.
    let mut many = fresh.clone();
    let template = many[0].new_files[0].clone();
    many[0].new_files = (0..(1 << 14) + 1)
        .map(|i| {
            let mut file = template.clone();
            file.file_name = format!("data-sum-{i}.parquet");
            file.row_count = MAX_FILE_ROW_COUNT;
            file
        })
        .collect();
    let error = send(&coordinator, &many, 2).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::Bounds, "{error}");
    assert!(
        error.to_string().contains("past the coordinator's bound"),
        "{error}"
    );
    before.assert_still(&table, "sum of row counts").await;
}

#[tokio::test]
async fn postpone_fixed_bucket_messages_cannot_fix_a_huge_bucket_count() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("postponed", Kind::Postpone).await;
    let builder = table
        .new_postpone_fixed_bucket_write_builder()
        .unwrap()
        .with_commit_user(USER)
        .unwrap();
    let mut write = builder.new_write().unwrap();
    write
        .write_arrow_batch(&super::support::batch(&[(1, "x")]))
        .await
        .unwrap();
    let mut messages = write.prepare_commit().await.unwrap();
    for message in &mut messages {
        message.total_buckets = Some(i32::MAX);
    }
    let fixed = bind(&table, Binding::append(USER).postpone_fixed_bucket()).await;
    let error = send(&fixed, &messages, 1).await.unwrap_err();
    assert_eq!(rule_of(&error), Rule::Bounds, "{error}");
    assert!(error.to_string().contains(&MAX_TOTAL_BUCKETS.to_string()));
    assert_eq!(snapshot_count(&table).await, 0);
    assert!(read_rows(&table).await.is_empty());
}

// ---- 7. Loose ends -------------------------------------------------------------------------

#[tokio::test]
async fn index_entries_are_checked_against_their_file_and_the_schema() {
    let warehouse = Warehouse::new();
    let rows: &[(i32, &str)] = &[(1, "a")];
    let (table, messages) = committed(&warehouse, "events", Kind::PartitionedAppend, rows).await;
    let before = Unchanged::of(&table).await;
    let deletes = bind(&table, Binding::append(USER).with_deletes()).await;
    let data_file = messages[0].new_files[0].file_name.clone();
    let index = |edit: &dyn Fn(&mut IndexFileMeta)| {
        let mut crafted = messages.clone();
        crafted[0].new_files.clear();
        let mut file = IndexFileMeta {
            index_type: "btree".into(),
            file_name: "index-crafted-0".into(),
            file_size: 64,
            row_count: 1,
            deletion_vectors_ranges: None,
            external_path: None,
            global_index_meta: Some(GlobalIndexMeta {
                row_range_start: 0,
                row_range_end: 0,
                index_field_id: 0,
                extra_field_ids: None,
                index_meta: None,
                source_meta: None,
            }),
        };
        edit(&mut file);
        crafted[0].new_index_files = vec![file];
        crafted
    };
    type IndexEdit = Box<dyn Fn(&mut IndexFileMeta)>;
    let cases: [(&str, Rule, IndexEdit); 3] = [
        (
            "upper-case global index type",
            Rule::IndexType,
            Box::new(|f| f.index_type = "BTREE".into()),
        ),
        (
            "unknown index field id",
            Rule::SchemaId,
            Box::new(|f| f.global_index_meta.as_mut().unwrap().index_field_id = 4242),
        ),
        (
            "deletion vector past the end of its file",
            Rule::Bounds,
            Box::new(move |f| {
                f.index_type = "DELETION_VECTORS".into();
                f.global_index_meta = None;
                f.deletion_vectors_ranges = Some(IndexMap::from([(
                    data_file.clone(),
                    DeletionVectorMeta {
                        offset: 60,
                        length: 10,
                        cardinality: Some(1),
                    },
                )]));
            }),
        ),
    ];
    for (what, rule, edit) in cases {
        let crafted = index(&*edit);
        let error = deletes
            .deserialize(V, &serialize_list(&crafted, V).unwrap())
            .unwrap_err();
        assert_eq!(rule_of(&error), rule, "{what}: {error}");
        before.assert_still(&table, what).await;
    }
}
