//! The C entry points, called in-process through their `extern "C"` functions (the FFI crate's
//! sources, see fuzz/ffi-rlib): `[table selector] [version selector] ++ payload`, where a
//! payload starting with `PWIR` goes through `paimon_wire_envelope_unwrap` first and takes the
//! envelope's version.
//!
//! Every handle, result and error the calls return is freed, so LeakSanitizer (on at the end of
//! every libFuzzer run) reports any leak on an error path; the error text must be a valid C
//! string.
#![no_main]

use std::ffi::{c_char, CStr, CString};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use paimon_wire::envelope::is_envelope;
use paimon_wire_ffi::commit::{
    paimon_wire_table_commit, paimon_wire_table_commit_merge, paimon_wire_table_commit_new,
};
use paimon_wire_ffi::envelope::{paimon_wire_envelope_unwrap, paimon_wire_envelope_wrap};
use paimon_wire_ffi::error::{paimon_wire_error, paimon_wire_error_free};
use paimon_wire_ffi::messages::{
    paimon_wire_bytes_free, paimon_wire_commit_messages, paimon_wire_commit_messages_deserialize,
    paimon_wire_commit_messages_free, paimon_wire_commit_messages_serialize_version,
    paimon_wire_commit_messages_summarize,
};
use paimon_wire_ffi::table::{paimon_wire_table_free, paimon_wire_table_open};
use paimon_wire_fuzz::{
    split_coordinator_input, write_coordinator_seeds_if_asked, FuzzTable, FuzzWarehouse,
    COMMIT_USER,
};

/// Table commits for every fuzz table, opened through the C API once per process.
/// Never freed: it lives as long as the process (LeakSanitizer sees it as still reachable).
struct Fixture {
    _warehouse: FuzzWarehouse,
    commits: Vec<(FuzzTable, CommitPtr)>,
}

/// A table commit handle; the C API documents it as read-only and shareable across threads.
struct CommitPtr(*mut paimon_wire_table_commit);
// SAFETY: `paimon_wire_table_commit` is read-only after creation and documented as safe to pass to
// several threads at once; libFuzzer calls the target from one thread anyway.
unsafe impl Send for CommitPtr {}
// SAFETY: as above.
unsafe impl Sync for CommitPtr {}

/// Reads and frees `error`, checking its message is a C string. Returns whether it was set.
///
/// # Safety
/// `error` is NULL or an error from the library, not freed yet.
unsafe fn consume_error(error: *mut paimon_wire_error) -> bool {
    if error.is_null() {
        return false;
    }
    // SAFETY: a non-NULL error from the library holds a NUL-terminated message.
    unsafe {
        assert!(!(*error).message.is_null(), "an error without a message");
        let _ = CStr::from_ptr((*error).message).to_bytes().len();
        paimon_wire_error_free(error);
    }
    true
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let warehouse = runtime.block_on(async {
            let warehouse = FuzzWarehouse::create().await;
            write_coordinator_seeds_if_asked(&warehouse, true).await;
            warehouse
        });
        let path = CString::new(warehouse.path()).expect("path");
        let user = CString::new(COMMIT_USER).expect("user");
        let mut commits = Vec::new();
        for table in FuzzTable::ALL {
            let name = CString::new(table.name()).expect("name");
            // SAFETY: valid C strings; no options.
            unsafe {
                let opened = paimon_wire_table_open(
                    path.as_ptr(),
                    name.as_ptr(),
                    std::ptr::null::<*const c_char>(),
                    std::ptr::null::<*const c_char>(),
                    0,
                );
                assert!(
                    !consume_error(opened.error),
                    "paimon_wire_table_open failed"
                );
                let commit = paimon_wire_table_commit_new(opened.table, user.as_ptr(), false, 0);
                assert!(
                    !consume_error(commit.error),
                    "paimon_wire_table_commit_new failed"
                );
                // The table commit keeps what it needs of the table.
                paimon_wire_table_free(opened.table);
                commits.push((table, CommitPtr(commit.commit)));
            }
        }
        Fixture {
            _warehouse: warehouse,
            commits,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let fixture = fixture();
    let Some((table, selected_version, raw)) = split_coordinator_input(data) else {
        return;
    };
    let commit = fixture
        .commits
        .iter()
        .find(|(t, _)| *t == table)
        .expect("every table has a commit")
        .1
         .0;

    // SAFETY: every pointer passed is NULL, a live handle from the library, or `len` readable
    // bytes; every returned handle, buffer and error is freed exactly once below.
    unsafe {
        let (version, payload): (i32, &[u8]) = if is_envelope(raw) {
            let unwrapped = paimon_wire_envelope_unwrap(raw.as_ptr(), raw.len());
            if consume_error(unwrapped.error) {
                return;
            }
            let e = unwrapped.envelope;
            (
                e.serializer_version,
                std::slice::from_raw_parts(e.payload, e.payload_len),
            )
        } else {
            (selected_version.as_i32(), raw)
        };

        // The envelope round trip through C.
        let framed = paimon_wire_envelope_wrap(payload.as_ptr(), payload.len(), version);
        assert!(!consume_error(framed.error), "wrapping a payload failed");
        let unwrapped = paimon_wire_envelope_unwrap(framed.bytes.data, framed.bytes.len);
        assert!(
            !consume_error(unwrapped.error),
            "unwrapping what was wrapped failed"
        );
        assert_eq!(unwrapped.envelope.serializer_version, version);
        assert_eq!(unwrapped.envelope.payload_len, payload.len());
        paimon_wire_bytes_free(framed.bytes);

        let decoded = paimon_wire_commit_messages_deserialize(
            commit,
            payload.as_ptr(),
            payload.len(),
            version,
        );
        if consume_error(decoded.error) {
            assert!(decoded.messages.is_null());
            return;
        }
        let messages = decoded.messages;
        let summary = paimon_wire_commit_messages_summarize(messages);
        assert!(!consume_error(summary.error));

        let encoded = paimon_wire_commit_messages_serialize_version(messages, version);
        if !consume_error(encoded.error) {
            paimon_wire_bytes_free(encoded.bytes);
        }

        let parts: [*const paimon_wire_commit_messages; 2] = [messages, messages];
        let merged = paimon_wire_table_commit_merge(commit, parts.as_ptr(), parts.len());
        if !consume_error(merged.error) {
            let merged_summary = paimon_wire_commit_messages_summarize(merged.messages);
            assert!(!consume_error(merged_summary.error));
            assert_eq!(
                merged_summary.summary.data_file_count, summary.summary.data_file_count,
                "merging a payload with itself changed its data files"
            );
            paimon_wire_commit_messages_free(merged.messages);
        }
        paimon_wire_commit_messages_free(messages);
    }
});
