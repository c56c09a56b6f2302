//! Native compaction through the C API (`paimon_wire::compaction`): a plan is a list of tasks
//! as bytes (each sent to a worker as a payload is), a worker runs one task into a payload,
//! and the coordinator commits the payloads with verified compaction
//! (`paimon_wire_table_commit_new_with_flags` and `PAIMON_WIRE_BINDING_VERIFY_COMPACTION`).

use paimon_wire_core::compaction::{plan_compaction, CompactionError, CompactionTask};
use paimon_wire_core::{serialize_list, SerializerVersion};

use crate::args::slice;
use crate::error::{paimon_code, paimon_wire_error, paimon_wire_error_code, FfiError};
use crate::handle;
use crate::messages::{paimon_wire_bytes, paimon_wire_result_bytes};
use crate::result::{function_name, guard};
use crate::split::{paimon_wire_payloads, paimon_wire_result_payloads};
use crate::table::paimon_wire_table;

impl From<CompactionError> for FfiError {
    fn from(e: CompactionError) -> Self {
        let code = match &e {
            CompactionError::Unsupported { .. } => paimon_wire_error_code::Unsupported,
            CompactionError::BadTask { .. } => paimon_wire_error_code::InvalidArgument,
            CompactionError::Paimon { source, .. } => paimon_code(source),
            _ => paimon_wire_error_code::Paimon,
        };
        FfiError::new(code, e.to_string())
    }
}

/// Plans the compaction of `table`'s latest snapshot: one task per partition and bucket to
/// compact, each as bytes to send to a worker (free the list with `paimon_wire_payloads_free`);
/// none when nothing needs compacting. Append tables: a bucket's files below
/// `target-file-size` (and those with a deletion vector) once there are
/// `compaction.min.file-num` (default 5) of them; primary-key tables (every merge engine,
/// `sequence.field`, deletion vectors): every sorted run once there are
/// `num-sorted-run.compaction-trigger` (default 5), merged into one at the highest level.
/// `full` compacts every bucket not already compacted. Errors:
/// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` naming why a table cannot be compacted, the storage
/// codes.
///
/// # Safety
/// `table` is NULL or a handle from this library.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_table_plan_compaction(
    table: *const paimon_wire_table,
    full: bool,
) -> paimon_wire_result_payloads {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let table = unsafe { handle::borrow(table, "table")? };
        let plan = table
            .runtime
            .block_on(plan_compaction(&table.table, full))?;
        Ok(paimon_wire_payloads::from_vecs(
            plan.tasks().iter().map(CompactionTask::to_bytes).collect(),
        ))
    })
}

/// The snapshot a task (`task_len` bytes at `task`, from `paimon_wire_table_plan_compaction`)
/// was planned from, written to `*snapshot_id`: commit the compaction under it as the
/// identifier. Errors: `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for bytes that are not a
/// task, `PAIMON_WIRE_ERROR_CODE_NULL_POINTER`.
///
/// # Safety
/// `task` points to `task_len` readable bytes; `snapshot_id` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_compaction_task_snapshot_id(
    task: *const u8,
    task_len: usize,
    snapshot_id: *mut i64,
) -> *mut paimon_wire_error {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let bytes = unsafe { slice(task, task_len, "task")? };
        if snapshot_id.is_null() {
            return Err(FfiError::null("snapshot_id"));
        }
        let task = CompactionTask::from_bytes(bytes)?;
        // SAFETY: checked not NULL above; the caller gives a writable i64.
        unsafe { *snapshot_id = task.snapshot_id() };
        Ok(())
    })
}

/// Runs one task (`task_len` bytes at `task`) on `table`: rewrites its files and returns the
/// payload of the compaction's commit message at serializer `version` (free with
/// `paimon_wire_bytes_free`). The new files are written, not committed: hand the payload to
/// the coordinator, whose table commit must take verified compactions. Errors:
/// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` (not a task), `UNSUPPORTED_VERSION`,
/// `UNSUPPORTED`, the storage codes.
///
/// # Safety
/// `table` is NULL or a handle from this library; `task` points to `task_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn paimon_wire_compaction_task_run(
    table: *const paimon_wire_table,
    task: *const u8,
    task_len: usize,
    version: i32,
) -> paimon_wire_result_bytes {
    guard(function_name!(), || {
        // SAFETY: forwarded from the caller.
        let (table, bytes) = unsafe {
            (
                handle::borrow(table, "table")?,
                slice(task, task_len, "task")?,
            )
        };
        let version = SerializerVersion::try_from(version)?;
        let task = CompactionTask::from_bytes(bytes)?;
        let message = table.runtime.block_on(task.run(&table.table))?;
        Ok(paimon_wire_bytes::from_vec(serialize_list(
            &[message],
            version,
        )?))
    })
}
