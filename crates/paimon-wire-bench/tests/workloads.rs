//! The benchmark workloads stay what the benchmarks claim they are: the payloads Java times
//! decode back to the same messages at both measured versions, and W3's payloads pass the
//! coordinator's validation against the table `create_w3_table` makes (otherwise the W3
//! benchmark would time an error path).

use paimon_wire::coordinator::open_table;
use paimon_wire::dump::messages_to_json;
use paimon_wire::{deserialize_list, serialize_list, Binding, Coordinator, SerializerVersion};
use paimon_wire_bench::{create_w3_table, w1, w2, w3_workers, MESSAGES, W3_WORKERS};

#[test]
fn w1_and_w2_survive_both_measured_versions() {
    let w1 = w1();
    let w2 = w2();
    assert_eq!((w1.len(), w2.len()), (MESSAGES, MESSAGES));
    assert_eq!(w1[0].new_files.len(), 100);
    // `CommitMessage` has no `PartialEq`; the canonical JSON dump shows every field.
    let w1_head = &w1[..50];
    for version in [SerializerVersion::V12, SerializerVersion::V14] {
        for (name, messages) in [("W1", w1_head), ("W2", &w2[..])] {
            let decoded =
                deserialize_list(version, &serialize_list(messages, version).unwrap()).unwrap();
            assert_eq!(
                messages_to_json(&decoded),
                messages_to_json(messages),
                "{name} at v{version}"
            );
        }
    }
}

#[test]
fn w3_payloads_validate_and_merge_against_the_w3_table() {
    let workers = w3_workers();
    assert_eq!(workers.len(), W3_WORKERS);
    let version = SerializerVersion::CURRENT;
    let payloads: Vec<Vec<u8>> = workers[..40]
        .iter()
        .map(|messages| serialize_list(messages, version).unwrap())
        .collect();
    let warehouse = tempfile::tempdir().unwrap();
    let path = warehouse.path().to_str().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let coordinator = runtime.block_on(async {
        let name = create_w3_table(path).await.unwrap();
        let table = open_table(path, name).await.unwrap();
        Coordinator::bind(table, Binding::append("w3-test"))
            .await
            .unwrap()
    });
    let parts = payloads
        .iter()
        .map(|payload| coordinator.deserialize(version, payload).unwrap());
    let merged = coordinator.merge(parts).unwrap();
    assert_eq!(merged.len(), 40);
    assert_eq!(merged.data_file_count(), 40 * 100);
}

/// The primary-key workload of `coordinator-e2e` commits on the table `create_pk_table` makes:
/// its payloads pass validation, no two write one bucket, and the commit makes snapshot 1
/// (otherwise the end-to-end benchmark would time an error path). Its first 48 payloads: three
/// partitions of 16 buckets, with the files they add created empty.
#[test]
fn pk_payloads_commit_on_the_pk_table() {
    use paimon_wire::coordinator::CommitOutcome;
    use paimon_wire_bench::{create_pk_table, pk_workers, PK_WORKERS};

    let workers: Vec<_> = pk_workers().collect();
    assert_eq!(workers.len(), PK_WORKERS);
    let version = SerializerVersion::V12;
    let warehouse = tempfile::tempdir().unwrap();
    let path = warehouse.path().to_str().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let outcome = runtime.block_on(async {
        let name = create_pk_table(path).await.unwrap();
        // The commit checks that the files it adds exist: create them empty, as
        // `coordinator-e2e` does.
        for m in workers[..48].iter().flatten() {
            let dt = i32::from_le_bytes(m.partition[12..16].try_into().unwrap());
            let bucket_dir = warehouse
                .path()
                .join(format!("db.db/pk/dt={dt}/bucket-{}", m.bucket));
            std::fs::create_dir_all(&bucket_dir).unwrap();
            for f in m.new_files.iter().chain(&m.new_changelog_files) {
                std::fs::File::create(bucket_dir.join(&f.file_name)).unwrap();
            }
        }
        let table = open_table(path, name).await.unwrap();
        let coordinator = Coordinator::bind(table, Binding::append("pk-test"))
            .await
            .unwrap();
        let parts = workers[..48].iter().map(|messages| {
            let payload = serialize_list(messages, version).unwrap();
            coordinator.deserialize(version, &payload).unwrap()
        });
        let merged = coordinator.merge(parts).unwrap();
        assert_eq!(merged.len(), 48);
        assert_eq!(merged.data_file_count(), 48 * 8);
        coordinator.commit(merged, 1).await.unwrap()
    });
    assert_eq!(outcome, CommitOutcome::Committed { snapshot_id: 1 });
}
