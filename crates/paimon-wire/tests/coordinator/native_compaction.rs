//! Native compaction (issue 41) of tables whose compaction merges more than one row a key or
//! rewrites deletion vectors, planned with `plan_compaction`, run with `CompactionTask::run`
//! and committed by a coordinator that verifies compactions (rule `compact-content`).

use paimon::table::Table;
use paimon_wire::compaction::{plan_compaction, CompactionTask};
use paimon_wire::coordinator::{Binding, CommitOutcome, Rule};

use super::hostile_round_3::with_deletion_vector;
use super::support::{
    append_coordinator, batch_with_values, bind, expected, read_rows, rule_of, send, Kind,
    Warehouse, USER,
};

/// The commit user of the compactions (the CLI's `compact` commits as its own user, with the
/// planned snapshot as the identifier).
const COMPACTOR: &str = "compactor";

/// Every id of `latest` as the row `(id, "p<id % 3>", value)`, sorted: what a reader of a
/// table [`crate_job`] wrote returns.
fn rows_of(latest: &std::collections::BTreeMap<i32, String>) -> Vec<(i32, String, String)> {
    let mut rows: Vec<(i32, String, String)> = latest
        .iter()
        .map(|(id, v)| (*id, format!("p{}", id % 3), v.clone()))
        .collect();
    rows.sort();
    rows
}

/// Writes `rows` as one job and commits it; returns its messages.
pub async fn job(
    table: &Table,
    identifier: i64,
    rows: &[(i32, &str, String)],
) -> Vec<paimon::table::CommitMessage> {
    let builder = table.new_write_builder().with_commit_user(USER).unwrap();
    let mut write = builder.new_write().unwrap();
    write
        .write_arrow_batch(&batch_with_values(rows))
        .await
        .unwrap();
    let messages = write.prepare_commit().await.unwrap();
    let outcome = send(&append_coordinator(table).await, &messages, identifier)
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    messages
}

/// Plans a full compaction, runs every task and commits them under a verifying binding.
async fn compact_fully(table: &Table) -> usize {
    let plan = plan_compaction(table, true).await.unwrap();
    let mut messages = Vec::new();
    for task in plan.tasks() {
        messages.push(task.run(table).await.unwrap());
    }
    let compacted = messages.iter().map(|m| m.compact_before.len()).sum();
    let coordinator = bind(table, Binding::append(COMPACTOR).with_verified_compaction()).await;
    let outcome = send(&coordinator, &messages, plan.snapshot_id().unwrap())
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    compacted
}

/// Live index files of the latest snapshot, by type.
async fn live_index_types(table: &Table) -> Vec<String> {
    let snapshot = table
        .snapshot_manager()
        .get_latest_snapshot()
        .await
        .unwrap()
        .unwrap();
    let Some(name) = snapshot.index_manifest() else {
        return Vec::new();
    };
    let path = table.snapshot_manager().manifest_path(name);
    paimon::spec::IndexManifest::read(table.file_io(), &path)
        .await
        .unwrap()
        .into_iter()
        .map(|entry| entry.index_file.index_type)
        .collect()
}

#[tokio::test]
async fn a_deletion_vector_table_compacts_its_live_rows_and_drops_the_vectors() {
    // X (ids 0..10, ids 0..5 hidden by a live vector) and Y (ids 10..20).
    let setup = with_deletion_vector().await;
    let table = &setup.table;
    assert_eq!(live_index_types(table).await, ["DELETION_VECTORS"]);
    let plan = plan_compaction(table, true).await.unwrap();
    assert_eq!(plan.tasks().len(), 1);
    let message = plan.tasks()[0].run(table).await.unwrap();
    assert_eq!(message.compact_before.len(), 2, "X and Y");
    assert_eq!(
        message
            .compact_after
            .iter()
            .map(|f| f.row_count)
            .sum::<i64>(),
        15,
        "the hidden rows are not rewritten"
    );
    assert_eq!(
        message.compact_deleted_index_files,
        vec![setup.live_vector.clone()],
        "the vector goes with its file"
    );
    let coordinator = bind(table, Binding::append(COMPACTOR).with_verified_compaction()).await;
    let outcome = send(&coordinator, &[message], plan.snapshot_id().unwrap())
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    let rows: Vec<(i32, &str)> = (5..20).map(|id| (id, "a")).collect();
    assert_eq!(read_rows(table).await, expected(&rows));
    assert!(live_index_types(table).await.is_empty());
}

#[tokio::test]
async fn merge_engines_and_sequence_fields_compact_to_what_a_reader_saw() {
    let warehouse = Warehouse::new();
    // Three jobs over ids 0..6: each job's `v` is `j<job>-<id>`, except that with a
    // sequence field the values are written out of order (job 2's are the highest).
    let values = |job: u32, id: i32, sequenced: bool| -> String {
        let rank = if sequenced {
            [0, 1, 3, 2][job as usize]
        } else {
            job
        };
        format!("j{rank}-{id}")
    };
    for (name, options, sequenced, reads) in [
        (
            "aggregate",
            vec![
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "listagg"),
            ],
            false,
            "j1-0,j2-0,j3-0",
        ),
        (
            "partial",
            vec![("merge-engine", "partial-update")],
            false,
            "j3-0",
        ),
        ("first", vec![("merge-engine", "first-row")], false, "j1-0"),
        ("sequenced", vec![("sequence.field", "v")], true, "j3-0"),
    ] {
        let table = warehouse
            .create_with_options(name, Kind::FixedBucketPk, &options)
            .await;
        for job_number in 1..=3u32 {
            let rows: Vec<(i32, &str, String)> = (0..6)
                .map(|id| (id, "a", values(job_number, id, sequenced)))
                .collect();
            job(&table, i64::from(job_number), &rows).await;
        }
        let before = read_rows(&table).await;
        let compacted = compact_fully(&table).await;
        assert!(compacted >= 3, "{name}: {compacted} file(s)");
        let after = read_rows(&table).await;
        assert_eq!(after.len(), 6, "{name}: each key once");
        assert_eq!(after[0].2, reads, "{name}: key 0");
        if name == "first" {
            // A first-row table's reader skips level 0, where the jobs wrote: it saw nothing
            // before the compaction.
            assert!(before.is_empty(), "{name}: level 0 unread");
        } else {
            assert_eq!(after, before, "{name}");
        }
    }
}

#[tokio::test]
async fn a_verified_compaction_of_part_of_a_value_merging_bucket_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse
        .create_with_options(
            "aggregate",
            Kind::FixedBucketPk,
            &[
                ("merge-engine", "aggregation"),
                ("fields.v.aggregate-function", "listagg"),
            ],
        )
        .await;
    for job_number in 1..=2 {
        job(&table, job_number, &[(0, "a", format!("j{job_number}"))]).await;
    }
    let plan = plan_compaction(&table, true).await.unwrap();
    let task = &plan.tasks()[0];
    assert_eq!(task.input_files().len(), 2);
    // A task of the first job's file alone (sequence number 0): its result (`j1` at the
    // highest level) passes every metadata rule, the second job's level-0 file staying newer
    // than everything it takes. Whether such a result keeps what a reader of the bucket sees
    // depends on the file left out, so a verifying coordinator refuses it.
    let mut bytes: serde_json::Value = serde_json::from_slice(&task.to_bytes()).unwrap();
    let older = task
        .input_files()
        .iter()
        .position(|f| f.min_sequence_number == 0)
        .unwrap();
    let split = &mut bytes["split"];
    split["data_files"] = serde_json::json!([split["data_files"][older].clone()]);
    split["data_deletion_files"] = serde_json::json!([null]);
    let part_task = CompactionTask::from_bytes(&serde_json::to_vec(&bytes).unwrap()).unwrap();
    let part = part_task.run(&table).await.unwrap();
    assert_eq!(part.compact_before.len(), 1);
    let coordinator = bind(
        &table,
        Binding::append(COMPACTOR).with_verified_compaction(),
    )
    .await;
    let error = send(
        &coordinator,
        std::slice::from_ref(&part),
        plan.snapshot_id().unwrap(),
    )
    .await
    .unwrap_err();
    assert_eq!(rule_of(&error), Rule::CompactContent, "{error}");
    assert!(
        error.to_string().contains("is not among its inputs"),
        "{error}"
    );
    // Without verification the metadata rules take it: the refusal is verification's.
    let unverified = bind(&table, Binding::append(COMPACTOR).with_compaction()).await;
    let checked = unverified
        .deserialize(
            paimon_wire::SerializerVersion::CURRENT,
            &paimon_wire::serialize_list(&[part], paimon_wire::SerializerVersion::CURRENT).unwrap(),
        )
        .unwrap();
    unverified.check_against_table(&checked).await.unwrap();
    // The whole bucket commits.
    let whole = task.run(&table).await.unwrap();
    let outcome = send(&coordinator, &[whole], plan.snapshot_id().unwrap())
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    assert_eq!(read_rows(&table).await[0].2, "j1,j2");
}

/// The rows Java's harness reads (`read`: "rows N", then "id TAB pt TAB v" lines), sorted, if
/// `PAIMON_WIRE_JAVA_HARNESS` names the harness.
fn read_with_java(warehouse: &str, table: &str) -> Option<Vec<(i32, String, String)>> {
    let out = java(&["read", "--warehouse", warehouse, "--table", table])?;
    let mut rows: Vec<(i32, String, String)> = out
        .lines()
        .filter(|line| !line.starts_with("rows "))
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let id = fields.next()?.parse().ok()?;
            Some((id, fields.next()?.to_string(), fields.next()?.to_string()))
        })
        .collect();
    rows.sort();
    Some(rows)
}

/// Runs a Paimon 2.0 harness command, if `PAIMON_WIRE_JAVA_HARNESS` names the harness, and
/// returns what it printed; a failing command fails the test.
fn java(args: &[&str]) -> Option<String> {
    let harness = std::env::var("PAIMON_WIRE_JAVA_HARNESS").ok()?;
    let out = std::process::Command::new(harness)
        .arg("2.0.0")
        .args(args)
        .output()
        .expect("run the Java harness");
    assert!(
        out.status.success(),
        "Java {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A Java 2.0 writer (commit user `java`) writing harness rows `rows` (`FROM:TO:PREFIX`) with
/// `extra` arguments, its payload to `out`.
fn java_write(
    warehouse: &str,
    table: &str,
    identifier: &str,
    rows: &str,
    extra: &[&str],
    out: &str,
) {
    let mut args = vec![
        "write",
        "--warehouse",
        warehouse,
        "--table",
        table,
        "--commit-user",
        "java",
        "--identifier",
        identifier,
        "--rows",
        rows,
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    java(&args);
}

/// Java 2.0's committer (commit user `java`) committing a version-12 payload.
fn java_commit(warehouse: &str, table: &str, identifier: &str, payload: &str) {
    java(&[
        "commit",
        "--warehouse",
        warehouse,
        "--table",
        table,
        "--commit-user",
        "java",
        "--identifier",
        identifier,
        "--version",
        "12",
        payload,
    ]);
}

/// Java 2.0's dedicated compaction job (commit user `java-compactor`): every bucket, fully.
fn java_compact(warehouse: &str, table: &str) {
    java(&[
        "compact",
        "--warehouse",
        warehouse,
        "--table",
        table,
        "--commit-user",
        "java-compactor",
        "--identifier",
        "1",
    ]);
}

/// Levels of the live files of each bucket of the latest snapshot, level 0 included.
async fn levels_per_bucket(table: &Table) -> Vec<Vec<i32>> {
    let plan = table
        .new_read_builder()
        .new_scan()
        .with_scan_all_files()
        .plan()
        .await
        .unwrap();
    let mut buckets: std::collections::BTreeMap<(Vec<u8>, i32), Vec<i32>> = Default::default();
    for split in plan.splits() {
        buckets
            .entry((split.partition().to_serialized_bytes(), split.bucket()))
            .or_default()
            .extend(split.data_files().iter().map(|f| f.level));
    }
    buckets.into_values().collect()
}

/// Issue 41's "done when": twenty jobs, one full compaction, every bucket one sorted run
/// (an append bucket one file; a primary-key bucket its highest level only), the same rows
/// for the paimon crate, pypaimon (`PAIMON_WIRE_PYPAIMON`) and Java 2.0
/// (`PAIMON_WIRE_JAVA_HARNESS`), and Java's own writer (with its compaction at prepare) and
/// dedicated compaction job going on with the table. `scripts/test-python` sets both.
#[tokio::test]
async fn twenty_jobs_and_a_full_compaction_read_alike_everywhere_and_java_writes_on() {
    let warehouse = Warehouse::new();
    let dv = [("deletion-vectors.enabled", "true")];
    for (name, kind, options, keyed) in [
        ("append", Kind::PartitionedAppend, &[][..], false),
        ("pk", Kind::FixedBucketPk, &[][..], true),
        ("dynamic", Kind::DynamicBucketPk, &[][..], true),
        ("pk_dv", Kind::FixedBucketPk, &dv[..], true),
    ] {
        let table = warehouse.create_with_options(name, kind, options).await;
        let full_name = format!("db.{name}");
        // Job j: ids 0..30 valued `j<j>_<id>` (primary keys: each job replaces the last), or
        // ids 10(j-1)..10j (append).
        let mut expected: std::collections::BTreeMap<i32, String> = Default::default();
        for job_number in 1..=20i32 {
            let ids = if keyed {
                0..30
            } else {
                (job_number - 1) * 10..job_number * 10
            };
            let prefix = format!("j{job_number}_");
            crate_job(&table, job_number.into(), ids, &prefix, &mut expected).await;
        }
        let compacted = compact_fully(&table).await;
        assert!(compacted >= 20, "{name}: {compacted} file(s) compacted");
        for levels in levels_per_bucket(&table).await {
            if keyed {
                assert!(levels.iter().all(|&l| l == 5), "{name}: {levels:?}");
            } else {
                assert_eq!(levels, [0], "{name}: one file");
            }
        }
        let after = read_rows(&table).await;
        assert_eq!(after, rows_of(&expected), "{name}: the paimon crate");
        if let Some(rows) = super::support::read_with_pypaimon(warehouse.path(), &full_name) {
            assert_eq!(rows, after, "{name}: pypaimon");
        }
        let Some(rows) = read_with_java(warehouse.path(), &full_name) else {
            continue;
        };
        assert_eq!(rows, after, "{name}: Java 2.0");

        // Java goes on: a writer that compacts at prepare, committed by Java, then Java's
        // dedicated compaction job.
        let payload = std::env::temp_dir().join(format!(
            "native-compaction-{}-{name}.bin",
            std::process::id()
        ));
        let payload = payload.to_str().unwrap();
        let assigner: &[&str] = if name == "dynamic" {
            &["--assigner", "0/1"]
        } else {
            &[]
        };
        let compacting = [&["--compact", "true"][..], assigner].concat();
        java_write(
            warehouse.path(),
            &full_name,
            "1",
            "0:40:java_",
            &compacting,
            payload,
        );
        java_commit(warehouse.path(), &full_name, "1", payload);
        // (Java compacts an unaware-bucket append table in a Flink or Spark job of its own,
        // not through a table writer: the harness's job covers bucketed tables.)
        if keyed {
            java_compact(warehouse.path(), &full_name);
        }
        let _ = std::fs::remove_file(payload);
        if keyed {
            expected.clear();
            for id in 0..40 {
                expected.insert(id, format!("java_{id}"));
            }
        } else {
            // Append: the rows are added (ids repeat; compare as a multiset).
            let mut rows = rows_of(&expected);
            rows.extend((0..40).map(|id| (id, format!("p{}", id % 3), format!("java_{id}"))));
            rows.sort();
            assert_eq!(read_rows(&table).await, rows, "{name}: after Java's write");
            assert_eq!(read_with_java(warehouse.path(), &full_name).unwrap(), rows);
            continue;
        }
        let rows = rows_of(&expected);
        assert_eq!(read_rows(&table).await, rows, "{name}: after Java's write");
        assert_eq!(read_with_java(warehouse.path(), &full_name).unwrap(), rows);
    }
}

/// One paimon-crate job writing `ids` valued `<prefix><id>` in partition `p<id % 3>`,
/// committed; `latest` records each id's value.
async fn crate_job(
    table: &Table,
    identifier: i64,
    ids: std::ops::Range<i32>,
    prefix: &str,
    latest: &mut std::collections::BTreeMap<i32, String>,
) {
    let rows: Vec<(i32, String, String)> = ids
        .map(|id| (id, format!("p{}", id % 3), format!("{prefix}{id}")))
        .collect();
    for (id, _, v) in &rows {
        latest.insert(*id, v.clone());
    }
    let borrowed: Vec<(i32, &str, String)> = rows
        .iter()
        .map(|(id, pt, v)| (*id, pt.as_str(), v.clone()))
        .collect();
    job(table, identifier, &borrowed).await;
}

/// Data files under the table's directory.
fn data_files_on_disk(table: &Table) -> std::collections::BTreeSet<String> {
    let root = std::path::PathBuf::from(table.location().trim_start_matches("file:"));
    let mut files = std::collections::BTreeSet::new();
    let mut dirs = vec![root];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.starts_with("data-") {
                files.insert(name);
            }
        }
    }
    files
}

/// Issue 41's races, made deterministic by running each side's steps in a chosen order
/// (writers and compactors are real processes where they are Java's or pypaimon's): a
/// compaction planned and rewritten before a Java writer, pypaimon and the paimon crate
/// commit, and committed after them; a Java writer that prepared before the compaction and
/// commits after it; a Java compaction job that commits between our plan and our commit, so
/// ours is refused, its results deleted and nothing else. Every key is read once with its
/// latest value throughout. Java's and pypaimon's parts run when `scripts/test-python` names
/// them.
#[tokio::test]
async fn compactions_racing_writers_and_another_compactor_keep_every_row_once() {
    let warehouse = Warehouse::new();
    let table = warehouse
        .create_with_options("raced", Kind::FixedBucketPk, &[])
        .await;
    let name = "db.raced";
    let mut latest: std::collections::BTreeMap<i32, String> = Default::default();
    let row = |id: i32, v: String| (id, format!("p{}", id % 3), v);
    for job_number in 1..=6 {
        crate_job(
            &table,
            job_number,
            0..30,
            &format!("c{job_number}_"),
            &mut latest,
        )
        .await;
    }
    let java_available = std::env::var("PAIMON_WIRE_JAVA_HARNESS").is_ok();
    let payload = |what: &str| {
        std::env::temp_dir()
            .join(format!("race-{}-{what}.bin", std::process::id()))
            .to_str()
            .unwrap()
            .to_string()
    };
    let compactor = bind(
        &table,
        Binding::append(COMPACTOR).with_verified_compaction(),
    )
    .await;

    // 1. Planned and rewritten first; Java, pypaimon and the paimon crate commit meanwhile.
    let plan = plan_compaction(&table, true).await.unwrap();
    let mut messages = Vec::new();
    for task in plan.tasks() {
        messages.push(task.run(&table).await.unwrap());
    }
    if java_available {
        let out = payload("java-1");
        java_write(warehouse.path(), name, "1", "10:20:java1_", &[], &out);
        java_commit(warehouse.path(), name, "1", &out);
        let _ = std::fs::remove_file(&out);
        for id in 10..20 {
            latest.insert(id, format!("java1_{id}"));
        }
    }
    let py_rows: Vec<(i32, String, String)> =
        (20..25).map(|id| row(id, format!("py_{id}"))).collect();
    if super::support::write_with_pypaimon(warehouse.path(), name, &py_rows) {
        for (id, _, v) in &py_rows {
            latest.insert(*id, v.clone());
        }
    }
    crate_job(&table, 7, 25..35, "c7_", &mut latest).await;
    let outcome = send(&compactor, &messages, plan.snapshot_id().unwrap())
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    assert_eq!(read_rows(&table).await, rows_of(&latest), "after race 1");

    // 2. A Java writer prepared before the compaction commits after it.
    if java_available {
        let out = payload("java-2");
        java_write(warehouse.path(), name, "2", "0:5:java2_", &[], &out);
        assert!(compact_fully(&table).await > 0);
        java_commit(warehouse.path(), name, "2", &out);
        let _ = std::fs::remove_file(&out);
        for id in 0..5 {
            latest.insert(id, format!("java2_{id}"));
        }
        assert_eq!(read_rows(&table).await, rows_of(&latest), "after race 2");
    }

    // 3. Java's compaction job commits between our plan and our commit: ours loses, is
    // refused by rule, and its abort deletes its own results only.
    if java_available {
        crate_job(&table, 8, 0..3, "c8_", &mut latest).await;
        let plan = plan_compaction(&table, true).await.unwrap();
        let mut messages = Vec::new();
        for task in plan.tasks() {
            messages.push(task.run(&table).await.unwrap());
        }
        let ours: Vec<String> = messages
            .iter()
            .flat_map(|m| &m.compact_after)
            .map(|f| f.file_name.clone())
            .collect();
        java_compact(warehouse.path(), name);
        let before_ours = data_files_on_disk(&table);
        let error = send(&compactor, &messages, plan.snapshot_id().unwrap())
            .await
            .unwrap_err();
        assert!(
            matches!(rule_of(&error), Rule::NotLive | Rule::CompactInputs),
            "{error}"
        );
        let bound = compactor
            .deserialize(
                paimon_wire::SerializerVersion::CURRENT,
                &paimon_wire::serialize_list(&messages, paimon_wire::SerializerVersion::CURRENT)
                    .unwrap(),
            )
            .unwrap();
        compactor.abort(&bound).await.unwrap();
        let after_abort = data_files_on_disk(&table);
        let deleted: Vec<&String> = before_ours.difference(&after_abort).collect();
        let mut ours_sorted: Vec<&String> = ours.iter().collect();
        ours_sorted.sort();
        assert_eq!(deleted, ours_sorted, "abort deletes exactly our results");
        assert_eq!(read_rows(&table).await, rows_of(&latest), "after race 3");
        assert_eq!(
            read_with_java(warehouse.path(), name).unwrap(),
            rows_of(&latest)
        );
    }
}

/// The memory bound of a primary-key rewrite: an output file holds at most `write-buffer-size`
/// of decoded rows, so a bucket larger than it compacts into several files of one sorted run
/// (key ranges in order, not overlapping), every row kept.
#[tokio::test]
async fn a_bucket_larger_than_the_write_buffer_compacts_into_one_run_of_several_files() {
    let warehouse = Warehouse::new();
    let table = warehouse
        .create_with_options(
            "bounded",
            Kind::FixedBucketPk,
            &[("bucket", "1"), ("write-buffer-size", "16 kb")],
        )
        .await;
    let mut latest = std::collections::BTreeMap::new();
    for job_number in 1..=4 {
        crate_job(
            &table,
            job_number,
            0..6000,
            &format!("j{job_number}_"),
            &mut latest,
        )
        .await;
    }
    let before = read_rows(&table).await;
    let plan = plan_compaction(&table, true).await.unwrap();
    let mut messages = Vec::new();
    for task in plan.tasks() {
        messages.push(task.run(&table).await.unwrap());
    }
    // Partition p0, p1 and p2 hold 2,000 keys each: far more than 16 kb decoded.
    for message in &messages {
        let results = &message.compact_after;
        assert!(results.len() > 1, "{} file(s)", results.len());
        assert!(results.iter().all(|f| f.level == 5));
        for pair in results.windows(2) {
            assert!(
                key_at_or_below(&pair[0].max_key, &pair[1].min_key),
                "files of one run follow each other in key order"
            );
        }
    }
    let coordinator = bind(
        &table,
        Binding::append(COMPACTOR).with_verified_compaction(),
    )
    .await;
    let outcome = send(&coordinator, &messages, plan.snapshot_id().unwrap())
        .await
        .unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    assert_eq!(read_rows(&table).await, before);
}

/// Whether serialized key row `a` (one INT field, the table's trimmed key `id`) is below `b`.
fn key_at_or_below(a: &[u8], b: &[u8]) -> bool {
    let id = |bytes: &[u8]| {
        paimon::spec::BinaryRow::from_serialized_bytes(bytes)
            .unwrap()
            .get_int(0)
            .unwrap()
    };
    id(a) <= id(b)
}
