//! Encode and decode throughput of paimon-wire and of the `paimon` crate's own version 14
//! codec, on the same messages and bytes. `scripts/bench` puts these next to Java's numbers.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use paimon_wire::{deserialize_list, serialize_list, CommitMessage, SerializerVersion};
use paimon_wire_bench::{w1, w2};

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
    group.sample_size(20);
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
    group.bench_function("encode/paimon-wire/v14", |b| {
        b.iter(|| serialize_list(&messages, v14).unwrap())
    });
    group.bench_function("encode/paimon-crate/v14", |b| {
        b.iter(|| paimon_crate_encode(&messages))
    });

    group.throughput(Throughput::Bytes(ours12.len() as u64));
    group.bench_function("decode/paimon-wire/v12", |b| {
        b.iter(|| deserialize_list(v12, &ours12).unwrap())
    });
    group.bench_function("encode/paimon-wire/v12", |b| {
        b.iter(|| serialize_list(&messages, v12).unwrap())
    });
    group.bench_function("drop/messages", |b| {
        b.iter_batched(|| messages.clone(), drop, BatchSize::LargeInput)
    });
    group.finish();
}

fn codec(c: &mut Criterion) {
    bench_workload(c, "W1", w1());
    bench_workload(c, "W2", w2());
}

criterion_group!(benches, codec);
criterion_main!(benches);
