//! Encode and decode throughput of paimon-wire and of the `paimon` crate's own version 14
//! codec, on the same messages and bytes (W1, W2), and the coordinator's decode + validate +
//! merge of W3. `scripts/bench` puts these next to Java's numbers.
//!
//! Every iteration of these benchmarks takes milliseconds to a second, so the groups use
//! flat sampling (the same iteration count in every sample) and few samples; `scripts/bench`
//! passes short warm-up and measurement times.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, SamplingMode, Throughput};
use paimon_wire::coordinator::open_table;
use paimon_wire::view::PayloadView;
use paimon_wire::{
    deserialize_list, serialize_list, serialize_list_into, split_list, Binding, CommitMessage,
    Coordinator, EncodeOptions, SerializerVersion,
};
use paimon_wire_bench::{create_w3_table, w1, w2, w3_one_worker, w3_workers, W3_WORKERS};

/// With the `mimalloc` feature the whole process allocates through mimalloc.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Samples per benchmark.
const SAMPLES: usize = 10;

/// The `paimon` crate has no list framing: its payload is the messages one after another,
/// each with its length, which costs the same framing bytes as Java's list.
fn paimon_crate_encode(messages: &[CommitMessage]) -> Vec<Vec<u8>> {
    messages.iter().map(|m| m.serialize().unwrap()).collect()
}

fn bench_workload(c: &mut Criterion, name: &str, messages: Vec<CommitMessage>) {
    let v14 = SerializerVersion::V14;
    let v12 = SerializerVersion::V12;
    let ours14 = serialize_list(&messages, v14).unwrap();
    let ours12 = serialize_list(&messages, v12).unwrap();
    let theirs = paimon_crate_encode(&messages);
    let mut group = c.benchmark_group(name);
    group.sample_size(SAMPLES);
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Bytes(ours14.len() as u64));

    group.bench_function("decode/paimon-wire/v14", |b| {
        b.iter(|| deserialize_list(v14, &ours14).unwrap())
    });
    group.bench_function("decode/paimon-crate/v14", |b| {
        b.iter(|| {
            theirs
                .iter()
                .map(|bytes| CommitMessage::deserialize(14, bytes).unwrap())
                .collect::<Vec<_>>()
        })
    });
    // Views (issue 15): the whole payload checked up front, nothing copied; then owned values
    // materialized from an already parsed view (compare with the clone floor below).
    group.bench_function("view/paimon-wire/v14", |b| {
        b.iter(|| PayloadView::parse(v14, &ours14).unwrap())
    });
    let parsed14 = PayloadView::parse(v14, &ours14).unwrap();
    group.bench_function("materialize/paimon-wire/v14", |b| {
        b.iter(|| parsed14.to_messages())
    });
    group.bench_function("encode/paimon-wire/v14", |b| {
        b.iter(|| serialize_list(&messages, v14).unwrap())
    });
    group.bench_function("encode/paimon-crate/v14", |b| {
        b.iter(|| paimon_crate_encode(&messages))
    });
    let mut reused = Vec::new();
    group.bench_function("encode-reuse/paimon-wire/v14", |b| {
        b.iter(|| {
            reused.clear();
            serialize_list_into(&messages, v14, &EncodeOptions::default(), &mut reused).unwrap();
            reused.len()
        })
    });

    group.throughput(Throughput::Bytes(ours12.len() as u64));
    group.bench_function("decode/paimon-wire/v12", |b| {
        b.iter(|| deserialize_list(v12, &ours12).unwrap())
    });
    group.bench_function("view/paimon-wire/v12", |b| {
        b.iter(|| PayloadView::parse(v12, &ours12).unwrap())
    });
    group.bench_function("encode/paimon-wire/v12", |b| {
        b.iter(|| serialize_list(&messages, v12).unwrap())
    });
    group.bench_function("encode-reuse/paimon-wire/v12", |b| {
        b.iter(|| {
            reused.clear();
            serialize_list_into(&messages, v12, &EncodeOptions::default(), &mut reused).unwrap();
            reused.len()
        })
    });
    // The least any decoder into these types can take: allocating and filling the same
    // values (a clone makes exactly the allocations a decode makes, and copies the same bytes)
    // and dropping them again, as every decode benchmark above drops its result.
    group.bench_function("floor/clone+drop/-", |b| b.iter(|| messages.clone()));
    group.bench_function("floor/drop-only/-", |b| {
        b.iter_batched(|| messages.clone(), drop, BatchSize::LargeInput)
    });
    group.finish();
}

/// W3: 1,000 worker payloads decoded and validated one by one by a coordinator bound to a
/// real table, then merged into one set of 100,000 files.
fn bench_coordinator(c: &mut Criterion) {
    let version = SerializerVersion::CURRENT;
    let payloads: Vec<Vec<u8>> = w3_workers()
        .iter()
        .map(|messages| serialize_list(messages, version).unwrap())
        .collect();
    let total_bytes: usize = payloads.iter().map(Vec::len).sum();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let warehouse = tempfile::tempdir().unwrap();
    let coordinator = runtime.block_on(async {
        let path = warehouse.path().to_str().unwrap();
        let name = create_w3_table(path).await.unwrap();
        let table = open_table(path, name).await.unwrap();
        Coordinator::bind(table, Binding::append("w3-bench"))
            .await
            .unwrap()
    });
    let decode_validate_merge = || {
        let parts = payloads
            .iter()
            .map(|payload| coordinator.deserialize(version, payload).unwrap());
        coordinator.merge(parts).unwrap()
    };
    let merged = decode_validate_merge();
    assert_eq!(merged.len(), W3_WORKERS);
    assert_eq!(merged.data_file_count(), W3_WORKERS * 100);
    drop(merged);

    let mut group = c.benchmark_group("W3");
    group.sample_size(SAMPLES);
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Bytes(total_bytes as u64));
    group.bench_function(
        format!("decode+validate+merge/paimon-wire/v{version}"),
        |b| b.iter(decode_validate_merge),
    );
    group.bench_function(format!("decode/paimon-wire/v{version}"), |b| {
        b.iter(|| {
            payloads
                .iter()
                .map(|payload| deserialize_list(version, payload).unwrap())
                .collect::<Vec<_>>()
        })
    });
    group.finish();
}

fn codec(c: &mut Criterion) {
    bench_workload(c, "W1", w1());
    bench_workload(c, "W2", w2());
    bench_coordinator(c);
    bench_split(c, "W1", w1());
    bench_split(c, "W3-one-worker", w3_one_worker());
}

/// Size-bounded payloads (issue 27): `split_list` at 1 MiB against one `serialize_list` of the
/// same messages. W1's messages fit a payload each (packing only); W3 as one worker has 30
/// messages of ~2.9 MB, each split by its files.
fn bench_split(c: &mut Criterion, name: &str, messages: Vec<CommitMessage>) {
    let v14 = SerializerVersion::V14;
    let whole = serialize_list(&messages, v14).unwrap();
    let mut group = c.benchmark_group(format!("split-{name}"));
    group.sample_size(SAMPLES);
    group.sampling_mode(SamplingMode::Flat);
    group.throughput(Throughput::Bytes(whole.len() as u64));
    group.bench_function("encode/paimon-wire/v14", |b| {
        b.iter(|| serialize_list(&messages, v14).unwrap())
    });
    group.bench_function("split-1MiB/paimon-wire/v14", |b| {
        b.iter(|| split_list(&messages, v14, SPLIT_BYTES).unwrap())
    });
    group.finish();
}

/// The payload limit of the split benchmarks.
const SPLIT_BYTES: usize = 1 << 20;

criterion_group!(benches, codec);
criterion_main!(benches);
