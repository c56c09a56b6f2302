//! Apache Doris's `DPCM` frames at the coordinator: a frame is read where a payload is
//! (`deserialize`, `deserialize_parts`), told by its magic; a frame delivered twice commits
//! its files once, the same file with other metadata is refused, and a bad frame is a typed
//! error naming the field and offset, with nothing committed.

use paimon_wire::coordinator::{CommitOutcome, CoordinatorError, PayloadPart};
use paimon_wire::dpcm::{frame, FrameErrorKind};
use paimon_wire::{serialize_list, split_list, SerializerVersion};

use super::support::{
    append_coordinator, expected, read_rows, snapshot_count, worker_messages, Kind, Warehouse,
};

const V: SerializerVersion = SerializerVersion::CURRENT;

#[tokio::test]
async fn frames_from_several_backends_one_delivered_twice_commit_every_row_once() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let first_rows: Vec<(i32, &str)> = (0..10).map(|id| (id, "a")).collect();
    let second_rows: Vec<(i32, &str)> = (10..20).map(|id| (id, "b")).collect();
    let first = serialize_list(&worker_messages(&table, &first_rows).await, V).unwrap();
    let second = serialize_list(&worker_messages(&table, &second_rows).await, V).unwrap();
    let (first, second) = (frame(V, &first).unwrap(), frame(V, &second).unwrap());

    let coordinator = append_coordinator(&table).await;
    // A retried RPC delivers the first backend's frame twice.
    let parts = [&first, &second, &first]
        .into_iter()
        .map(|bytes| coordinator.deserialize(V, bytes))
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let merged = coordinator.merge(parts).unwrap();
    assert_eq!(merged.data_file_count(), 2, "each file once");
    let outcome = coordinator.commit(merged, 1).await.unwrap();
    assert!(
        matches!(outcome, CommitOutcome::Committed { .. }),
        "{outcome:?}"
    );
    let all: Vec<(i32, &str)> = first_rows.into_iter().chain(second_rows).collect();
    assert_eq!(read_rows(&table).await, expected(&all));
    assert_eq!(snapshot_count(&table).await, 1);
}

#[tokio::test]
async fn a_frame_naming_a_file_of_another_frame_with_other_metadata_is_refused() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let rows: Vec<(i32, &str)> = (0..10).map(|id| (id, "a")).collect();
    let messages = worker_messages(&table, &rows).await;
    let mut altered = messages.clone();
    altered[0].new_files[0].row_count += 1;
    let honest = frame(V, &serialize_list(&messages, V).unwrap()).unwrap();
    let lying = frame(V, &serialize_list(&altered, V).unwrap()).unwrap();

    let coordinator = append_coordinator(&table).await;
    let parts = vec![
        coordinator.deserialize(V, &honest).unwrap(),
        coordinator.deserialize(V, &lying).unwrap(),
    ];
    let error = coordinator.merge(parts).unwrap_err();
    let CoordinatorError::Merge(conflict) = &error else {
        panic!("expected a merge conflict, got {error}");
    };
    assert_eq!(conflict.file_name, messages[0].new_files[0].file_name);
    assert!(
        error.to_string().contains("nothing was committed"),
        "{error}"
    );
    assert_eq!(snapshot_count(&table).await, 0);
}

#[tokio::test]
async fn a_split_set_of_frames_binds_as_the_one_payload() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let mut messages = Vec::new();
    for worker in 0..12 {
        let rows: Vec<(i32, &str)> = (worker * 10..worker * 10 + 10)
            .map(|id| (id, if id % 2 == 0 { "a" } else { "b" }))
            .collect();
        messages.extend(worker_messages(&table, &rows).await);
    }
    let framed: Vec<Vec<u8>> = split_list(&messages, V, 2048)
        .unwrap()
        .iter()
        .map(|body| frame(V, body).unwrap())
        .collect();
    assert!(framed.len() >= 3, "{} frames", framed.len());
    let count = framed.len() as u32;
    let mut parts: Vec<PayloadPart<'_>> = framed
        .iter()
        .enumerate()
        .map(|(index, bytes)| PayloadPart {
            index: index as u32,
            count,
            bytes,
        })
        .collect();
    parts.reverse();
    let coordinator = append_coordinator(&table).await;
    let bound = coordinator.deserialize_parts(V, &parts).unwrap();
    let whole = coordinator
        .deserialize(V, &serialize_list(&messages, V).unwrap())
        .unwrap();
    assert_eq!(bound.data_file_count(), whole.data_file_count());
    assert_eq!(bound.reported_row_count(), 120);

    // One part framed at another version than the set's is refused by its offset.
    let older = frame(
        SerializerVersion::V13,
        &serialize_list(&messages[..1], SerializerVersion::V13).unwrap(),
    )
    .unwrap();
    parts[0] = PayloadPart {
        index: parts[0].index,
        count,
        bytes: &older,
    };
    let error = coordinator.deserialize_parts(V, &parts).unwrap_err();
    let CoordinatorError::Frame(refused) = &error else {
        panic!("expected a frame error, got {error}");
    };
    assert_eq!(
        (&refused.kind, refused.offset),
        (
            &FrameErrorKind::VersionDisagrees {
                framed: 13,
                expected: 14
            },
            4
        )
    );
}

#[tokio::test]
async fn bad_frames_are_typed_errors_naming_the_field_and_offset() {
    let warehouse = Warehouse::new();
    let table = warehouse.create("events", Kind::PartitionedAppend).await;
    let rows: Vec<(i32, &str)> = (0..10).map(|id| (id, "a")).collect();
    let raw = serialize_list(&worker_messages(&table, &rows).await, V).unwrap();
    let good = frame(V, &raw).unwrap();
    let coordinator = append_coordinator(&table).await;
    assert_eq!(
        coordinator.deserialize(V, &good).unwrap().data_file_count(),
        coordinator.deserialize(V, &raw).unwrap().data_file_count()
    );

    let mut trailing = good.clone();
    trailing.push(0);
    let mut negative = good.clone();
    negative[8..12].copy_from_slice(&(-1i32).to_be_bytes());
    let mut unknown = good.clone();
    unknown[4..8].copy_from_slice(&99i32.to_be_bytes());
    let cases: [(&str, &[u8], SerializerVersion, usize, &str); 5] = [
        (
            "truncated",
            &good[..good.len() - 1],
            V,
            good.len() - 1,
            "truncated",
        ),
        (
            "trailing",
            &trailing,
            V,
            good.len(),
            "one frame is one payload",
        ),
        ("negative length", &negative, V, 8, "body of -1 bytes"),
        ("unknown version", &unknown, V, 4, "serializer version 99"),
        (
            "another version",
            &good,
            SerializerVersion::V13,
            4,
            "sent as version 13",
        ),
    ];
    for (case, bytes, version, offset, said) in cases {
        let error = coordinator.deserialize(version, bytes).unwrap_err();
        let CoordinatorError::Frame(refused) = &error else {
            panic!("{case}: expected a frame error, got {error}");
        };
        assert_eq!(refused.offset, offset, "{case}: {error}");
        let message = error.to_string();
        assert!(message.contains(said), "{case}: {message}");
        assert!(
            message.contains("nothing was committed"),
            "{case}: {message}"
        );
        assert!(!error.outcome_unknown(), "{case}");
    }
    assert_eq!(snapshot_count(&table).await, 0);
}
