//! Hostile payloads against the decoder's memory and the caller's [`DecodeLimits`].
//!
//! A counting global allocator measures the peak heap of each decode on the test's own thread:
//! whatever a payload's length and count fields claim, decoding must never hold more than a
//! small multiple of the payload's length.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use paimon_wire::{
    deserialize_list, deserialize_list_with_limits, serialize_list, CodecErrorKind, CommitMessage,
    DecodeLimits, Limit, SerializerVersion,
};

/// Counts the live heap bytes of each thread and their peak.
struct CountingAllocator;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn record(delta: isize) {
    // `try_with`: the allocator also runs while thread-locals are torn down.
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded to `System` unchanged; the counters do not allocate.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            record(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            record(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout` (through this allocator).
        unsafe { System.dealloc(ptr, layout) };
        record(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded; `ptr`/`layout` came from this allocator.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            record(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Runs `f` and returns its result and the most heap bytes it held at once (on this thread,
/// above what was live before), including what the result itself holds.
fn peak_heap<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|peak| peak.set(base));
    let out = f();
    let peak = PEAK.with(Cell::get);
    (out, (peak - base).max(0) as usize)
}

/// Most heap a decode may hold: this many times the payload's length, plus a constant for
/// the error or the empty result.
const MAX_HEAP_PER_PAYLOAD_BYTE: usize = 12;
const HEAP_SLACK: usize = 4096;

fn heap_bound(len: usize) -> usize {
    MAX_HEAP_PER_PAYLOAD_BYTE * len + HEAP_SLACK
}

/// A payload of `count` messages with every list empty, readable at `version`: written at
/// `version`, or for a version no release writes, at a writable version whose bytes it reads.
fn empty_messages(version: SerializerVersion, count: usize) -> Vec<u8> {
    let messages = vec![CommitMessage::new(Vec::new(), 0, Vec::new()); count];
    SerializerVersion::WRITABLE
        .iter()
        .rev()
        .map(|&writable| serialize_list(&messages, writable).unwrap())
        .find(|bytes| deserialize_list(version, bytes).is_ok_and(|m| m.len() == count))
        .unwrap_or_else(|| panic!("no writable version's bytes read at {version}"))
}

/// The 100-byte payloads of the issue: a valid one-message payload at `version`, one of its
/// zero `int` fields (the message count, every file-list count, ...) replaced by `i32::MAX`
/// (2^31 - 1: "2^31 files"), padded with zeros to 100 bytes.
fn payloads_claiming_2_pow_31(version: SerializerVersion) -> Vec<(usize, Vec<u8>)> {
    let base = empty_messages(version, 1);
    assert!(base.len() <= 100, "{} bytes at {version}", base.len());
    let mut claims = vec![(0, {
        let mut p = base.clone();
        p[..4].copy_from_slice(&i32::MAX.to_be_bytes());
        p
    })];
    for at in 4..base.len().saturating_sub(3) {
        if base[at..at + 4] == [0, 0, 0, 0] {
            let mut p = base.clone();
            p[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
            claims.push((at, p));
        }
    }
    for (_, p) in &mut claims {
        p.resize(100, 0);
    }
    claims
}

#[test]
fn a_100_byte_payload_claiming_2_pow_31_files_fails_without_allocating_for_them() {
    let mut largest_peak = 0;
    for version in SerializerVersion::ALL {
        let claims = payloads_claiming_2_pow_31(version);
        // The message count and at least the new_files count are among the patched fields.
        assert!(claims.len() >= 2, "{version}");
        for (at, payload) in claims {
            let (result, peak) = peak_heap(|| deserialize_list(version, &payload));
            let error = match result {
                Err(e) => e,
                Ok(messages) => panic!(
                    "{version}: i32::MAX at offset {at} decoded to {} messages",
                    messages.len()
                ),
            };
            assert!(
                peak <= HEAP_SLACK,
                "{version}: i32::MAX at offset {at} made the decoder hold {peak} bytes ({error})"
            );
            largest_peak = largest_peak.max(peak);
        }
    }
    println!("largest peak heap for a 100-byte payload claiming 2^31 - 1: {largest_peak} bytes");
}

#[test]
fn a_claimed_message_count_is_refused_as_an_invalid_length_naming_the_field() {
    let mut payload = vec![0u8; 100];
    payload[..4].copy_from_slice(&i32::MAX.to_be_bytes());
    let error = deserialize_list(SerializerVersion::CURRENT, &payload).unwrap_err();
    assert_eq!(
        error.kind(),
        &CodecErrorKind::InvalidLength {
            length: i32::MAX as i64,
            available: 96
        }
    );
    assert_eq!(error.field_path(), "messages");
    assert_eq!(error.offset(), Some(0));
}

#[test]
fn decoding_real_java_payloads_holds_at_most_a_small_multiple_of_their_length() {
    let mut worst = (0.0f64, String::new());
    for (path, version) in common::java_fixtures() {
        let bytes = std::fs::read(&path).unwrap();
        let (decoded, peak) = peak_heap(|| deserialize_list(version, &bytes));
        let messages = decoded.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        drop(messages);
        assert!(
            peak <= heap_bound(bytes.len()),
            "{}: {peak} bytes of heap for a {}-byte payload",
            path.display(),
            bytes.len()
        );
        let ratio = peak as f64 / bytes.len() as f64;
        if bytes.len() > 1000 && ratio > worst.0 {
            worst = (ratio, path.display().to_string());
        }
    }
    println!("worst heap/payload ratio of the Java fixtures over 1 kB: {worst:?}");
}

#[test]
fn every_truncation_and_count_patch_of_a_real_payload_stays_within_the_heap_bound() {
    let fixtures = common::java_fixtures();
    for (path, version) in fixtures.iter().filter(|(p, _)| {
        p.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("messages-")
    }) {
        let bytes = std::fs::read(path).unwrap();
        // Truncations, on a stride to keep the test fast.
        for len in (0..bytes.len()).step_by(509) {
            let prefix = &bytes[..len];
            let (result, peak) = peak_heap(|| deserialize_list(*version, prefix));
            assert!(result.is_err(), "{} cut at {len} decoded", path.display());
            assert!(
                peak <= heap_bound(len),
                "{} cut at {len}: {peak} bytes",
                path.display()
            );
        }
        // Every `int` position of the first kilobyte (message header, first files, their
        // lists' counts and lengths) made to claim 2^31 - 1.
        for at in 0..bytes.len().min(1024) - 3 {
            let mut patched = bytes.clone();
            patched[at..at + 4].copy_from_slice(&i32::MAX.to_be_bytes());
            let (_, peak) = peak_heap(|| deserialize_list(*version, &patched));
            assert!(
                peak <= heap_bound(bytes.len()),
                "{} with i32::MAX at {at}: {peak} bytes",
                path.display()
            );
        }
    }
}

/// Three messages with 2, 0 and 3 data files, at the current version.
fn three_messages() -> Vec<u8> {
    let files = |names: &[&str]| names.iter().map(|n| common::fixed_data_file(n)).collect();
    let messages = vec![
        CommitMessage::new(Vec::new(), 0, files(&["a-1", "a-2"])),
        CommitMessage::new(Vec::new(), 1, Vec::new()),
        CommitMessage::new(Vec::new(), 2, files(&["c-1", "c-2", "c-3"])),
    ];
    serialize_list(&messages, SerializerVersion::CURRENT).unwrap()
}

fn limit_error(payload: &[u8], limits: DecodeLimits) -> paimon_wire::CodecError {
    deserialize_list_with_limits(SerializerVersion::CURRENT, payload, &limits).unwrap_err()
}

#[test]
fn limits_refuse_payloads_over_them_by_name_and_accept_payloads_at_them() {
    let payload = three_messages();
    let exact = DecodeLimits {
        max_payload_bytes: payload.len(),
        max_messages: 3,
        max_files: 5,
    };
    let decoded = deserialize_list_with_limits(SerializerVersion::CURRENT, &payload, &exact)
        .expect("a payload exactly at every limit decodes");
    assert_eq!(decoded.len(), 3);

    let e = limit_error(
        &payload,
        DecodeLimits {
            max_payload_bytes: payload.len() - 1,
            ..exact
        },
    );
    assert_eq!(
        e.kind(),
        &CodecErrorKind::LimitExceeded {
            limit: Limit::PayloadBytes,
            found: payload.len(),
            max: payload.len() - 1
        }
    );
    assert_eq!((e.field_path().as_str(), e.offset()), ("payload", Some(0)));
    assert_eq!(
        e.to_string(),
        format!(
            "payload exceeds the decode limit max_payload_bytes = {}: it has {} bytes \
             (version 14, field payload, offset 0)",
            payload.len() - 1,
            payload.len()
        )
    );

    let e = limit_error(
        &payload,
        DecodeLimits {
            max_messages: 2,
            ..exact
        },
    );
    assert_eq!(
        e.kind(),
        &CodecErrorKind::LimitExceeded {
            limit: Limit::Messages,
            found: 3,
            max: 2
        }
    );
    assert_eq!((e.field_path().as_str(), e.offset()), ("messages", Some(0)));

    // Files are counted over the messages: the third message brings the total to 5.
    let e = limit_error(
        &payload,
        DecodeLimits {
            max_files: 4,
            ..exact
        },
    );
    assert_eq!(
        e.kind(),
        &CodecErrorKind::LimitExceeded {
            limit: Limit::Files,
            found: 5,
            max: 4
        }
    );
    assert_eq!(e.field_path(), "messages[2].files");
    let third_message_offset = {
        let first_two = serialize_list(
            &deserialize_list(SerializerVersion::CURRENT, &payload).unwrap()[..2],
            SerializerVersion::CURRENT,
        )
        .unwrap();
        first_two.len()
    };
    assert_eq!(e.offset(), Some(third_message_offset));
}

#[test]
fn limits_apply_to_both_historical_layouts_of_version_2() {
    // A Paimon 0.7 payload is read with the legacy layout, after the newer one fails.
    let (path, version) = common::java_fixtures()
        .into_iter()
        .find(|(p, _)| p.to_str().unwrap().contains("0.7.0") && p.ends_with("messages-v2.bin"))
        .expect("the Paimon 0.7 fixture");
    let bytes = std::fs::read(path).unwrap();
    let count = deserialize_list(version, &bytes).unwrap().len();
    assert!(count > 1);
    let e = deserialize_list_with_limits(
        version,
        &bytes,
        &DecodeLimits {
            max_messages: count - 1,
            ..DecodeLimits::default()
        },
    )
    .unwrap_err();
    assert!(
        matches!(
            e.kind(),
            CodecErrorKind::LimitExceeded {
                limit: Limit::Messages,
                ..
            }
        ),
        "{e}"
    );
}

#[test]
fn default_limits_are_the_documented_ones_and_unlimited_is_deserialize_list() {
    let d = DecodeLimits::default();
    assert_eq!(d.max_payload_bytes, 64 * 1024 * 1024);
    assert_eq!(d.max_messages, 100_000);
    assert_eq!(d.max_files, 1_000_000);
    let payload = three_messages();
    assert_eq!(
        common::dump(&deserialize_list(SerializerVersion::CURRENT, &payload).unwrap()),
        common::dump(
            &deserialize_list_with_limits(
                SerializerVersion::CURRENT,
                &payload,
                &DecodeLimits::UNLIMITED
            )
            .unwrap()
        )
    );
}

#[test]
fn the_densest_payload_minimal_messages_stays_within_the_heap_bound() {
    // An empty message is the densest element the layouts allow (44 to 62 bytes, each
    // decoding to a 416-byte `CommitMessage` plus its 12-byte partition): the worst ratio.
    for version in SerializerVersion::ALL {
        let payload = empty_messages(version, 1000);
        let (decoded, peak) = peak_heap(|| deserialize_list(version, &payload));
        assert_eq!(decoded.unwrap().len(), 1000);
        println!(
            "{version}: 1000 empty messages, {} bytes: peak heap {peak} bytes ({:.2}x)",
            payload.len(),
            peak as f64 / payload.len() as f64
        );
        assert!(peak <= heap_bound(payload.len()), "{version}: {peak} bytes");
    }
}
