//! Peak memory of decoding: for each workload payload of S bytes, the most heap memory held at
//! once during `deserialize_list` beyond what was held before it (the decoded messages
//! included), and what stays held afterwards (the messages alone). The target is a peak of at
//! most 3 × S.
//!
//! `decode-memory` prints one line per payload:
//! `memory workload=W version=V bytes=S peak_extra=P retained=R allocations=N` (bytes, and
//! allocation calls during the decode), and one line with the inline size of a decoded data
//! file's metadata, which every file costs before its heap parts:
//! `layout DataFileMeta inline_bytes=B`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use paimon_wire::{deserialize_list, serialize_list, CommitMessage, SerializerVersion};

/// The system allocator, counting the bytes it has handed out and the peak of that count.
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static CALLS: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    CALLS.fetch_add(1, Ordering::Relaxed);
    let now = HELD.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    HELD.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so
// `System`'s guarantees are ours; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` came from this allocator with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            // Count the old block as held until the new one exists, as a copy would need.
            grew(new_size);
            shrank(layout.size());
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak extra bytes held while decoding `payload`, bytes still held by the result, and the
/// number of allocations (including reallocations) decoding made.
fn measure(version: SerializerVersion, payload: &[u8]) -> (usize, usize, usize) {
    let before = HELD.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let calls = CALLS.load(Ordering::Relaxed);
    let messages = deserialize_list(version, payload).expect("workload payload decodes");
    let peak = PEAK.load(Ordering::Relaxed) - before;
    let retained = HELD.load(Ordering::Relaxed) - before;
    let calls = CALLS.load(Ordering::Relaxed) - calls;
    drop(messages);
    (peak, retained, calls)
}

fn report(workload: &str, version: SerializerVersion, payload: &[u8]) {
    let (peak, retained, allocations) = measure(version, payload);
    println!(
        "memory workload={workload} version={version} bytes={} peak_extra={peak} retained={retained} allocations={allocations}",
        payload.len()
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!(
        "layout DataFileMeta inline_bytes={}",
        std::mem::size_of::<paimon_wire::paimon::spec::DataFileMeta>()
    );
    let workloads: [(&str, Vec<CommitMessage>); 2] = [
        ("W1", paimon_wire_bench::w1()),
        ("W2", paimon_wire_bench::w2()),
    ];
    for (name, messages) in &workloads {
        for version in [SerializerVersion::V14, SerializerVersion::V12] {
            report(name, version, &serialize_list(messages, version)?);
        }
    }
    drop(workloads);
    // W3: the largest peak over the 1,000 worker payloads.
    let version = SerializerVersion::CURRENT;
    let mut worst: Option<(f64, usize, usize, usize, usize)> = None;
    for messages in paimon_wire_bench::w3_workers() {
        let payload = serialize_list(&messages, version)?;
        let (peak, retained, allocations) = measure(version, &payload);
        let ratio = peak as f64 / payload.len() as f64;
        if worst.is_none_or(|(r, ..)| ratio > r) {
            worst = Some((ratio, payload.len(), peak, retained, allocations));
        }
    }
    if let Some((_, bytes, peak, retained, allocations)) = worst {
        println!(
            "memory workload=W3-worst-payload version={version} bytes={bytes} peak_extra={peak} retained={retained} allocations={allocations}"
        );
    }
    Ok(())
}
