//! Runs one codec operation on one workload in a loop, for profilers (callgrind, perf):
//!
//! `codec-loop decode|view|encode|crate-decode|crate-encode|w3 W1|W2 VERSION ITERATIONS`
//!
//! The work is inside `run`, so `valgrind --tool=callgrind --collect-atstart=no
//! --toggle-collect=*codec_loop*run*` profiles only it, not the workload generation.
//! (`w3` ignores the workload and runs the coordinator on W3.)

use std::time::Instant;

use paimon_wire::coordinator::open_table;
use paimon_wire::view::PayloadView;
use paimon_wire::{
    deserialize_list, serialize_list, Binding, CommitMessage, Coordinator, SerializerVersion,
};

/// With the `mimalloc` feature the whole process allocates through mimalloc.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[inline(never)]
fn run(op: &str, messages: &[CommitMessage], version: SerializerVersion, payload: &[u8]) -> usize {
    match op {
        "decode" => deserialize_list(version, payload).unwrap().len(),
        "view" => PayloadView::parse(version, payload).unwrap().len(),
        "encode" => serialize_list(messages, version).unwrap().len(),
        "crate-encode" => messages.iter().map(|m| m.serialize().unwrap().len()).sum(),
        _ => panic!("unknown operation {op}"),
    }
}

#[inline(never)]
fn run_crate_decode(payloads: &[Vec<u8>]) -> usize {
    payloads
        .iter()
        .map(|p| CommitMessage::deserialize(14, p).unwrap())
        .collect::<Vec<_>>()
        .len()
}

#[inline(never)]
fn run_w3(coordinator: &Coordinator, version: SerializerVersion, payloads: &[Vec<u8>]) -> usize {
    let parts = payloads
        .iter()
        .map(|payload| coordinator.deserialize(version, payload).unwrap());
    coordinator.merge(parts).unwrap().data_file_count()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [op, workload, version, iterations] = &args[..] else {
        return Err("usage: codec-loop OP W1|W2 VERSION ITERATIONS".into());
    };
    let version = SerializerVersion::try_from(version.parse::<i32>()?)?;
    let iterations: usize = iterations.parse()?;
    let start = Instant::now();
    let mut work = 0;
    if op == "w3" {
        let payloads: Vec<Vec<u8>> = paimon_wire_bench::w3_workers()
            .iter()
            .map(|messages| serialize_list(messages, version))
            .collect::<Result<_, _>>()?;
        let runtime = tokio::runtime::Builder::new_current_thread().build()?;
        let warehouse = tempfile::tempdir()?;
        let path = warehouse.path().to_str().ok_or("temp dir is not UTF-8")?;
        let coordinator = runtime.block_on(async {
            let name = paimon_wire_bench::create_w3_table(path).await?;
            let table = open_table(path, name).await?;
            Ok::<_, Box<dyn std::error::Error>>(
                Coordinator::bind(table, Binding::append("codec-loop")).await?,
            )
        })?;
        let start = Instant::now();
        for _ in 0..iterations {
            work += run_w3(&coordinator, version, &payloads);
        }
        println!(
            "{op}: {:?} per iteration ({work} units)",
            start.elapsed() / iterations as u32
        );
        return Ok(());
    }
    let messages = match workload.as_str() {
        "W1" => paimon_wire_bench::w1(),
        "W2" => paimon_wire_bench::w2(),
        _ => return Err(format!("unknown workload {workload}").into()),
    };
    let payload = serialize_list(&messages, version)?;
    eprintln!("workload ready in {:?}", start.elapsed());
    let start = Instant::now();
    if op == "crate-decode" {
        let payloads: Vec<Vec<u8>> = messages
            .iter()
            .map(|m| m.serialize())
            .collect::<Result<_, _>>()?;
        let start = Instant::now();
        for _ in 0..iterations {
            work += run_crate_decode(&payloads);
        }
        println!(
            "{op}: {:?} per iteration ({work} units)",
            start.elapsed() / iterations as u32
        );
        return Ok(());
    }
    for _ in 0..iterations {
        work += run(op, &messages, version, &payload);
    }
    println!(
        "{op} {workload} v{version}: {:?} per iteration ({work} units)",
        start.elapsed() / iterations as u32
    );
    Ok(())
}
