//! `Coordinator::deserialize_all`: many payloads decoded on the machine's cores give what
//! `deserialize` gives for each in order, and a refusal names the first payload refused.

use std::sync::atomic::{AtomicUsize, Ordering};

use paimon_wire::coordinator::{BoundMessages, CommitOutcome, CoordinatorError};
use paimon_wire::{serialize_list, SerializerVersion};

use super::support::{append_coordinator, expected, read_rows, worker_payload, Kind, Warehouse};

const V: SerializerVersion = SerializerVersion::CURRENT;

/// The bytes of bound messages (the codec is byte-exact) and their origins, for comparing
/// two bindings of the same payload.
fn fingerprint(bound: &BoundMessages) -> (Vec<u8>, Vec<(usize, usize)>) {
    let bytes = serialize_list(bound.messages(), V).expect("serialize");
    let origins = bound
        .origins()
        .iter()
        .map(|origin| (origin.part, origin.message_index))
        .collect();
    (bytes, origins)
}

/// `count` payloads of one append worker each, and the rows they hold.
async fn payloads(
    table: &paimon::table::Table,
    count: i32,
) -> (Vec<Vec<u8>>, Vec<(i32, &'static str)>) {
    let mut payloads = Vec::new();
    let mut rows = Vec::new();
    for worker in 0..count {
        let worker_rows = [(worker * 2, "a"), (worker * 2 + 1, "b")];
        payloads.push(worker_payload(table, &worker_rows).await);
        rows.extend(worker_rows);
    }
    (payloads, rows)
}

#[tokio::test]
async fn payloads_decoded_at_once_bind_as_one_by_one_and_commit_every_row_once() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("batch", Kind::PartitionedAppend).await;
    let (payloads, rows) = payloads(&table, 12).await;
    let coordinator = append_coordinator(&table).await;

    let one_by_one: Vec<_> = payloads
        .iter()
        .map(|payload| coordinator.deserialize(V, payload).expect("deserialize"))
        .collect();
    let at_once = coordinator
        .deserialize_all(V, &payloads)
        .expect("deserialize_all");
    assert_eq!(at_once.len(), payloads.len());
    for (index, (alone, batched)) in one_by_one.iter().zip(&at_once).enumerate() {
        assert_eq!(
            fingerprint(alone),
            fingerprint(batched),
            "payload {index} bound differently when decoded with the others"
        );
    }

    let merged = coordinator.merge(at_once).expect("merge");
    assert_eq!(merged.reported_row_count(), rows.len() as i64);
    assert_eq!(
        coordinator.commit(merged, 1).await.expect("commit"),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    assert_eq!(read_rows(&table).await, expected(&rows));
}

#[tokio::test]
async fn a_refusal_names_the_first_payload_refused_in_the_order_given() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("batch", Kind::PartitionedAppend).await;
    let (mut payloads, _) = payloads(&table, 8).await;
    // Payload 3 is cut short and payload 5 is not a payload at all: whichever a worker
    // meets first, the answer is payload 3's refusal, as one-by-one decoding gives it.
    let half = payloads[3].len() / 2;
    payloads[3].truncate(half);
    payloads[5] = b"not a payload".to_vec();
    let coordinator = append_coordinator(&table).await;
    let expected_error = coordinator
        .deserialize(V, &payloads[3])
        .expect_err("payload 3 is cut short")
        .to_string();
    // Threads race differently on each run; the answer must not.
    for _ in 0..50 {
        let refused = coordinator
            .deserialize_all(V, &payloads)
            .expect_err("two payloads are refused");
        assert_eq!(refused.index, 3);
        assert!(matches!(refused.error, CoordinatorError::Codec(_)));
        assert_eq!(refused.error.to_string(), expected_error);
        assert_eq!(
            refused.to_string(),
            format!("payload 3 (counting from 0 in the order given): {expected_error}")
        );
    }
}

#[tokio::test]
async fn payloads_are_taken_as_needed_and_none_after_a_refusal() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("batch", Kind::PartitionedAppend).await;
    let (good, _) = payloads(&table, 1).await;
    let coordinator = append_coordinator(&table).await;

    // A source of 1,000 payloads of which the second is refused: each is made when it is
    // taken, as a caller reading files or a socket would.
    let taken = AtomicUsize::new(0);
    let source = (0..1_000).map(|index| {
        taken.fetch_add(1, Ordering::SeqCst);
        if index == 1 {
            b"refused".to_vec()
        } else {
            good[0].clone()
        }
    });
    let refused = coordinator
        .deserialize_all(V, source)
        .expect_err("payload 1 is refused");
    assert_eq!(refused.index, 1);
    // Payloads 0 and 1 only: none is taken after the refused one.
    assert_eq!(taken.load(Ordering::SeqCst), 2);

    assert!(coordinator
        .deserialize_all(V, std::iter::empty::<Vec<u8>>())
        .expect("no payloads")
        .is_empty());
}

#[tokio::test]
async fn payloads_of_different_versions_bind_as_each_alone_at_its_version() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("batch", Kind::PartitionedAppend).await;
    let (payloads, rows) = payloads(&table, 8).await;
    let coordinator = append_coordinator(&table).await;
    // Workers of different releases: each payload rewritten at the version its worker writes.
    let versions = [
        SerializerVersion::CURRENT,
        SerializerVersion::V12,
        SerializerVersion::V10,
        SerializerVersion::V7,
    ];
    let versioned: Vec<(SerializerVersion, Vec<u8>)> = payloads
        .iter()
        .zip(versions.iter().cycle())
        .map(|(payload, &version)| {
            let messages = coordinator.deserialize(V, payload).expect("deserialize");
            let rewritten = serialize_list(messages.messages(), version).expect("serialize");
            (version, rewritten)
        })
        .collect();

    let at_once = coordinator
        .deserialize_all_versioned(versioned.iter().map(|(version, bytes)| (*version, bytes)))
        .expect("deserialize_all_versioned");
    assert_eq!(at_once.len(), versioned.len());
    for (index, ((version, bytes), batched)) in versioned.iter().zip(&at_once).enumerate() {
        let alone = coordinator
            .deserialize(*version, bytes)
            .expect("deserialize");
        assert_eq!(
            fingerprint(&alone),
            fingerprint(batched),
            "payload {index} (v{version}) bound differently when decoded with the others"
        );
    }

    // A payload read at a version it was not written at is refused, and named.
    let mut mislabelled = versioned.clone();
    mislabelled[5].0 = SerializerVersion::V3;
    let refused = coordinator
        .deserialize_all_versioned(mislabelled)
        .expect_err("payload 5 is read at the wrong version");
    assert_eq!(refused.index, 5);

    let merged = coordinator.merge(at_once).expect("merge");
    assert_eq!(
        coordinator.commit(merged, 1).await.expect("commit"),
        CommitOutcome::Committed { snapshot_id: 1 }
    );
    assert_eq!(read_rows(&table).await, expected(&rows));
}
