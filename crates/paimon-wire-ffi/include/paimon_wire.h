/*
 * libpaimon_wire: distributed Apache Paimon writes for native engines.
 *
 * Generated from crates/paimon-wire-ffi by cbindgen; do not edit. Regenerate with
 *   PAIMON_WIRE_BLESS=1 cargo test -p paimon-wire-ffi --test header
 *
 * Conventions, for every function below:
 * - Ownership: a pointer or struct a function returns is owned by the caller and freed with
 *   the matching free function (paimon_wire_table_free, paimon_wire_write_builder_free,
 *   paimon_wire_table_write_free, paimon_wire_table_commit_free, paimon_wire_commit_messages_free,
 *   paimon_wire_bytes_free, paimon_wire_error_free, paimon_wire_table_options_free), exactly once. Pointer arguments are borrowed for
 *   the duration of the call unless a function says it takes ownership (only the Arrow C
 *   Data Interface structs of paimon_wire_table_write_arrow_batch).
 * - Errors: fallible functions return a paimon_wire_result_* struct whose `error` is NULL on
 *   success, or a `paimon_wire_error *` that is NULL on success. An error carries a stable
 *   paimon_wire_error_code and a message. A Rust panic never unwinds into the caller: it is
 *   caught and returned as PAIMON_WIRE_ERROR_CODE_INTERNAL.
 * - Handles: NULL, or a handle of another kind (a paimon_wire_table * cast to
 *   paimon_wire_table_commit *), is refused with PAIMON_WIRE_ERROR_CODE_NULL_POINTER /
 *   PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND. Free functions ignore NULL and handles of another
 *   kind. Any other invalid pointer (freed, dangling, foreign) is undefined behavior.
 * - Strings are NUL-terminated UTF-8.
 * - Versions: PAIMON_WIRE_VERSION_MAJOR/MINOR/PATCH are this header's library version and
 *   paimon_wire_version() the loaded library's. PAIMON_WIRE_ABI_VERSION is the ABI this header
 *   describes; the shared library is named by it (SONAME libpaimon_wire.so.<ABI>) and reports
 *   it with paimon_wire_abi_version(), so a host can check both at startup. Within one ABI
 *   version, changes only add: new functions, new enum values, new error codes at the end
 *   (handle an unknown code like PAIMON_WIRE_ERROR_CODE_INTERNAL). The structs in this header
 *   never change layout within one ABI version: a result that needs more fields comes from a
 *   new function with a new struct.
 * - Threads: handles documented as read-only may be used from several threads at once;
 *   paimon_wire_table_write is used by one thread at a time. Each opened table owns an async
 *   runtime (the library's, not the caller's), shared by every handle made from the table and
 *   shut down when the last of them is freed. By default it is a current-thread runtime:
 *   calls drive it on the calling thread, and its only threads are its blocking pool, where
 *   Paimon's file I/O runs (started on demand, idle ones exit after 10 seconds, at most 512).
 *   paimon_wire_table_options_set_runtime_threads gives it worker threads and caps the
 *   blocking pool; paimon_wire_table_options_set_thread_name_prefix names them. A runtime does
 *   not survive fork(): a process that forks workers opens its tables in each child, after
 *   the fork.
 * - Settings: paimon_wire_table_open_with_options takes them from a paimon_wire_table_options
 *   handle with one setter per setting, not from a struct the caller fills, so that a setting
 *   added later is a new function and no struct has to grow. The log hook
 *   (paimon_wire_set_log_callback) is process-wide.
 */

#ifndef PAIMON_WIRE_H
#define PAIMON_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The Arrow C Data Interface (https://arrow.apache.org/docs/format/CDataInterface.html). */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};

#endif  /* ARROW_C_DATA_INTERFACE */


// A flag of `paimon_wire_table_commit_new_with_flags`: the binding takes messages that delete
// (deleted data files, deletion-vector index files, deleted index files), as
// `paimon_wire_table_commit_new_with_deletes` does.
#define PAIMON_WIRE_BINDING_ALLOW_DELETES 1

// A flag of `paimon_wire_table_commit_new_with_flags`: the binding takes messages that carry
// compaction results, as `paimon_wire_table_commit_new_with_compaction` does.
#define PAIMON_WIRE_BINDING_ALLOW_COMPACTION 2

// A flag of `paimon_wire_table_commit_new_with_flags`: the binding takes messages that carry
// compaction results (it implies `PAIMON_WIRE_BINDING_ALLOW_COMPACTION`) and verifies each
// compaction by reading its inputs and its results: a compaction whose rows differ (append
// tables: the multiset of rows; primary-key tables: every key's winner, or with the
// `partial-update` or `aggregation` merge engine the merged rows of a whole bucket) is refused
// with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED`, rule `compact-content`. The cost is a read
// of every compacted byte, twice (inputs and results). Binding fails with
// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for tables whose compactions cannot be verified:
// postpone tables (`'bucket' = '-2'`).
#define PAIMON_WIRE_BINDING_VERIFY_COMPACTION 4

// A frame of `paimon_wire_commit_messages_serialize_framed`: the raw payload, as
// `paimon_wire_commit_messages_serialize_version` writes it (the version travels beside it).
#define PAIMON_WIRE_FRAME_RAW 0

// A frame of `paimon_wire_commit_messages_serialize_framed`: a paimon-wire envelope (`PWIR`:
// magic, versions, length, CRC32C), as `paimon_wire_envelope_wrap` writes it.
#define PAIMON_WIRE_FRAME_ENVELOPE 1

// A frame of `paimon_wire_commit_messages_serialize_framed`: Apache Doris's frame (`DPCM`:
// magic, version, length), as `paimon_wire_dpcm_frame` writes it and Doris's frontend reads
// a backend's commit messages.
#define PAIMON_WIRE_FRAME_DPCM 2

// The HASH index budget table options start with: 1 GiB, the core's
// `DEFAULT_HASH_INDEX_BUDGET` (the keys of about 89 million rows, 12 bytes a key). A
// `uint64_t`, so multiples of it do not overflow.
#define PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET (uint64_t)1073741824

// Major version of this library (the crate's version, `MAJOR.MINOR.PATCH`).
#define PAIMON_WIRE_VERSION_MAJOR 0

// Minor version of this library.
#define PAIMON_WIRE_VERSION_MINOR 1

// Patch version of this library.
#define PAIMON_WIRE_VERSION_PATCH 0

// The ABI version of this header: it changes when a change breaks programs built against an
// earlier header (a function removed or changed, a struct's layout changed, an enum value's
// meaning changed). The shared library's SONAME is `libpaimon_wire.so.<ABI version>`
// (build.rs reads this line). Adding functions, enum values or error codes keeps it.
#define PAIMON_WIRE_ABI_VERSION 1

// What kind of error a call failed with. The values are part of the ABI and never change
// meaning; new codes may be added. Code 14 is not assigned (it never was, in any version of
// this header).
typedef enum paimon_wire_error_code {
  // A pointer argument that must not be NULL was NULL.
  PAIMON_WIRE_ERROR_CODE_NULL_POINTER = 1,
  // A handle argument is of another kind (e.g. a `paimon_wire_table *` cast to
  // `paimon_wire_table_commit *`) or was not created by this library.
  PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND = 2,
  // An argument is malformed: a string that is not UTF-8, a table name that is not
  // `database.table`, a negative length, an invalid commit user, ...
  PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT = 3,
  // The serializer (or envelope) version is not one this library can read or write.
  PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION = 4,
  // The payload bytes could not be decoded (truncated, corrupt, trailing bytes, ...).
  PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD = 5,
  // The messages cannot be written at the requested version without losing data.
  PAIMON_WIRE_ERROR_CODE_UNREPRESENTABLE = 6,
  // Messages or a payload belong to another table, commit user, overwrite mode or
  // table-commit handle than the one they were handed to.
  PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES = 7,
  // A decoded message breaks a rule of the table it was bound to; nothing was committed.
  PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED = 8,
  // Two message sets disagree about the same file; nothing was committed.
  PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT = 9,
  // The Arrow C Data Interface input could not be imported, or does not match the table.
  PAIMON_WIRE_ERROR_CODE_ARROW = 10,
  // The table (or its database) does not exist.
  PAIMON_WIRE_ERROR_CODE_TABLE_NOT_FOUND = 11,
  // Reading or writing storage failed.
  PAIMON_WIRE_ERROR_CODE_IO = 12,
  // The table, mode or operation is not supported.
  PAIMON_WIRE_ERROR_CODE_UNSUPPORTED = 13,
  // Any other error reported by the Paimon table engine.
  PAIMON_WIRE_ERROR_CODE_PAIMON = 15,
  // Other committers took every snapshot this commit tried to publish, on every attempt
  // the table's `commit.max-retries` allows. Nothing was committed and the prepared files
  // are kept: commit the same messages again with the same identifier (or raise
  // `commit.max-retries`). Never abort them.
  PAIMON_WIRE_ERROR_CODE_COMMIT_CONFLICT = 16,
  // The commit identifier was never committed, but the same commit user already committed
  // a higher one (two coordinators share a commit user). Nothing was committed; give each
  // concurrent job its own commit user.
  PAIMON_WIRE_ERROR_CODE_IDENTIFIER_SUPERSEDED = 17,
  // The warehouse is a URI whose storage backend (`s3`, `oss`, `gs`, `abfs`, `cos`, `obs`,
  // `hdfs`) this build of the library does not have; the message names the cargo feature
  // to build it with. Not an I/O error: no storage was touched.
  PAIMON_WIRE_ERROR_CODE_STORAGE_BACKEND_NOT_COMPILED = 18,
  // Two payloads write new files into one bucket of a primary-key table (route each
  // (partition, bucket) to one writer; see `paimon_wire_table_bucket_ids`); nothing was
  // committed.
  PAIMON_WIRE_ERROR_CODE_SHARED_BUCKET = 19,
  // The identifier is already committed by a snapshot that does not hold this commit's
  // files: it was reused for other data. Nothing was committed; use a new identifier.
  PAIMON_WIRE_ERROR_CODE_IDENTIFIER_REUSED = 20,
  // A payload is beyond a decode limit (bytes, messages or files per payload; see
  // `paimon_wire_table_options_set_decode_limits`); the message names the limit and the
  // value found. Nothing of the payload was decoded further.
  PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED = 21,
  // The payloads given as one worker's split set are not a whole set: one is missing, an
  // index was given twice with different bytes, or the payloads name different counts (see
  // `paimon_wire_commit_messages_deserialize_parts`). Nothing was decoded or committed.
  PAIMON_WIRE_ERROR_CODE_SPLIT_SET_INCOMPLETE = 22,
  // The commit failed after a request that publishes its snapshot went unanswered (a
  // timeout, a lost answer): the snapshot may be in the table, or may still land. Keep the
  // files: call `paimon_wire_table_commit_commit` again with the same identifier (it reports
  // `PAIMON_WIRE_COMMIT_STATUS_ALREADY_COMMITTED` if the snapshot landed). Also returned by
  // `paimon_wire_table_commit_abort` while such a commit's requests may still land (it
  // deleted nothing; see `paimon_wire_table_options_set_outcome_horizon_ms`). Every other error of a commit is known to have committed nothing.
  PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN = 23,
  // A bug inside the library (a Rust panic, caught at the boundary). The handle involved
  // may be unusable; free it.
  PAIMON_WIRE_ERROR_CODE_INTERNAL = 99,
} paimon_wire_error_code;

// What `paimon_wire_table_commit_commit` did.
typedef enum paimon_wire_commit_status {
  // A new snapshot was committed; its id is in `snapshot_id`.
  PAIMON_WIRE_COMMIT_STATUS_COMMITTED = 0,
  // Nothing was committed: a snapshot of this commit user already carries this commit
  // identifier and every file of the messages (`snapshot_id` is its id), or its snapshot
  // may have expired and a later identifier of the user is committed (`snapshot_id` is
  // -1). An identifier that a later one overtook before it was ever committed is the
  // error `PAIMON_WIRE_ERROR_CODE_IDENTIFIER_SUPERSEDED`, never this status.
  PAIMON_WIRE_COMMIT_STATUS_ALREADY_COMMITTED = 1,
  // The messages hold no files: nothing was committed and `snapshot_id` is -1.
  PAIMON_WIRE_COMMIT_STATUS_NOTHING_TO_COMMIT = 2,
} paimon_wire_commit_status;

// The level of a log record, most severe first (the `log` crate's levels).
typedef enum paimon_wire_log_level {
  // Something failed.
  PAIMON_WIRE_LOG_LEVEL_ERROR = 1,
  // Something unexpected that the library worked around (e.g. a setting it ignored).
  PAIMON_WIRE_LOG_LEVEL_WARN = 2,
  // A notable event.
  PAIMON_WIRE_LOG_LEVEL_INFO = 3,
  // What the library is doing (tables opened, ...).
  PAIMON_WIRE_LOG_LEVEL_DEBUG = 4,
  // Fine detail.
  PAIMON_WIRE_LOG_LEVEL_TRACE = 5,
} paimon_wire_log_level;

// How rows of a table must be spread over writers when many workers write it.
typedef enum paimon_wire_routing_kind {
  // Fixed buckets (`bucket >= 1`): send every row of one (partition, bucket) to one
  // writer; compute the bucket with `paimon_wire_table_bucket_ids`. Required for primary-key
  // tables (the coordinator refuses two writers of one bucket).
  PAIMON_WIRE_ROUTING_KIND_FIXED_BUCKET = 1,
  // Any writer may write any row: append tables with `bucket = -1`, and postpone tables
  // (`bucket = -2`, the way to write one primary-key bucket from many writers).
  PAIMON_WIRE_ROUTING_KIND_ANY_WRITER = 2,
  // Primary-key table with dynamic buckets (`bucket = -1`): buckets come from the table's
  // hash index and are assigned by the writer, so independent writers put one key in two
  // buckets. Write it from one writer, or, when the primary key includes every partition
  // key, from N writers that are assigners 0..N-1: route rows with
  // `paimon_wire_table_assigner_ids` and make each writer's builder with
  // `paimon_wire_write_builder_new_assigner`.
  PAIMON_WIRE_ROUTING_KIND_SINGLE_WRITER = 3,
} paimon_wire_routing_kind;

// Which writer produced the messages. Only matters for postpone tables (`'bucket' = '-2'`).
typedef enum paimon_wire_write_kind {
  // The table's own bucket layout. On a postpone table, data lands in the postpone bucket
  // (`bucket-postpone`, bucket -2) and Paimon's compaction assigns real buckets later.
  PAIMON_WIRE_WRITE_KIND_STANDARD = 0,
  // A postpone table written directly into fixed buckets `0..n-1` (every message carries
  // `total_buckets = n`). Needs the table option `postpone.default-bucket-num`.
  PAIMON_WIRE_WRITE_KIND_POSTPONE_FIXED_BUCKET = 1,
} paimon_wire_write_kind;

// A list of commit messages: either prepared by a worker's `paimon_wire_table_write_prepare_commit`
// (unbound: they can only be serialized), or decoded by `paimon_wire_commit_messages_deserialize`
// / combined by `paimon_wire_table_commit_merge` (bound to that table commit: only it can merge,
// commit or abort them). Freed by `paimon_wire_commit_messages_free`. Read-only: it may be passed
// to several threads at once.
typedef struct paimon_wire_commit_messages paimon_wire_commit_messages;

// A Paimon table opened from a warehouse. Created by `paimon_wire_table_open`, freed by
// `paimon_wire_table_free`. Handles made from it (write builders, writes, table commits) keep what
// they need alive, so it may be freed before them. Read-only after creation: it may be
// passed to several threads at once.
typedef struct paimon_wire_table paimon_wire_table;

// The coordinator of one logical commit: a table, a commit user, append or overwrite, and a
// write kind. Created by `paimon_wire_table_commit_new`, freed by `paimon_wire_table_commit_free`.
// Read-only after creation: it may be passed to several threads at once.
typedef struct paimon_wire_table_commit paimon_wire_table_commit;

// Settings for `paimon_wire_table_open_with_options`: decode limits, the HASH index budget,
// table-option overrides, the runtime's threads and Arrow validation. Created by
// `paimon_wire_table_options_new` with every setting at its default, changed by the
// `paimon_wire_table_options_set_*` functions, freed by `paimon_wire_table_options_free`. The
// table copies the settings when it is opened, so the options may be freed (or reused for
// another table) right after. Not thread-safe while it is being changed.
typedef struct paimon_wire_table_options paimon_wire_table_options;

// A writer of data files for one worker. Created by `paimon_wire_write_builder_new_write`, freed
// by `paimon_wire_table_write_free`. Not thread-safe: use it from one thread at a time.
typedef struct paimon_wire_table_write paimon_wire_table_write;

// Settings shared by every write of one logical commit: the table, the commit user and the
// overwrite flag. Created by `paimon_wire_write_builder_new`, freed by `paimon_wire_write_builder_free`.
// Read-only after creation: it may be passed to several threads at once.
typedef struct paimon_wire_write_builder paimon_wire_write_builder;

// An error returned by a fallible call. NULL means success.
//
// Owned by the caller: free it with `paimon_wire_error_free`. `message` is a NUL-terminated UTF-8
// string owned by the error and freed with it.
typedef struct paimon_wire_error {
  // What kind of error this is.
  enum paimon_wire_error_code code;
  // A human-readable description naming the argument, field or rule at fault.
  char *message;
} paimon_wire_error;

// Result of `paimon_wire_table_commit_new`: exactly one of `commit` and `error` is non-NULL.
typedef struct paimon_wire_result_table_commit {
  // The table commit, owned by the caller (free with `paimon_wire_table_commit_free`).
  struct paimon_wire_table_commit *commit;
  // The error (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_table_commit;

// Result of a call returning commit messages: exactly one of `messages` and `error` is
// non-NULL.
typedef struct paimon_wire_result_commit_messages {
  // The messages, owned by the caller (free with `paimon_wire_commit_messages_free`).
  struct paimon_wire_commit_messages *messages;
  // The error (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_commit_messages;

// The outcome of a successful commit call.
typedef struct paimon_wire_commit_outcome {
  // What happened.
  enum paimon_wire_commit_status status;
  // The snapshot committed (or found), or -1.
  int64_t snapshot_id;
} paimon_wire_commit_outcome;

// Result of `paimon_wire_table_commit_commit`: `outcome` is meaningful only when `error` is NULL.
typedef struct paimon_wire_result_commit {
  // What the commit did.
  struct paimon_wire_commit_outcome outcome;
  // The error (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_commit;

// Bytes owned by the caller: `len` bytes at `data`. Free with `paimon_wire_bytes_free` (exactly
// once, passing the struct unchanged). An empty value may have a NULL or dangling `data`.
typedef struct paimon_wire_bytes {
  // The first byte; NULL when the bytes came from a failed call.
  uint8_t *data;
  // Number of bytes.
  size_t len;
} paimon_wire_bytes;

// Payloads owned by the caller: `count` byte strings at `items`, payload `i` being
// `items[i].data[0 .. items[i].len]`. Free all of them at once with `paimon_wire_payloads_free`
// (exactly once, passing the struct unchanged); never free one item on its own.
typedef struct paimon_wire_payloads {
  // The payloads; NULL when they came from a failed call.
  struct paimon_wire_bytes *items;
  // Number of payloads.
  size_t count;
} paimon_wire_payloads;

// Result of `paimon_wire_commit_messages_serialize_split`: on success `error` is NULL and
// `payloads` is owned by the caller; on failure `payloads` is `{NULL, 0}`.
typedef struct paimon_wire_result_payloads {
  // The payloads (free with `paimon_wire_payloads_free`).
  struct paimon_wire_payloads payloads;
  // The error (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_payloads;

// Result of a call returning bytes: on success `error` is NULL and `bytes` is owned by the
// caller; on failure `bytes` is `{NULL, 0}` and `error` is owned by the caller.
typedef struct paimon_wire_result_bytes {
  // The bytes (free with `paimon_wire_bytes_free`).
  struct paimon_wire_bytes bytes;
  // The error (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_bytes;

// The contents of an envelope or a `DPCM` frame, as found by `paimon_wire_envelope_unwrap`
// or `paimon_wire_dpcm_unframe`.
typedef struct paimon_wire_envelope {
  // The serializer version of the payload: pass it to `paimon_wire_commit_messages_deserialize`.
  int32_t serializer_version;
  // The raw payload: a pointer into the bytes given to `paimon_wire_envelope_unwrap` or
  // `paimon_wire_dpcm_unframe` (borrowed, valid as long as they are; never freed on its own).
  const uint8_t *payload;
  // Length of the payload in bytes.
  size_t payload_len;
} paimon_wire_envelope;

// Result of `paimon_wire_envelope_unwrap` and `paimon_wire_dpcm_unframe`: `envelope` is
// meaningful only when `error` is NULL.
typedef struct paimon_wire_result_envelope {
  // What the envelope holds.
  struct paimon_wire_envelope envelope;
  // The error (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_envelope;

// A log callback: `user_data` as registered, the record's level, its target (the Rust module
// that logged it, e.g. `paimon::io::user_agent` or `paimon_wire`) and its message, both
// NUL-terminated UTF-8 strings valid only during the call.
typedef void (*paimon_wire_log_callback)(void *user_data,
                                         enum paimon_wire_log_level level,
                                         const char *target,
                                         const char *message);

// One worker's payload handed to `paimon_wire_commit_messages_deserialize_all`: its bytes and
// the serializer version it was written at.
typedef struct paimon_wire_payload {
  // The payload's first byte (may be NULL when `len` is 0).
  const uint8_t *data;
  // Number of bytes.
  size_t len;
  // The serializer version it was written at (as `paimon_wire_commit_messages_deserialize`
  // takes it).
  int32_t version;
} paimon_wire_payload;

// Counts describing a message list, from `paimon_wire_commit_messages_summarize`.
typedef struct paimon_wire_commit_messages_summary {
  // Number of messages (one per partition and bucket written).
  size_t message_count;
  // Number of new data files.
  size_t data_file_count;
  // Sum of the row counts of the new data files, as the writers reported them.
  int64_t row_count;
} paimon_wire_commit_messages_summary;

// Result of `paimon_wire_commit_messages_summarize`; `summary` is zero on error.
typedef struct paimon_wire_result_commit_messages_summary {
  // The counts.
  struct paimon_wire_commit_messages_summary summary;
  // The error (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_commit_messages_summary;

// Routing of a table: its kind and, for `PAIMON_WIRE_ROUTING_KIND_FIXED_BUCKET`, the bucket count.
typedef struct paimon_wire_routing {
  // How rows must be spread over writers.
  enum paimon_wire_routing_kind kind;
  // The table's bucket count for a fixed-bucket table, else 0.
  int32_t buckets;
} paimon_wire_routing;

// One payload of a split set as the coordinator received it: its bytes (borrowed for the
// call), its index in the set and the set's count, which the engine sends beside the bytes.
typedef struct paimon_wire_payload_part {
  // The payload's first byte (may be NULL when `len` is 0).
  const uint8_t *data;
  // Number of bytes.
  size_t len;
  // The payload's index in its set, from 0.
  uint32_t index;
  // How many payloads the set has.
  uint32_t count;
} paimon_wire_payload_part;

// Result of `paimon_wire_table_open` and `paimon_wire_table_create`: exactly one of `table` and `error` is non-NULL.
typedef struct paimon_wire_result_table {
  // The opened table, owned by the caller (free with `paimon_wire_table_free`); NULL on error.
  struct paimon_wire_table *table;
  // The error, owned by the caller (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_table;

// Result of `paimon_wire_write_builder_new`: exactly one of `builder` and `error` is non-NULL.
typedef struct paimon_wire_result_write_builder {
  // The builder, owned by the caller (free with `paimon_wire_write_builder_free`); NULL on error.
  struct paimon_wire_write_builder *builder;
  // The error, owned by the caller (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_write_builder;

// Result of `paimon_wire_write_builder_new_write`: exactly one of `write` and `error` is non-NULL.
typedef struct paimon_wire_result_table_write {
  // The writer, owned by the caller (free with `paimon_wire_table_write_free`); NULL on error.
  struct paimon_wire_table_write *write;
  // The error, owned by the caller (free with `paimon_wire_error_free`); NULL on success.
  struct paimon_wire_error *error;
} paimon_wire_result_table_write;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// Creates the coordinator of one logical commit on `table`.
//
// `commit_user` (NUL-terminated UTF-8, copied) is the one the workers' write builders were
// created with. `overwrite` selects `INSERT OVERWRITE` (replace the partitions the messages
// touch; the whole table if unpartitioned) instead of append. `write_kind` says which
// writer produced the messages (a `paimon_wire_write_kind` value): a postpone table refuses messages of
// the other kind by name. Payloads are then decoded with `paimon_wire_commit_messages_deserialize`,
// combined with `paimon_wire_table_commit_merge` and committed once with
// `paimon_wire_table_commit_commit`.
//
// The table commit takes new files only. Messages that delete (see
// `paimon_wire_table_commit_new_with_deletes`) are refused with
// `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `change-kind`), and so are messages carrying
// compaction results (`compact_before`, `compact_after`, compact changelog or index files;
// rule `compact-increment`): a compaction replaces rows with rows the coordinator cannot read,
// so a payload alone must not be able to rewrite the table's files. A job whose writers
// compact (Java writers with `write-only = false`, Java's default) creates its table commit
// with `paimon_wire_table_commit_new_with_compaction` (or `paimon_wire_table_commit_new_with_flags`).
//
// Errors: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND` for
// the arguments, `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for a commit user that is empty or not
// a safe file-name segment (as `paimon_wire_write_builder_new`) or an unknown `write_kind`,
// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for tables or bindings the coordinator cannot commit
// (format tables, a fixed-bucket kind on a table that is not a postpone table), and
// `PAIMON_WIRE_ERROR_CODE_IO` / `PAIMON_WIRE_ERROR_CODE_PAIMON` when the table's state cannot be
// read.
//
// # Safety
// `table` is NULL or a handle from this library; `commit_user` is NULL or a NUL-terminated
// string.
struct paimon_wire_result_table_commit paimon_wire_table_commit_new(const struct paimon_wire_table *table,
                                                                    const char *commit_user,
                                                                    bool overwrite,
                                                                    int32_t write_kind);

// `paimon_wire_table_commit_new` for a job that deletes: its messages may name deleted data
// files, carry deletion-vector index files and delete index files (a primary-key table's
// deletion-vector maintenance, row-level deletes). `paimon_wire_table_commit_new` refuses such
// messages with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `change-kind`), so a payload
// alone cannot turn an append job into one that removes rows. Compaction results are still
// refused (rule `compact-increment`); a job that both deletes and compacts uses
// `paimon_wire_table_commit_new_with_flags` with
// `PAIMON_WIRE_BINDING_ALLOW_DELETES | PAIMON_WIRE_BINDING_ALLOW_COMPACTION`.
//
// Ownership and errors as `paimon_wire_table_commit_new`.
//
// # Safety
// As `paimon_wire_table_commit_new`.
struct paimon_wire_result_table_commit paimon_wire_table_commit_new_with_deletes(const struct paimon_wire_table *table,
                                                                                 const char *commit_user,
                                                                                 bool overwrite,
                                                                                 int32_t write_kind);

// `paimon_wire_table_commit_new` for a job whose writers compact (Java writers with
// `write-only = false`): its messages may carry compaction results (`compact_before`,
// `compact_after`, compact changelog and index files), committed as Java's committer does: an
// APPEND snapshot of the new files, then a COMPACT snapshot, under one identifier. The
// compaction rules still refuse, with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED`, what the
// metadata shows to be wrong (inputs that are not live files, rows appearing or vanishing on
// an append table, key or sequence ranges outside the inputs'), and an overwrite commit
// refuses compaction results. Messages that delete are refused as by
// `paimon_wire_table_commit_new` (rule `change-kind`).
//
// Ownership and errors as `paimon_wire_table_commit_new`.
//
// # Safety
// As `paimon_wire_table_commit_new`.
struct paimon_wire_result_table_commit paimon_wire_table_commit_new_with_compaction(const struct paimon_wire_table *table,
                                                                                    const char *commit_user,
                                                                                    bool overwrite,
                                                                                    int32_t write_kind);

// `paimon_wire_table_commit_new` with the binding's permissions given as `flags`, a bitwise OR
// of `PAIMON_WIRE_BINDING_ALLOW_DELETES` (as `paimon_wire_table_commit_new_with_deletes`),
// `PAIMON_WIRE_BINDING_ALLOW_COMPACTION` (as `paimon_wire_table_commit_new_with_compaction`)
// and `PAIMON_WIRE_BINDING_VERIFY_COMPACTION`; 0 is `paimon_wire_table_commit_new`. Flags
// added later are new bits.
//
// `PAIMON_WIRE_BINDING_VERIFY_COMPACTION` implies `PAIMON_WIRE_BINDING_ALLOW_COMPACTION` and
// has the coordinator read each compaction's inputs and results, refusing one whose rows
// differ with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `compact-content`), where the
// metadata rules alone cannot tell. It reads every compacted byte twice (inputs and results),
// and binding fails with `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for tables whose compactions
// cannot be verified (postpone tables, `'bucket' = '-2'`).
//
// Ownership and errors as `paimon_wire_table_commit_new`, and
// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` when `flags` has a bit this library does not know
// (the message names the bits).
//
// # Safety
// As `paimon_wire_table_commit_new`.
struct paimon_wire_result_table_commit paimon_wire_table_commit_new_with_flags(const struct paimon_wire_table *table,
                                                                               const char *commit_user,
                                                                               bool overwrite,
                                                                               int32_t write_kind,
                                                                               uint32_t flags);

// Kept for programs built against earlier headers: compaction results are now refused by
// default, so this is the same as `paimon_wire_table_commit_new` (messages carrying
// compaction results are refused with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED`, rule
// `compact-increment`). New code calls `paimon_wire_table_commit_new`.
//
// # Safety
// As `paimon_wire_table_commit_new`.
struct paimon_wire_result_table_commit paimon_wire_table_commit_new_refusing_compaction(const struct paimon_wire_table *table,
                                                                                        const char *commit_user,
                                                                                        bool overwrite,
                                                                                        int32_t write_kind);

// Merges `count` message sets (`parts[0..count]`, each from
// `paimon_wire_commit_messages_deserialize` or an earlier merge on this same `commit`) into one new
// set owned by the caller. The parts are only read; free them as usual.
//
// A file that appears more than once with identical metadata (a worker retry) is kept once;
// the same file name with different metadata is a `PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT`. Parts
// bound to another table commit, or prepared by a writer and never deserialized, are refused
// with `PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES`.
//
// Errors: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`
// for the arguments, `PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT`,
// `PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES`, `PAIMON_WIRE_ERROR_CODE_SHARED_BUCKET` (two parts
// write new files into one bucket of a primary-key table), and
// `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `total-buckets`: parts disagree on a
// partition's total buckets).
//
// # Safety
// `commit` is NULL or a handle from this library; `parts` as in `message_parts`.
struct paimon_wire_result_commit_messages paimon_wire_table_commit_merge(const struct paimon_wire_table_commit *commit,
                                                                         const struct paimon_wire_commit_messages *const *parts,
                                                                         size_t count);

// Commits `messages` once under `commit_identifier`.
//
// Identifiers must increase for one commit user. If a snapshot of this commit user already
// carries `commit_identifier` (a coordinator rerun after a crash), nothing is committed and
// the outcome is `PAIMON_WIRE_COMMIT_STATUS_ALREADY_COMMITTED`; so a coordinator that does not know
// whether its commit landed simply calls this again with the same identifier. `messages` is
// only read (free it as usual) and must be bound to `commit`
// (`PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES` otherwise).
//
// `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN`: a request that publishes the snapshot went
// unanswered, so the snapshot may be in the table or may still land; keep the files and call
// this again with the same identifier.
//
// Other errors (nothing committed after any of them): `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` /
// `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND` for the arguments,
// `PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES`, `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (the
// rules checked against the table's current state: files already live or not live,
// compaction, sequence bounds; rule `bounds` also for HASH index checks over the budget of
// `paimon_wire_table_options_set_hash_index_budget`),
// `PAIMON_WIRE_ERROR_CODE_COMMIT_CONFLICT` (commit again with the same identifier),
// `PAIMON_WIRE_ERROR_CODE_IDENTIFIER_SUPERSEDED`,
// `PAIMON_WIRE_ERROR_CODE_IDENTIFIER_REUSED`, `PAIMON_WIRE_ERROR_CODE_IO` and
// `PAIMON_WIRE_ERROR_CODE_PAIMON` (storage and the table engine, before anything was
// published).
//
// # Safety
// `commit` and `messages` are NULL or handles from this library.
struct paimon_wire_result_commit paimon_wire_table_commit_commit(const struct paimon_wire_table_commit *commit,
                                                                 const struct paimon_wire_commit_messages *messages,
                                                                 int64_t commit_identifier);

// Deletes the data files `messages` prepared, for a write that is abandoned and will never be
// committed (best effort: files already gone are ignored). Deletes only files no snapshot of
// the table references; files a snapshot lists (a payload that was committed after all) and
// the files a message deletes are left alone. `messages` must be bound to `commit`.
//
// After a commit of `commit` failed with `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN`, deletes
// nothing and returns `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN` until the outcome horizon has
// passed (`paimon_wire_table_options_set_outcome_horizon_ms`; 5 minutes on object stores and
// REST catalogs, none on local file systems), since a request of that commit may still
// publish a snapshot of these files; past it, reads the identifier's status first. Calling
// `paimon_wire_table_commit_commit` again with the same identifier settles it at once.
//
// Returns NULL on success, or an error: `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN` (above),
// `PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES` when `messages` are bound to another table commit
// (or were prepared by a writer and never deserialized), `PAIMON_WIRE_ERROR_CODE_IO` /
// `PAIMON_WIRE_ERROR_CODE_PAIMON` when the table's snapshots cannot be read (nothing is
// deleted then).
//
// # Safety
// `commit` and `messages` are NULL or handles from this library.
struct paimon_wire_error *paimon_wire_table_commit_abort(const struct paimon_wire_table_commit *commit,
                                                         const struct paimon_wire_commit_messages *messages);

// `paimon_wire_table_commit_abort` without waiting for unknown outcomes: for an engine that
// knows from elsewhere that no request of its failed commit can still land (its own
// reconciliation of the table). Files that snapshots reference when it reads the table are
// still kept, but a snapshot published after that read loses its files. Same errors, except
// that it never returns `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN`.
//
// # Safety
// `commit` and `messages` are NULL or handles from this library.
struct paimon_wire_error *paimon_wire_table_commit_abort_despite_unknown_outcome(const struct paimon_wire_table_commit *commit,
                                                                                 const struct paimon_wire_commit_messages *messages);

// Frees a table commit. NULL is a no-op; a handle of another kind is left untouched.
// Messages bound to it stay valid to free, but no other table commit accepts them.
//
// # Safety
// `commit` is NULL or a handle from this library, not used again after this call.
void paimon_wire_table_commit_free(struct paimon_wire_table_commit *commit);

// Plans the compaction of `table`'s latest snapshot: one task per partition and bucket to
// compact, each as bytes to send to a worker (free the list with `paimon_wire_payloads_free`);
// none when nothing needs compacting. Append tables: a bucket's files below
// `target-file-size` (and those with a deletion vector) once there are
// `compaction.min.file-num` (default 5) of them; primary-key tables (every merge engine,
// `sequence.field`, deletion vectors): every sorted run once there are
// `num-sorted-run.compaction-trigger` (default 5), merged into one at the highest level.
// `full` compacts every bucket not already compacted. Errors:
// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` naming why a table cannot be compacted, the storage
// codes.
//
// # Safety
// `table` is NULL or a handle from this library.
struct paimon_wire_result_payloads paimon_wire_table_plan_compaction(const struct paimon_wire_table *table,
                                                                     bool full);

// The snapshot a task (`task_len` bytes at `task`, from `paimon_wire_table_plan_compaction`)
// was planned from, written to `*snapshot_id`: commit the compaction under it as the
// identifier. Errors: `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for bytes that are not a
// task, `PAIMON_WIRE_ERROR_CODE_NULL_POINTER`.
//
// # Safety
// `task` points to `task_len` readable bytes; `snapshot_id` is NULL or writable.
struct paimon_wire_error *paimon_wire_compaction_task_snapshot_id(const uint8_t *task,
                                                                  size_t task_len,
                                                                  int64_t *snapshot_id);

// Runs one task (`task_len` bytes at `task`) on `table`: rewrites its files and returns the
// payload of the compaction's commit message at serializer `version` (free with
// `paimon_wire_bytes_free`). The new files are written, not committed: hand the payload to
// the coordinator, whose table commit must take verified compactions. Errors:
// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` (not a task), `UNSUPPORTED_VERSION`,
// `UNSUPPORTED`, the storage codes.
//
// # Safety
// `table` is NULL or a handle from this library; `task` points to `task_len` readable bytes.
struct paimon_wire_result_bytes paimon_wire_compaction_task_run(const struct paimon_wire_table *table,
                                                                const uint8_t *task,
                                                                size_t task_len,
                                                                int32_t version);

// Frames a raw payload (`payload_len` bytes at `payload`, written at serializer `version`) in
// an envelope, returned as new bytes owned by the caller (free with `paimon_wire_bytes_free`).
// The input is borrowed for the call only. Fails with `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`
// for a version outside 1 to the current one.
//
// # Safety
// `payload` is NULL (only when `payload_len` is 0) or points to `payload_len` readable bytes.
struct paimon_wire_result_bytes paimon_wire_envelope_wrap(const uint8_t *payload,
                                                          size_t payload_len,
                                                          int32_t version);

// Checks an envelope (`data_len` bytes at `data`: magic, format version, length, CRC32C) and
// says where its payload is and which serializer version wrote it. Nothing is copied: the
// payload pointer points into `data`. Errors: `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD` (not an
// envelope, truncated, corrupted; the message names the offset),
// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`.
//
// # Safety
// `data` is NULL (only when `data_len` is 0) or points to `data_len` readable bytes.
struct paimon_wire_result_envelope paimon_wire_envelope_unwrap(const uint8_t *data,
                                                               size_t data_len);

// Frames a raw payload (`payload_len` bytes at `payload`, written at serializer `version`) as
// Apache Doris's frontend reads a backend's commit messages: the magic `DPCM`, the version
// and the payload's length as big-endian 32-bit integers, then the payload. Returned as new
// bytes owned by the caller (free with `paimon_wire_bytes_free`); the input is borrowed for
// the call only. A coordinator's `paimon_wire_commit_messages_deserialize` and
// `paimon_wire_commit_messages_deserialize_parts` take the frame as it is. Errors:
// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION` for a version outside 1 to the current one,
// `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED` for a payload of 2 GiB or more (split it).
//
// # Safety
// `payload` is NULL (only when `payload_len` is 0) or points to `payload_len` readable bytes.
struct paimon_wire_result_bytes paimon_wire_dpcm_frame(const uint8_t *payload,
                                                       size_t payload_len,
                                                       int32_t version);

// Checks a `DPCM` frame (`data_len` bytes at `data`) and says where its payload is and which
// serializer version wrote it, as `paimon_wire_envelope_unwrap` does for an envelope (the
// result's payload points into `data`; nothing is copied). Errors:
// `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD` (not a frame, truncated, bytes after the body,
// a negative length; the message names the offset),
// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`.
//
// # Safety
// `data` is NULL (only when `data_len` is 0) or points to `data_len` readable bytes.
struct paimon_wire_result_envelope paimon_wire_dpcm_unframe(const uint8_t *data, size_t data_len);

// Frees an error returned by any function of this library. NULL is a no-op.
//
// # Safety
// `error` is NULL or an error returned by this library that was not freed yet.
void paimon_wire_error_free(struct paimon_wire_error *error);

// Registers `callback` to receive the library's log records of `max_level` and more severe
// (a `paimon_wire_log_level`, or 0 for none), with `user_data` passed back on every call.
// This is process-wide: it replaces the callback registered before, and NULL (or `max_level`
// 0) turns logging off, the default. Records come from every table and thread. DEBUG and
// TRACE records come only from the paimon crate and this library (targets `paimon::...` and
// `paimon_wire`): the other crates underneath (object-store clients, request signers, TLS)
// log credentials at those levels; their INFO, WARN and ERROR records are forwarded.
//
// The callback may be called from any thread, also from threads of a table's runtime, and
// from several threads at once: it must be thread-safe, must return (not `longjmp` out), and
// must not throw. It may call this library (also this function). After this function
// returns, calls already under way on other threads may still finish with the previous
// callback; keep its `user_data` alive until they have. Returns NULL on success, or
// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for a `max_level` outside 0 to 5.
//
// # Safety
// `callback` is NULL or a function of the `paimon_wire_log_callback` signature, callable
// until it is replaced; `user_data` is passed to it as it is.
struct paimon_wire_error *paimon_wire_set_log_callback(paimon_wire_log_callback callback,
                                                       void *user_data,
                                                       int32_t max_level);

// The serializer version `paimon_wire_commit_messages_serialize` writes: the newest version of
// Paimon Java's `CommitMessageSerializer` this library knows. Send it beside the bytes.
int32_t paimon_wire_commit_messages_serializer_version(void);

// Serializes `messages` at the current serializer version
// (`paimon_wire_commit_messages_serializer_version()`), as Java's
// `CommitMessageSerializer.serializeList` does. The bytes carry no version: send it with them.
//
// # Safety
// `messages` is NULL or a handle from this library.
struct paimon_wire_result_bytes paimon_wire_commit_messages_serialize(const struct paimon_wire_commit_messages *messages);

// Serializes `messages` at `version` (1 to the current version; only versions some Paimon
// release writes), e.g. 3 for a Paimon 0.9 coordinator. Fails with
// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION` for other versions, and with
// `PAIMON_WIRE_ERROR_CODE_UNREPRESENTABLE` naming the field when a message holds something
// `version` cannot carry.
//
// # Safety
// `messages` is NULL or a handle from this library.
struct paimon_wire_result_bytes paimon_wire_commit_messages_serialize_version(const struct paimon_wire_commit_messages *messages,
                                                                              int32_t version);

// Serializes `messages` at `version` as `paimon_wire_commit_messages_serialize_version` does,
// in the frame `frame` (`PAIMON_WIRE_FRAME_RAW`, `PAIMON_WIRE_FRAME_ENVELOPE` or
// `PAIMON_WIRE_FRAME_DPCM`), in one call. Errors: those of
// `paimon_wire_commit_messages_serialize_version`, `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`
// for another `frame`, `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED` for a payload of 2 GiB or more
// in a `DPCM` frame (split it: `paimon_wire_commit_messages_serialize_split`).
//
// # Safety
// `messages` is NULL or a handle from this library.
struct paimon_wire_result_bytes paimon_wire_commit_messages_serialize_framed(const struct paimon_wire_commit_messages *messages,
                                                                             int32_t version,
                                                                             uint32_t frame);

// Decodes a payload written at `version` by `paimon_wire_commit_messages_serialize` (or by Java's
// `CommitMessageSerializer.serializeList`) on the coordinator side, validates every message
// against the table of `commit`, and binds the result to `commit`.
//
// The table, commit user and overwrite mode come from `commit`, never from the payload. The
// bytes (`data_len` bytes at `data`; `data` may be NULL when `data_len` is 0) are borrowed for
// the call only. Errors: `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`,
// `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD` (with the field and byte offset),
// `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED` (a payload beyond the table's decode limits, see
// `paimon_wire_table_options_set_decode_limits`; the message names the limit),
// `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (with the message, field and rule; e.g. a payload
// written for another table), `PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT`.
//
// The payload may come in Apache Doris's `DPCM` frame (`paimon_wire_dpcm_frame`), told by its
// magic: its version must then be `version` (else `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD`).
//
// # Safety
// `commit` is NULL or a handle from this library; `data` is NULL or points to `data_len`
// readable bytes.
struct paimon_wire_result_commit_messages paimon_wire_commit_messages_deserialize(const struct paimon_wire_table_commit *commit,
                                                                                  const uint8_t *data,
                                                                                  size_t data_len,
                                                                                  int32_t version);

// Decodes and validates every payload of `payloads[0 .. payloads_len]` as
// `paimon_wire_commit_messages_deserialize` does, and merges them as
// `paimon_wire_table_commit_merge` does: the one call a coordinator needs between receiving
// its workers' payloads and `paimon_wire_table_commit_commit`. The payloads are decoded on
// two threads (one checks each payload while the calling thread builds the messages of the
// one before), about 30 % faster than decoding them one after the other on two cores.
//
// A payload refused fails the whole call with the error code
// `paimon_wire_commit_messages_deserialize` gives it, and a message that starts with
// `payload N (counting from 0 in the order given): `. Nothing is bound then.
//
// Errors: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`
// for the arguments, `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION` (a payload's `version`, the
// message naming `payloads[N].version`), `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD` (with the
// field and byte offset), `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED`,
// `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED`, `PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT` (two
// payloads name one file with different metadata) and `PAIMON_WIRE_ERROR_CODE_SHARED_BUCKET`
// (two payloads write new files into one bucket of a primary-key table).
//
// The bytes are borrowed for the call only. Zero payloads give empty messages.
//
// # Safety
// `commit` is NULL or a handle from this library; `payloads` is NULL (only when
// `payloads_len` is 0) or points to `payloads_len` payloads, each with `data` NULL (only when
// `len` is 0) or pointing to `len` readable bytes that nothing writes during the call.
struct paimon_wire_result_commit_messages paimon_wire_commit_messages_deserialize_all(const struct paimon_wire_table_commit *commit,
                                                                                      const struct paimon_wire_payload *payloads,
                                                                                      size_t payloads_len);

// Counts messages, new data files and their rows.
//
// # Safety
// `messages` is NULL or a handle from this library.
struct paimon_wire_result_commit_messages_summary paimon_wire_commit_messages_summarize(const struct paimon_wire_commit_messages *messages);

// Counts the messages, new data files and their rows of a payload written at `version`,
// without a table and without decoding it into messages: the payload is checked completely
// (the same checks and errors as `paimon_wire_commit_messages_deserialize`'s decoding, within
// the default decode limits) and read in place, so nothing per file is allocated. For logging
// or vetting a payload before it reaches the coordinator; it does not validate the payload
// against a table. A `DPCM` frame is read as it is (it must carry `version`).
//
// Errors: `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`, `PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD`
// (with the field and byte offset), `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED`.
//
// # Safety
// `data` is NULL or points to `data_len` readable bytes (NULL only with `data_len` 0).
struct paimon_wire_result_commit_messages_summary paimon_wire_payload_summarize(const uint8_t *data,
                                                                                size_t data_len,
                                                                                int32_t version);

// Frees commit messages (not the files they describe). NULL is a no-op; a handle of another
// kind is left untouched.
//
// # Safety
// `messages` is NULL or a handle from this library, not used again after this call.
void paimon_wire_commit_messages_free(struct paimon_wire_commit_messages *messages);

// Frees bytes returned by this library. `{NULL, 0}` (the bytes of a failed call) is a no-op.
//
// # Safety
// `bytes` is a value returned by this library, unchanged, not freed before.
void paimon_wire_bytes_free(struct paimon_wire_bytes bytes);

// Creates table options with every setting at its default: the default decode limits (64 MiB,
// 100,000 messages and 1,000,000 files per payload), a HASH index budget of
// `PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET` (1 GiB), no table-option override, a
// current-thread runtime with tokio's default blocking pool, and full Arrow validation.
// Never returns NULL (an allocation failure aborts, as everywhere in this library).
struct paimon_wire_table_options *paimon_wire_table_options_new(void);

// Frees table options. NULL is a no-op; a handle of another kind is left untouched.
//
// # Safety
// `options` is NULL or a handle from this library, not used again after this call.
void paimon_wire_table_options_free(struct paimon_wire_table_options *options);

// Sets the limits `paimon_wire_commit_messages_deserialize` applies to each payload of the
// table commits made from the table: the most bytes, messages and files one payload may have.
// A payload beyond one is refused with `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED`, naming the
// limit. Returns NULL on success.
//
// # Safety
// `options` is NULL or a handle from this library.
struct paimon_wire_error *paimon_wire_table_options_set_decode_limits(struct paimon_wire_table_options *options,
                                                                      size_t max_payload_bytes,
                                                                      size_t max_messages,
                                                                      size_t max_files);

// Sets the most bytes of memory one commit's HASH index checks may hold, for the table
// commits made from the table (default `PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET`, 1 GiB). On a
// dynamic-bucket primary-key table (`'bucket' = '-1'`) the coordinator reads the HASH index
// files a commit adds or replaces and the live ones of the partitions whose indexes it
// changes, 12 bytes of memory for each of their keys, plus a 1 MiB read buffer. A commit that
// would need more is refused by `paimon_wire_table_commit_commit` before any index is read,
// with `PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED` (rule `bounds`, naming the budget), so a
// payload of a few hundred bytes cannot make the coordinator read gigabytes of index. Raise
// it when the table's partitions really hold more keys. Tables of other kinds have no HASH
// index and ignore it. Returns NULL on success, or `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`
// for 0, which would refuse every commit that checks a HASH index (give
// `PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET` for the default).
//
// # Safety
// `options` is NULL or a handle from this library.
struct paimon_wire_error *paimon_wire_table_options_set_hash_index_budget(struct paimon_wire_table_options *options,
                                                                          uint64_t bytes);

// Sets how long after a commit failed with `PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN` a request
// of it may still be applied by the store or the catalog, in milliseconds, for the table
// commits made from the table. `paimon_wire_table_commit_abort` deletes nothing within it.
// Default: 300000 (5 minutes) for object stores and REST catalogs, 0 for local file systems.
// Set it to at least the longest time a request can spend in the store's client, the network
// and the server, retries included. Returns NULL on success.
//
// # Safety
// `options` is NULL or a handle from this library.
struct paimon_wire_error *paimon_wire_table_options_set_outcome_horizon_ms(struct paimon_wire_table_options *options,
                                                                           uint64_t milliseconds);

// Overrides one of the table's own options (`file.format`, `file.compression`,
// `target-file-size`, `commit.max-retries`, ...) for this process's use of the table, as a
// job's dynamic options do in Paimon Java; the table's schema is not changed. Setting a key
// twice keeps the last value. Returns NULL on success, or `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`
// for an empty key or one that fixes the table's layout or key order (`bucket`,
// `bucket-key`, `primary-key`, `partition`, `partition.default-name`, `merge-engine`,
// `sequence.field`, `rowkind.field`, `data-file.path-directory`,
// `index-file-in-data-file-dir`, `type`).
//
// # Safety
// `options` is NULL or a handle from this library; `key` and `value` are NULL or
// NUL-terminated strings (copied).
struct paimon_wire_error *paimon_wire_table_options_set_table_option(struct paimon_wire_table_options *options,
                                                                     const char *key,
                                                                     const char *value);

// Sets the threads of the async runtime the table owns (one per opened table, shared by the
// handles made from it). `worker_threads` 0 (the default) is a current-thread runtime: calls
// drive it on the calling thread and it has no worker threads; N > 0 starts N worker threads.
// `max_blocking_threads` caps the runtime's blocking pool, where Paimon's file I/O runs
// (tokio's default cap is 512); it must be at least 1. Returns NULL on success or
// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`.
//
// # Safety
// `options` is NULL or a handle from this library.
struct paimon_wire_error *paimon_wire_table_options_set_runtime_threads(struct paimon_wire_table_options *options,
                                                                        size_t worker_threads,
                                                                        size_t max_blocking_threads);

// Names the threads of the table's runtime `<prefix><n>` (worker and blocking-pool threads;
// `n` counts from 0). Linux shows the first 15 bytes of a thread name (`/proc/self/task/*/comm`,
// `top -H`), so keep the prefix short. Returns NULL on success, or
// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for an empty prefix.
//
// # Safety
// `options` is NULL or a handle from this library; `prefix` is NULL or a NUL-terminated
// string (copied).
struct paimon_wire_error *paimon_wire_table_options_set_thread_name_prefix(struct paimon_wire_table_options *options,
                                                                           const char *prefix);

// Turns the full validation of every Arrow batch given to `paimon_wire_table_write_arrow_batch`
// on (the default) or off (`paimon_wire_table_bucket_ids` always validates). The validation reads every
// value (offsets in range, UTF-8 strings, ...) to refuse a malformed batch with
// `PAIMON_WIRE_ERROR_CODE_ARROW`. Turn it off only for batches from a producer that already
// guarantees the Arrow format (an Arrow library's own arrays): with it off, a malformed
// batch is undefined behavior. The cheap checks (struct type, no null rows, the table's
// columns) stay. Returns NULL on success.
//
// # Safety
// `options` is NULL or a handle from this library.
struct paimon_wire_error *paimon_wire_table_options_set_arrow_validation(struct paimon_wire_table_options *options,
                                                                         bool validate);

// Writes the routing `table` needs into `*out`. Returns NULL on success or an error owned by
// the caller (`PAIMON_WIRE_ERROR_CODE_NULL_POINTER`, `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`).
//
// # Safety
// `table` is NULL or a table handle from this library; `out` is NULL or writable.
struct paimon_wire_error *paimon_wire_table_routing(const struct paimon_wire_table *table,
                                                    struct paimon_wire_routing *out);

// Computes the bucket of every row of a record batch of a fixed-bucket table, as Paimon
// Java's writer assigns it (bucket key = `bucket-key`, or the primary key minus the partition
// keys; `bucket-function.type` default, mod or hive). `array` / `schema` are a struct array
// and its schema exported through the Arrow C Data Interface; the bucket-key columns are found
// by name and must have the Arrow types the table's writer takes (other columns are ignored).
// Row `i`'s bucket is written to `out_buckets[i]`; `out_len` must be at least the row count.
//
// Ownership of `array` and `schema` moves to this function whenever they are non-NULL, even
// when it fails (as `paimon_wire_table_write_arrow_batch`). Returns NULL on success or an error
// owned by the caller: `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for a table without fixed buckets (the
// message says which routing it needs; see `paimon_wire_table_routing`),
// `PAIMON_WIRE_ERROR_CODE_ARROW` for an array that cannot be imported or lacks a bucket-key column,
// `PAIMON_WIRE_ERROR_CODE_PAIMON` for a column of the wrong type or an unusable bucket function,
// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` when `out_len` is below the row count.
//
// # Safety
// `table` is NULL or a table handle from this library; `array` / `schema` are NULL or valid
// Arrow C Data Interface structs; `out_buckets` is NULL (only with `out_len` 0) or points to
// `out_len` writable `int32_t`s.
struct paimon_wire_error *paimon_wire_table_bucket_ids(const struct paimon_wire_table *table,
                                                       struct ArrowArray *array,
                                                       struct ArrowSchema *schema,
                                                       int32_t *out_buckets,
                                                       size_t out_len);

// Computes which of `assigners` dynamic-bucket assigners owns every row of a record batch of a
// dynamic-bucket primary-key table (`bucket = -1`, primary key including every partition key),
// as Paimon Java routes rows to its `HashBucketAssigner`s: `(|partition hash % assigners| +
// |key hash % owners|) % assigners` over the `BinaryRow` hashes of the partition and the
// trimmed primary key, where `owners` is `dynamic-bucket.initial-buckets` capped at
// `assigners` (unset: `assigners`). Send each row to the writer that is that assigner
// (`paimon_wire_write_builder_new_assigner`). Row `i`'s assigner is written to
// `out_assigners[i]`; `out_len` must be at least the row count.
//
// Ownership of `array` and `schema` moves to this function whenever they are non-NULL, even
// when it fails. Returns NULL on success or an error owned by the caller:
// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for a table that is not such a table (the message says
// why), `PAIMON_WIRE_ERROR_CODE_ARROW` for an array that cannot be imported or lacks a
// partition or primary-key column, `PAIMON_WIRE_ERROR_CODE_PAIMON` for a column of the wrong
// type or `assigners` below 1, `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` when `out_len` is below
// the row count.
//
// # Safety
// `table` is NULL or a table handle from this library; `array` / `schema` are NULL or valid
// Arrow C Data Interface structs; `out_assigners` is NULL (only with `out_len` 0) or points to
// `out_len` writable `int32_t`s.
struct paimon_wire_error *paimon_wire_table_assigner_ids(const struct paimon_wire_table *table,
                                                         struct ArrowArray *array,
                                                         struct ArrowSchema *schema,
                                                         int32_t assigners,
                                                         int32_t *out_assigners,
                                                         size_t out_len);

// Serializes `messages` at `version` as several standard payloads of at most `max_bytes`
// bytes each (for a transport with a frame limit), each one Java's
// `CommitMessageSerializer.serializeList` of some of the messages. A message larger than a
// payload is split by its new, deleted and changelog data files into messages of the same
// partition and bucket; its compaction and index files stay in one message. Send each
// payload with its index, the count and the version: the coordinator needs all three
// (`paimon_wire_commit_messages_deserialize_parts`). Messages that fit one payload give one
// payload, byte-identical to `paimon_wire_commit_messages_serialize_version`.
//
// Errors: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`
// for `messages`, `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION`,
// `PAIMON_WIRE_ERROR_CODE_UNREPRESENTABLE` (a field `version` cannot carry),
// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` (`max_bytes` below 256) and
// `PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED` (what of one message is never split — its
// compaction and index files, or one file — does not fit `max_bytes`; the message names it).
//
// # Safety
// `messages` is NULL or a handle from this library.
struct paimon_wire_result_payloads paimon_wire_commit_messages_serialize_split(const struct paimon_wire_commit_messages *messages,
                                                                               int32_t version,
                                                                               size_t max_bytes);

// Frees payloads returned by `paimon_wire_commit_messages_serialize_split`, every item with
// them. `{NULL, 0}` (the payloads of a failed call) is a no-op.
//
// # Safety
// `payloads` is a value returned by this library, unchanged, not freed before.
void paimon_wire_payloads_free(struct paimon_wire_payloads payloads);

// Decodes the payloads of one worker's split set (`parts[0 .. parts_len]`, in any order, from
// `paimon_wire_commit_messages_serialize_split` or any writer of standard payloads) as the one
// payload they were split from, validates every message against the table of `commit` and
// binds the result to `commit`, like `paimon_wire_commit_messages_deserialize`. A bucket whose
// files span two payloads of the set is one writer's, not two.
//
// The set must be whole: every index below the count, all payloads naming the same count, an
// index given twice only with the same bytes (kept once). Otherwise nothing is decoded and
// the call fails with `PAIMON_WIRE_ERROR_CODE_SPLIT_SET_INCOMPLETE`, naming the missing
// indexes (committing the rest would commit part of a worker's write as if it were all).
//
// Errors: as `paimon_wire_commit_messages_deserialize`, and
// `PAIMON_WIRE_ERROR_CODE_SPLIT_SET_INCOMPLETE`.
//
// # Safety
// `commit` is NULL or a handle from this library; `parts` is NULL (only when `parts_len` is
// 0) or points to `parts_len` parts, each with `data` NULL (only when `len` is 0) or pointing
// to `len` readable bytes.
struct paimon_wire_result_commit_messages paimon_wire_commit_messages_deserialize_parts(const struct paimon_wire_table_commit *commit,
                                                                                        const struct paimon_wire_payload_part *parts,
                                                                                        size_t parts_len,
                                                                                        int32_t version);

// Opens table `table_name` (`database.table`) in the warehouse at `warehouse`.
//
// `warehouse` is a local path (`/data/warehouse` or `file:///data/warehouse`), a URI whose
// storage backend this library was built with (by default `s3://` and `s3a://`; `oss://`,
// `gs://`, `abfs[s]://`, `cos://` and `obs://` with the `object-stores` feature, `hdfs://`
// with `storage-hdfs`), or a REST catalog's warehouse name (with `metastore=rest`).
// `option_keys` / `option_values` are `option_count` catalog options; both may be NULL when
// `option_count` is 0. The keys are Paimon's (same as Java's catalog options), e.g.:
//
// - S3 and S3-compatible stores: `s3.endpoint`, `s3.region`, `s3.access-key`,
//   `s3.secret-key`, `s3.session.token`, `s3.path-style-access` (`true` for S3Proxy, MinIO
//   and most non-AWS servers); `fs.s3a.*` spellings are accepted too.
// - OSS: `fs.oss.endpoint`, `fs.oss.accessKeyId`, `fs.oss.accessKeySecret`.
// - GCS: `gcs.*` / `fs.gs.*`; Azure: `azure.*` / `fs.azure.*`; COS: `cos.*` / `fs.cosn.*`;
//   OBS: `obs.*` / `fs.obs.*` (the paimon crate's `io/storage_*.rs` list every key).
// - REST catalog: `metastore=rest`, `uri`, `token.provider`, `token`, `dlf.*`.
// - Table options are the table's own; catalog options here only reach storage and catalog.
//
// Option values are copied; values of keys naming a secret, key, token, password or
// credential never appear in error messages.
//
// Every string is NUL-terminated UTF-8, borrowed for the duration of the call only.
// Returns a table owned by the caller (free with `paimon_wire_table_free`) or an error:
// - `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` for a NULL string or option array (with
//   `option_count` > 0);
// - `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for a string that is not UTF-8, a name that is not
//   `database.table`, or an invalid catalog option;
// - `PAIMON_WIRE_ERROR_CODE_TABLE_NOT_FOUND` when the database or table does not exist;
// - `PAIMON_WIRE_ERROR_CODE_STORAGE_BACKEND_NOT_COMPILED` for a URI whose backend this build
//   lacks (the message names the cargo feature);
// - `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` for a URI scheme no backend serves, or a table or
//   catalog feature the paimon crate does not support;
// - `PAIMON_WIRE_ERROR_CODE_IO` when the storage cannot be reached or read;
// - `PAIMON_WIRE_ERROR_CODE_PAIMON` for any other error of the paimon crate (e.g. a corrupt
//   schema file);
// - `PAIMON_WIRE_ERROR_CODE_INTERNAL` when the library's runtime cannot start.
//
// # Safety
// Pointer arguments are NULL or valid as described above.
struct paimon_wire_result_table paimon_wire_table_open(const char *warehouse,
                                                       const char *table_name,
                                                       const char *const *option_keys,
                                                       const char *const *option_values,
                                                       size_t option_count);

// `paimon_wire_table_open` with the settings in `options` (from `paimon_wire_table_options_new`;
// NULL means the defaults, exactly `paimon_wire_table_open`). The settings are copied: the
// table keeps them for its lifetime, and the handles made from it use them (a table commit
// its decode limits and HASH index budget, a writer its Arrow validation, all of them the
// table's runtime). Table options set with `paimon_wire_table_options_set_table_option`
// override the table's own options, as if the table had been created with them.
//
// Errors: those of `paimon_wire_table_open`, and `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND`
// when `options` is another kind of handle.
//
// # Safety
// As `paimon_wire_table_open`; `options` is NULL or a handle from this library.
struct paimon_wire_result_table paimon_wire_table_open_with_options(const char *warehouse,
                                                                    const char *table_name,
                                                                    const char *const *option_keys,
                                                                    const char *const *option_values,
                                                                    size_t option_count,
                                                                    const struct paimon_wire_table_options *options);

// Creates table `table_name` (`database.table`; the database too if it does not exist) in
// `warehouse` and opens it, as `paimon_wire_table_open` opens a table.
//
// - `schema` is the table's columns as an Arrow C Data Interface struct schema (format
//   `"+s"`, one child per column, in order: name, type, nullability), read and not released:
//   the caller keeps ownership. Arrow types map to Paimon types as the paimon crate maps
//   them (e.g. int64 to BIGINT, utf8 to STRING, timestamp[us] to TIMESTAMP(6)).
// - `partition_keys` / `primary_keys` name `partition_key_count` / `primary_key_count`
//   columns (no primary keys: an append table).
// - `table_option_keys` / `table_option_values` are `table_option_count` Paimon table
//   options (e.g. `bucket` = `4`), stored in the table's schema.
// - `catalog_option_keys` / `catalog_option_values` are `catalog_option_count` catalog
//   options, as `paimon_wire_table_open` takes them.
// - A table that exists is an error unless `ignore_if_exists`; then it is opened as it is,
//   whatever its columns and options.
//
// Arrays may be NULL when their count is 0. Strings are NUL-terminated UTF-8, borrowed for
// the call only. Returns a table owned by the caller (free with `paimon_wire_table_free`),
// opened with the default settings, or an error:
// - `PAIMON_WIRE_ERROR_CODE_NULL_POINTER` for a NULL string, schema or array (with a count
//   above 0);
// - `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` for a string that is not UTF-8, a name that is
//   not `database.table`, an invalid option, or keys naming no column;
// - `PAIMON_WIRE_ERROR_CODE_ARROW` for a schema that is released, malformed or not a struct;
// - `PAIMON_WIRE_ERROR_CODE_STORAGE_BACKEND_NOT_COMPILED` / `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED`
//   / `PAIMON_WIRE_ERROR_CODE_IO` as for `paimon_wire_table_open`, and `UNSUPPORTED` for a
//   column type Paimon cannot store;
// - `PAIMON_WIRE_ERROR_CODE_PAIMON` when the table exists (and `ignore_if_exists` is false),
//   and for any other error of the paimon crate;
// - `PAIMON_WIRE_ERROR_CODE_INTERNAL` when the library's runtime cannot start.
//
// # Safety
// Pointer arguments are NULL or valid as described above; `schema` is NULL or an
// `ArrowSchema` initialized per the Arrow C Data Interface (or released).
struct paimon_wire_result_table paimon_wire_table_create(const char *warehouse,
                                                         const char *table_name,
                                                         const struct ArrowSchema *schema,
                                                         const char *const *partition_keys,
                                                         size_t partition_key_count,
                                                         const char *const *primary_keys,
                                                         size_t primary_key_count,
                                                         const char *const *table_option_keys,
                                                         const char *const *table_option_values,
                                                         size_t table_option_count,
                                                         const char *const *catalog_option_keys,
                                                         const char *const *catalog_option_values,
                                                         size_t catalog_option_count,
                                                         bool ignore_if_exists);

// Frees a table. NULL is a no-op; a handle of another kind is left untouched.
//
// # Safety
// `table` is NULL or a handle from this library, not used again after this call.
void paimon_wire_table_free(struct paimon_wire_table *table);

// The library's version, `"MAJOR.MINOR.PATCH"` (possibly with a `-pre` suffix): a static
// NUL-terminated string, never freed.
const char *paimon_wire_version(void);

// The ABI version the library was built with. A host compares it with the header's
// `PAIMON_WIRE_ABI_VERSION` at startup and refuses to run on a mismatch (the dynamic loader
// already refuses a library whose SONAME differs).
uint32_t paimon_wire_abi_version(void);

// Creates a write builder for `table`.
//
// `commit_user` (NUL-terminated UTF-8, copied) names the logical commit: every worker and the
// coordinator of one commit pass the same value, and it must be a safe file-name segment.
// `overwrite` marks the writes as an overwrite (the coordinator's table commit must be created
// with the same flag). `write_kind` is a `paimon_wire_write_kind` value: which paimon writer to use
// (only postpone tables accept `PAIMON_WIRE_WRITE_KIND_POSTPONE_FIXED_BUCKET`; the coordinator
// must be created with the same kind). Returns a builder owned by the caller, or an error:
// `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT` when the commit user or write kind is refused,
// `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED` when the table cannot be written with that kind (a
// postpone kind for a table that is not a postpone table, a table the paimon crate cannot
// write).
//
// # Safety
// `table` is NULL or a handle from this library; `commit_user` is NULL or a NUL-terminated
// string.
struct paimon_wire_result_write_builder paimon_wire_write_builder_new(const struct paimon_wire_table *table,
                                                                      const char *commit_user,
                                                                      bool overwrite,
                                                                      int32_t write_kind);

// Creates a write builder like `builder` whose writers are dynamic-bucket assigner `assign_id`
// of `assigners` (Paimon Java's distributed `HashBucketAssigner`): each accepts only the rows
// `paimon_wire_table_assigner_ids` routes to `assign_id`, keeps the bucket of every key already
// in the table's HASH index, creates only the buckets it owns (`bucket % owners == assign_id %
// owners`), and writes the HASH index updates of its buckets in its commit messages. `builder`
// is unchanged. A table written this way needs every worker to pass the same `assigners`; the
// coordinator refuses payloads that give one key two buckets (rule `hash-index-keys`).
//
// Returns a new builder owned by the caller, or an error: `PAIMON_WIRE_ERROR_CODE_UNSUPPORTED`
// for a table that is not a dynamic-bucket primary-key table whose primary key includes every
// partition key, or a builder of another write kind; `PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT`
// when `assign_id` is not in `0..assigners`.
//
// # Safety
// `builder` is NULL or a handle from this library.
struct paimon_wire_result_write_builder paimon_wire_write_builder_new_assigner(const struct paimon_wire_write_builder *builder,
                                                                               int32_t assign_id,
                                                                               int32_t assigners);

// Creates a writer. A worker usually makes one writer per builder; several writers of one
// builder write disjoint data and their messages are merged by the coordinator.
//
// # Safety
// `builder` is NULL or a handle from this library.
struct paimon_wire_result_table_write paimon_wire_write_builder_new_write(const struct paimon_wire_write_builder *builder);

// Frees a write builder. NULL is a no-op; a handle of another kind is left untouched.
//
// # Safety
// `builder` is NULL or a handle from this library, not used again after this call.
void paimon_wire_write_builder_free(struct paimon_wire_write_builder *builder);

// Writes one record batch: `array` is a struct array whose children are the table's columns
// (by name), `schema` its schema, as exported through the Arrow C Data Interface.
//
// Ownership of `array` and `schema` moves to this function whenever they are non-NULL, even
// when it fails: on return both are marked released (`release == NULL`) and the caller must
// not release them. Rows are routed to their partition and bucket.
// Returns NULL on success or an error owned by the caller: `PAIMON_WIRE_ERROR_CODE_NULL_POINTER`
// / `PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND` for the arguments, `PAIMON_WIRE_ERROR_CODE_ARROW`
// when the structs cannot be imported (released, malformed, not a struct array, null rows),
// `PAIMON_WIRE_ERROR_CODE_PAIMON` naming the field when the columns do not match the table, and
// `PAIMON_WIRE_ERROR_CODE_IO` when writing a file fails.
//
// After an error, the writer is unusable: part of the batch may already be in its files (a
// batch is split by partition and bucket and written piece by piece), so neither writing the
// batch again nor preparing a commit from this writer is correct. Free it (which deletes the
// files it has not handed out) and write the whole batch again with a new writer. The
// argument errors (NULL_POINTER, WRONG_HANDLE_KIND, ARROW) are found before anything is written;
// the writer stays usable after them.
//
// # Safety
// `write` is NULL or a handle from this library, not used by another thread during the call;
// `array` / `schema` are NULL or valid Arrow C Data Interface structs.
struct paimon_wire_error *paimon_wire_table_write_arrow_batch(struct paimon_wire_table_write *write,
                                                              struct ArrowArray *array,
                                                              struct ArrowSchema *schema);

// Flushes the writer and returns the commit messages describing the files it wrote, owned by
// the caller (free with `paimon_wire_commit_messages_free`). Serialize them with
// `paimon_wire_commit_messages_serialize` and send the bytes to the coordinator. The writer may
// be used again for the next commit.
//
// # Safety
// `write` is NULL or a handle from this library, not used by another thread during the call.
struct paimon_wire_result_commit_messages paimon_wire_table_write_prepare_commit(struct paimon_wire_table_write *write);

// Frees a writer, discarding anything written since the last `paimon_wire_table_write_prepare_commit`
// (files already handed out in commit messages are left to the coordinator). NULL is a no-op;
// a handle of another kind is left untouched.
//
// This call blocks: it closes the writer's open files and deletes the ones it has not handed
// out, on the caller's thread (through the table's runtime). A failure to delete them cannot be
// returned (the paimon crate's writer reports none); the paimon crate logs it as a warning
// (see `paimon_wire_set_log_callback`), and the files are orphans that Paimon's orphan-file
// cleanup removes.
//
// # Safety
// `write` is NULL or a handle from this library, not used again after this call.
void paimon_wire_table_write_free(struct paimon_wire_table_write *write);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* PAIMON_WIRE_H */
