/*
 * paimon_wire.hpp: a header-only C++17 layer over the C API of libpaimon_wire (paimon_wire.h).
 *
 * - Every handle has a move-only owner that frees it in its destructor (Table, WriteBuilder,
 *   TableWrite, TableCommit, CommitMessages, TableOptions, Bytes, Payloads).
 * - Versions: library_version(), library_abi_version(), library_abi_matches_header().
 * - A failed call throws paimon_wire::Error, which carries the C error code (code()) and the
 *   library's message (what()). Nothing else is thrown by this header except std::bad_alloc.
 * - Bytes go in as ByteView (pointer + length, borrowed for the call) and come out as Bytes
 *   (owned) or ByteView (borrowed from the input, as Envelope::payload); strings go in as
 *   std::string_view (copied into a NUL-terminated string for the C call).
 * - Arrow batches go in through the Arrow C Data Interface structs: as in C, ownership of the
 *   ArrowArray / ArrowSchema moves to the library on every call that takes them.
 *
 * Thread rules are the C library's (see paimon_wire.h): Table, WriteBuilder, TableCommit and
 * CommitMessages may be used from several threads at once; a TableWrite by one thread at a
 * time. Destroying a TableWrite blocks on I/O, as paimon_wire_table_write_free does.
 *
 * tests/cpp.rs checks that every function of paimon_wire.h is called here.
 */
#ifndef PAIMON_WIRE_HPP
#define PAIMON_WIRE_HPP

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "paimon_wire.h"

namespace paimon_wire {

/// A failed call: the C library's error code and message.
class Error : public std::runtime_error {
 public:
  Error(paimon_wire_error_code code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  /// The stable error code (PAIMON_WIRE_ERROR_CODE_...).
  paimon_wire_error_code code() const noexcept { return code_; }
  /// Whether a failed commit's snapshot may be in the table or may still land
  /// (PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN): keep its files and commit again with the same
  /// identifier. Every other error of a commit is known to have committed nothing.
  bool outcome_unknown() const noexcept { return code_ == PAIMON_WIRE_ERROR_CODE_OUTCOME_UNKNOWN; }

 private:
  paimon_wire_error_code code_;
};

namespace detail {

/// Throws `error` as paimon_wire::Error (freeing it) when it is not NULL.
inline void throw_if_error(paimon_wire_error *error) {
  if (error == nullptr) return;
  // Frees the C error on every path, also when copying its message throws std::bad_alloc.
  struct Freer {
    paimon_wire_error *error;
    ~Freer() { paimon_wire_error_free(error); }
  } freer{error};
  throw Error(error->code, error->message != nullptr ? error->message : "");
}

/// Owns a C handle `T *` and frees it with `Free` exactly once. Move-only.
template <typename T, void (*Free)(T *)>
class Owner {
 public:
  Owner() noexcept = default;
  explicit Owner(T *handle) noexcept : handle_(handle) {}
  Owner(const Owner &) = delete;
  Owner &operator=(const Owner &) = delete;
  Owner(Owner &&other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Owner &operator=(Owner &&other) noexcept {
    if (this != &other) reset(std::exchange(other.handle_, nullptr));
    return *this;
  }
  ~Owner() { reset(nullptr); }

  /// The handle, still owned (NULL after a move).
  T *get() const noexcept { return handle_; }
  /// Gives up ownership: the caller frees the handle.
  T *release() noexcept { return std::exchange(handle_, nullptr); }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  void reset(T *handle) noexcept {
    if (handle_ != nullptr) Free(handle_);
    handle_ = handle;
  }
  T *handle_ = nullptr;
};

/// NUL-terminated copies of string_views, kept alive for one C call. A view holding a NUL
/// byte throws INVALID_ARGUMENT: C would see only the part before it (a commit user cut
/// short would silently differ from the workers').
inline std::string c_string(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) {
    throw Error(PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT,
                "a string argument contains a NUL byte: \"" + std::string(text.substr(0, text.find('\0'))) + "\\0...\"");
  }
  return std::string(text);
}

/// NUL-terminated copies of strings, and the array of pointers to them a C call takes.
class CStrings {
 public:
  template <typename Strings>
  explicit CStrings(const Strings &strings) {
    for (const auto &text : strings) owned_.push_back(c_string(text));
    pointers_.reserve(owned_.size());
    for (const std::string &text : owned_) pointers_.push_back(text.c_str());
  }
  CStrings(const CStrings &) = delete;
  CStrings &operator=(const CStrings &) = delete;

  const char *const *data() const noexcept { return pointers_.data(); }
  size_t size() const noexcept { return pointers_.size(); }

 private:
  std::vector<std::string> owned_;
  std::vector<const char *> pointers_;
};

}  // namespace detail

/// Borrowed bytes: `size` bytes at `data`, valid as long as their owner is.
struct ByteView {
  const uint8_t *data = nullptr;
  size_t size = 0;

  ByteView() noexcept = default;
  ByteView(const uint8_t *data_, size_t size_) noexcept : data(data_), size(size_) {}
  /// A view of a vector's bytes.
  ByteView(const std::vector<uint8_t> &bytes) noexcept  // NOLINT: implicit by design
      : data(bytes.data()), size(bytes.size()) {}
  const uint8_t *begin() const noexcept { return data; }
  const uint8_t *end() const noexcept { return data + size; }
};

/// Bytes returned by the library (paimon_wire_bytes), freed with paimon_wire_bytes_free. Move-only.
class Bytes {
 public:
  explicit Bytes(paimon_wire_bytes bytes) noexcept : bytes_(bytes) {}
  Bytes(const Bytes &) = delete;
  Bytes &operator=(const Bytes &) = delete;
  Bytes(Bytes &&other) noexcept : bytes_(std::exchange(other.bytes_, paimon_wire_bytes{nullptr, 0})) {}
  Bytes &operator=(Bytes &&other) noexcept {
    if (this != &other) {
      paimon_wire_bytes_free(bytes_);
      bytes_ = std::exchange(other.bytes_, paimon_wire_bytes{nullptr, 0});
    }
    return *this;
  }
  ~Bytes() { paimon_wire_bytes_free(bytes_); }

  const uint8_t *data() const noexcept { return bytes_.data; }
  size_t size() const noexcept { return bytes_.len; }
  /// A view of these bytes, valid while this object lives.
  ByteView view() const noexcept { return ByteView(bytes_.data, bytes_.len); }
  operator ByteView() const noexcept { return view(); }  // NOLINT: implicit by design
  /// A copy of the bytes.
  std::vector<uint8_t> to_vector() const { return std::vector<uint8_t>(data(), data() + size()); }

 private:
  paimon_wire_bytes bytes_;
};

/// Payloads returned by CommitMessages::serialize_split (paimon_wire_payloads), all freed at
/// once with paimon_wire_payloads_free. Move-only.
class Payloads {
 public:
  explicit Payloads(paimon_wire_payloads payloads) noexcept : payloads_(payloads) {}
  Payloads(const Payloads &) = delete;
  Payloads &operator=(const Payloads &) = delete;
  Payloads(Payloads &&other) noexcept : payloads_(std::exchange(other.payloads_, paimon_wire_payloads{nullptr, 0})) {}
  Payloads &operator=(Payloads &&other) noexcept {
    if (this != &other) {
      paimon_wire_payloads_free(payloads_);
      payloads_ = std::exchange(other.payloads_, paimon_wire_payloads{nullptr, 0});
    }
    return *this;
  }
  ~Payloads() { paimon_wire_payloads_free(payloads_); }

  /// How many payloads (the count to send beside each).
  size_t size() const noexcept { return payloads_.count; }
  /// Payload `index` (below size()), valid while this object lives.
  ByteView operator[](size_t index) const noexcept {
    return ByteView(payloads_.items[index].data, payloads_.items[index].len);
  }

 private:
  paimon_wire_payloads payloads_;
};

/// One payload of a split set as the coordinator received it: the bytes (borrowed for the
/// call), its index in the set and the set's count.
struct PayloadPart {
  ByteView bytes;
  uint32_t index = 0;
  uint32_t count = 0;
};

/// One worker's payload for TableCommit::deserialize_all: its bytes and the serializer version
/// it was written at.
struct Payload {
  ByteView bytes;
  int32_t version = 0;
};

/// The loaded library's version, "MAJOR.MINOR.PATCH" (a static string).
inline std::string_view library_version() noexcept { return paimon_wire_version(); }

/// The ABI version of the loaded library.
inline uint32_t library_abi_version() noexcept { return paimon_wire_abi_version(); }

/// Whether the loaded library has the ABI this header describes (PAIMON_WIRE_ABI_VERSION).
/// A host checks it once at startup.
inline bool library_abi_matches_header() noexcept {
  return paimon_wire_abi_version() == PAIMON_WIRE_ABI_VERSION;
}

/// The serializer version paimon_wire_commit_messages_serialize writes.
inline int32_t serializer_version() noexcept { return paimon_wire_commit_messages_serializer_version(); }

/// What an envelope holds: the serializer version and the payload (borrowed from the input).
struct Envelope {
  int32_t serializer_version;
  ByteView payload;
};

/// Frames a payload written at serializer `version` in an envelope.
inline Bytes envelope_wrap(ByteView payload, int32_t version) {
  paimon_wire_result_bytes result = paimon_wire_envelope_wrap(payload.data, payload.size, version);
  detail::throw_if_error(result.error);
  return Bytes(result.bytes);
}

/// Checks an envelope and finds its payload (a view into `framed`, nothing is copied).
inline Envelope envelope_unwrap(ByteView framed) {
  paimon_wire_result_envelope result = paimon_wire_envelope_unwrap(framed.data, framed.size);
  detail::throw_if_error(result.error);
  return Envelope{result.envelope.serializer_version,
                  ByteView(result.envelope.payload, result.envelope.payload_len)};
}

/// Frames a payload written at serializer `version` as Apache Doris's frontend reads it (DPCM:
/// magic, version, length). Coordinator::deserialize takes the frame as it is.
inline Bytes dpcm_frame(ByteView payload, int32_t version) {
  paimon_wire_result_bytes result = paimon_wire_dpcm_frame(payload.data, payload.size, version);
  detail::throw_if_error(result.error);
  return Bytes(result.bytes);
}

/// Checks a DPCM frame and finds its payload (a view into `framed`, nothing is copied).
inline Envelope dpcm_unframe(ByteView framed) {
  paimon_wire_result_envelope result = paimon_wire_dpcm_unframe(framed.data, framed.size);
  detail::throw_if_error(result.error);
  return Envelope{result.envelope.serializer_version,
                  ByteView(result.envelope.payload, result.envelope.payload_len)};
}

/// The snapshot a compaction task was planned from (paimon_wire_compaction_task_snapshot_id).
inline int64_t compaction_task_snapshot_id(ByteView task) {
  int64_t snapshot_id = 0;
  detail::throw_if_error(paimon_wire_compaction_task_snapshot_id(task.data, task.size, &snapshot_id));
  return snapshot_id;
}

/// Counts a payload's messages, new data files and rows, written at serializer `version`, by
/// reading it in place: no table, no decoded messages. The whole payload is checked, within the
/// default decode limits; a bad payload throws (MALFORMED_PAYLOAD names the field and offset).
inline paimon_wire_commit_messages_summary payload_summarize(ByteView payload, int32_t version) {
  paimon_wire_result_commit_messages_summary result =
      paimon_wire_payload_summarize(payload.data, payload.size, version);
  detail::throw_if_error(result.error);
  return result.summary;
}

/// Commit messages: prepared by a TableWrite, or decoded / merged by a TableCommit.
class CommitMessages {
 public:
  explicit CommitMessages(paimon_wire_commit_messages *handle) noexcept : handle_(handle) {}

  /// Serialized at `version` in the frame `frame` (PAIMON_WIRE_FRAME_RAW, _ENVELOPE or _DPCM).
  Bytes serialize_framed(int32_t version, uint32_t frame) const {
    paimon_wire_result_bytes result =
        paimon_wire_commit_messages_serialize_framed(handle_.get(), version, frame);
    detail::throw_if_error(result.error);
    return Bytes(result.bytes);
  }

  /// Serialized at the current serializer version (send serializer_version() with them).
  Bytes serialize() const {
    paimon_wire_result_bytes result = paimon_wire_commit_messages_serialize(handle_.get());
    detail::throw_if_error(result.error);
    return Bytes(result.bytes);
  }
  /// Serialized at `version` (e.g. 3 for a Paimon 0.9 coordinator).
  Bytes serialize(int32_t version) const {
    paimon_wire_result_bytes result = paimon_wire_commit_messages_serialize_version(handle_.get(), version);
    detail::throw_if_error(result.error);
    return Bytes(result.bytes);
  }
  /// Serialized at `version` as payloads of at most `max_bytes` each (for a transport with a
  /// frame limit); send each with its index, the count (size()) and the version.
  Payloads serialize_split(int32_t version, size_t max_bytes) const {
    paimon_wire_result_payloads result =
        paimon_wire_commit_messages_serialize_split(handle_.get(), version, max_bytes);
    detail::throw_if_error(result.error);
    return Payloads(result.payloads);
  }
  /// Messages, new data files and their rows.
  paimon_wire_commit_messages_summary summarize() const {
    paimon_wire_result_commit_messages_summary result = paimon_wire_commit_messages_summarize(handle_.get());
    detail::throw_if_error(result.error);
    return result.summary;
  }
  const paimon_wire_commit_messages *get() const noexcept { return handle_.get(); }
  paimon_wire_commit_messages *release() noexcept { return handle_.release(); }

 private:
  detail::Owner<paimon_wire_commit_messages, paimon_wire_commit_messages_free> handle_;
};

/// A writer of data files for one worker; use it from one thread at a time.
class TableWrite {
 public:
  explicit TableWrite(paimon_wire_table_write *handle) noexcept : handle_(handle) {}

  /// Writes one record batch (a struct array and its schema, Arrow C Data Interface). Takes
  /// ownership of both structs, even when it throws. After a failed write the writer must not
  /// be used again (see paimon_wire_table_write_arrow_batch).
  void write_arrow_batch(ArrowArray *array, ArrowSchema *schema) {
    detail::throw_if_error(paimon_wire_table_write_arrow_batch(handle_.get(), array, schema));
  }
  /// Flushes and returns the commit messages of what was written since the last call.
  CommitMessages prepare_commit() {
    paimon_wire_result_commit_messages result = paimon_wire_table_write_prepare_commit(handle_.get());
    detail::throw_if_error(result.error);
    return CommitMessages(result.messages);
  }
  paimon_wire_table_write *get() const noexcept { return handle_.get(); }
  paimon_wire_table_write *release() noexcept { return handle_.release(); }

 private:
  detail::Owner<paimon_wire_table_write, paimon_wire_table_write_free> handle_;
};

/// Settings shared by every write of one logical commit.
class WriteBuilder {
 public:
  explicit WriteBuilder(paimon_wire_write_builder *handle) noexcept : handle_(handle) {}

  TableWrite new_write() const {
    paimon_wire_result_table_write result = paimon_wire_write_builder_new_write(handle_.get());
    detail::throw_if_error(result.error);
    return TableWrite(result.write);
  }
  /// A builder like this one whose writers are dynamic-bucket assigner `assign_id` of
  /// `assigners` (paimon_wire_write_builder_new_assigner); this one is unchanged.
  WriteBuilder new_assigner(int32_t assign_id, int32_t assigners) const {
    paimon_wire_result_write_builder result =
        paimon_wire_write_builder_new_assigner(handle_.get(), assign_id, assigners);
    detail::throw_if_error(result.error);
    return WriteBuilder(result.builder);
  }
  const paimon_wire_write_builder *get() const noexcept { return handle_.get(); }
  paimon_wire_write_builder *release() noexcept { return handle_.release(); }

 private:
  detail::Owner<paimon_wire_write_builder, paimon_wire_write_builder_free> handle_;
};

/// Which messages a TableCommit accepts (the paimon_wire_table_commit_new* functions; for any
/// combination, Table::new_commit_with_flags).
enum class CommitMode {
  /// paimon_wire_table_commit_new: new files only; deletes and compaction results are refused.
  Standard,
  /// paimon_wire_table_commit_new_with_deletes: also deleted files and deletion vectors.
  WithDeletes,
  /// paimon_wire_table_commit_new_refusing_compaction: kept for older callers, the same as
  /// Standard now that compaction results are refused by default.
  RefusingCompaction,
  /// paimon_wire_table_commit_new_with_compaction: also compaction results, for jobs whose
  /// writers compact (Java writers with write-only = false).
  WithCompaction,
};

/// The coordinator of one logical commit.
class TableCommit {
 public:
  explicit TableCommit(paimon_wire_table_commit *handle) noexcept : handle_(handle) {}

  /// Decodes and validates a payload written at `version`, bound to this commit.
  CommitMessages deserialize(ByteView payload, int32_t version) const {
    paimon_wire_result_commit_messages result =
        paimon_wire_commit_messages_deserialize(handle_.get(), payload.data, payload.size, version);
    detail::throw_if_error(result.error);
    return CommitMessages(result.messages);
  }
  /// Decodes one worker's split set (any order; a payload twice is kept once) as the payload it
  /// was split from; a set with a payload missing throws SPLIT_SET_INCOMPLETE.
  CommitMessages deserialize_parts(const std::vector<PayloadPart> &parts, int32_t version) const {
    std::vector<paimon_wire_payload_part> c_parts;
    c_parts.reserve(parts.size());
    for (const PayloadPart &part : parts)
      c_parts.push_back(paimon_wire_payload_part{part.bytes.data, part.bytes.size, part.index, part.count});
    paimon_wire_result_commit_messages result = paimon_wire_commit_messages_deserialize_parts(
        handle_.get(), c_parts.data(), c_parts.size(), version);
    detail::throw_if_error(result.error);
    return CommitMessages(result.messages);
  }
  /// Decodes every worker's payload (on two threads) and merges them: deserialize of each, then
  /// merge, in one call. A refused payload throws the error deserialize throws for it, its
  /// message starting with "payload N (counting from 0 in the order given): ".
  CommitMessages deserialize_all(const std::vector<Payload> &payloads) const {
    std::vector<paimon_wire_payload> c_payloads;
    c_payloads.reserve(payloads.size());
    for (const Payload &payload : payloads)
      c_payloads.push_back(paimon_wire_payload{payload.bytes.data, payload.bytes.size, payload.version});
    paimon_wire_result_commit_messages result = paimon_wire_commit_messages_deserialize_all(
        handle_.get(), c_payloads.data(), c_payloads.size());
    detail::throw_if_error(result.error);
    return CommitMessages(result.messages);
  }
  /// Decodes the payload of an envelope (envelope_unwrap, then deserialize).
  CommitMessages deserialize_envelope(ByteView framed) const {
    Envelope envelope = envelope_unwrap(framed);
    return deserialize(envelope.payload, envelope.serializer_version);
  }
  /// Merges message sets bound to this commit into one new set.
  CommitMessages merge(const std::vector<const CommitMessages *> &parts) const {
    std::vector<const paimon_wire_commit_messages *> handles;
    handles.reserve(parts.size());
    for (const CommitMessages *part : parts) handles.push_back(part->get());
    paimon_wire_result_commit_messages result =
        paimon_wire_table_commit_merge(handle_.get(), handles.data(), handles.size());
    detail::throw_if_error(result.error);
    return CommitMessages(result.messages);
  }
  /// Commits `messages` once under `commit_identifier`.
  paimon_wire_commit_outcome commit(const CommitMessages &messages, int64_t commit_identifier) const {
    paimon_wire_result_commit result =
        paimon_wire_table_commit_commit(handle_.get(), messages.get(), commit_identifier);
    detail::throw_if_error(result.error);
    return result.outcome;
  }
  /// Deletes the files of an abandoned write. Throws an Error whose outcome_unknown() is true,
  /// deleting nothing, while a commit of this handle whose outcome is unknown may still land.
  void abort(const CommitMessages &messages) const {
    detail::throw_if_error(paimon_wire_table_commit_abort(handle_.get(), messages.get()));
  }
  /// abort() without waiting for unknown outcomes (paimon_wire_table_commit_abort_despite_
  /// unknown_outcome): only when no request of the failed commit can still land.
  void abort_despite_unknown_outcome(const CommitMessages &messages) const {
    detail::throw_if_error(
        paimon_wire_table_commit_abort_despite_unknown_outcome(handle_.get(), messages.get()));
  }
  const paimon_wire_table_commit *get() const noexcept { return handle_.get(); }
  paimon_wire_table_commit *release() noexcept { return handle_.release(); }

 private:
  detail::Owner<paimon_wire_table_commit, paimon_wire_table_commit_free> handle_;
};

/// One catalog option for Table::open.
struct Option {
  std::string_view key;
  std::string_view value;
};

namespace detail {

/// Options as the two parallel C arrays of keys and values.
class COptions {
 public:
  explicit COptions(const std::vector<Option> &options)
      : keys_(field(options, &Option::key)), values_(field(options, &Option::value)) {}

  const char *const *keys() const noexcept { return keys_.data(); }
  const char *const *values() const noexcept { return values_.data(); }
  size_t size() const noexcept { return keys_.size(); }

 private:
  static std::vector<std::string_view> field(const std::vector<Option> &options,
                                             std::string_view Option::*member) {
    std::vector<std::string_view> out;
    out.reserve(options.size());
    for (const Option &option : options) out.push_back(option.*member);
    return out;
  }
  CStrings keys_, values_;
};

}  // namespace detail

/// Settings of an opened table (paimon_wire_table_options): decode limits, the HASH index
/// budget, table-option overrides, the runtime's threads and their names, Arrow validation.
/// Every setter returns the object, so calls chain; Table::open copies the settings.
class TableOptions {
 public:
  /// Every setting at its default.
  TableOptions() : handle_(paimon_wire_table_options_new()) {}

  /// The most bytes, messages and files one payload may have.
  TableOptions &decode_limits(size_t max_payload_bytes, size_t max_messages, size_t max_files) {
    detail::throw_if_error(paimon_wire_table_options_set_decode_limits(
        handle_.get(), max_payload_bytes, max_messages, max_files));
    return *this;
  }
  /// The most bytes of memory one commit's HASH index checks may hold (dynamic-bucket
  /// tables; default PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET, 1 GiB; not 0).
  TableOptions &hash_index_budget(uint64_t bytes) {
    detail::throw_if_error(paimon_wire_table_options_set_hash_index_budget(handle_.get(), bytes));
    return *this;
  }
  /// How long after a commit of unknown outcome its requests may still land, in milliseconds
  /// (abort() deletes nothing within it; default 5 minutes on object stores and REST
  /// catalogs, 0 on local file systems).
  TableOptions &outcome_horizon_ms(uint64_t milliseconds) {
    detail::throw_if_error(
        paimon_wire_table_options_set_outcome_horizon_ms(handle_.get(), milliseconds));
    return *this;
  }
  /// Overrides one of the table's own options for this process (e.g. `file.compression`).
  TableOptions &table_option(std::string_view key, std::string_view value) {
    std::string key_c = detail::c_string(key), value_c = detail::c_string(value);
    detail::throw_if_error(
        paimon_wire_table_options_set_table_option(handle_.get(), key_c.c_str(), value_c.c_str()));
    return *this;
  }
  /// Worker threads (0: a current-thread runtime) and the blocking pool's cap (at least 1).
  TableOptions &runtime_threads(size_t worker_threads, size_t max_blocking_threads) {
    detail::throw_if_error(paimon_wire_table_options_set_runtime_threads(
        handle_.get(), worker_threads, max_blocking_threads));
    return *this;
  }
  /// Names the runtime's threads `<prefix><n>`.
  TableOptions &thread_name_prefix(std::string_view prefix) {
    std::string prefix_c = detail::c_string(prefix);
    detail::throw_if_error(
        paimon_wire_table_options_set_thread_name_prefix(handle_.get(), prefix_c.c_str()));
    return *this;
  }
  /// Full validation of every Arrow batch (on by default).
  TableOptions &arrow_validation(bool validate) {
    detail::throw_if_error(paimon_wire_table_options_set_arrow_validation(handle_.get(), validate));
    return *this;
  }
  const paimon_wire_table_options *get() const noexcept { return handle_.get(); }

 private:
  detail::Owner<paimon_wire_table_options, paimon_wire_table_options_free> handle_;
};

/// Registers the process-wide log callback (see paimon_wire_set_log_callback: it is called
/// from any thread and must be thread-safe and not throw) for records of `max_level` and more
/// severe; a NULL callback or `max_level` 0 turns logging off.
inline void set_log_callback(paimon_wire_log_callback callback, void *user_data,
                             int32_t max_level) {
  detail::throw_if_error(paimon_wire_set_log_callback(callback, user_data, max_level));
}

/// A Paimon table opened from a warehouse. May be used from several threads at once.
class Table {
 public:
  explicit Table(paimon_wire_table *handle) noexcept : handle_(handle) {}

  /// Opens `table_name` (`database.table`) in `warehouse` with catalog `options`, and the
  /// table `settings` when given (else the defaults).
  static Table open(std::string_view warehouse, std::string_view table_name,
                    const std::vector<Option> &options = {},
                    const TableOptions *settings = nullptr) {
    std::string warehouse_c = detail::c_string(warehouse);
    std::string name_c = detail::c_string(table_name);
    detail::COptions c_options(options);
    paimon_wire_result_table result =
        settings == nullptr
            ? paimon_wire_table_open(warehouse_c.c_str(), name_c.c_str(), c_options.keys(),
                                     c_options.values(), c_options.size())
            : paimon_wire_table_open_with_options(warehouse_c.c_str(), name_c.c_str(),
                                                  c_options.keys(), c_options.values(),
                                                  c_options.size(), settings->get());
    detail::throw_if_error(result.error);
    return Table(result.table);
  }

  /// Creates `table_name` (`database.table`, and its database if needed) in `warehouse` with
  /// the columns of the struct schema `columns` (read, not released: the caller keeps it),
  /// the key columns and table options given, and opens it (see paimon_wire_table_create).
  /// An existing table throws unless `ignore_if_exists`; then it is opened as it is.
  static Table create(std::string_view warehouse, std::string_view table_name,
                      const ArrowSchema &columns,
                      const std::vector<std::string> &partition_keys = {},
                      const std::vector<std::string> &primary_keys = {},
                      const std::vector<Option> &table_options = {},
                      const std::vector<Option> &catalog_options = {},
                      bool ignore_if_exists = false) {
    std::string warehouse_c = detail::c_string(warehouse);
    std::string name_c = detail::c_string(table_name);
    detail::CStrings partitions(partition_keys), primaries(primary_keys);
    detail::COptions table_c(table_options), catalog_c(catalog_options);
    paimon_wire_result_table result = paimon_wire_table_create(
        warehouse_c.c_str(), name_c.c_str(), &columns, partitions.data(), partitions.size(),
        primaries.data(), primaries.size(), table_c.keys(), table_c.values(), table_c.size(),
        catalog_c.keys(), catalog_c.values(), catalog_c.size(), ignore_if_exists);
    detail::throw_if_error(result.error);
    return Table(result.table);
  }

  /// How rows must be spread over writers.
  paimon_wire_routing routing() const {
    paimon_wire_routing out{};
    detail::throw_if_error(paimon_wire_table_routing(handle_.get(), &out));
    return out;
  }
  /// The bucket of every row of a batch of a fixed-bucket table. Takes ownership of the
  /// Arrow structs, even when it throws.
  std::vector<int32_t> bucket_ids(ArrowArray *array, ArrowSchema *schema) const {
    std::vector<int32_t> buckets;
    try {
      buckets.resize(array != nullptr && array->length > 0 ? static_cast<size_t>(array->length) : 0);
    } catch (...) {
      // The C call takes ownership of the structs; it was never reached, so release them here.
      if (array != nullptr && array->release != nullptr) array->release(array);
      if (schema != nullptr && schema->release != nullptr) schema->release(schema);
      throw;
    }
    detail::throw_if_error(
        paimon_wire_table_bucket_ids(handle_.get(), array, schema, buckets.data(), buckets.size()));
    return buckets;
  }
  /// The dynamic-bucket assigner (0..assigners-1) of every row of a batch of a dynamic-bucket
  /// primary-key table (paimon_wire_table_assigner_ids). Takes ownership of the Arrow structs,
  /// even when it throws.
  std::vector<int32_t> assigner_ids(ArrowArray *array, ArrowSchema *schema, int32_t assigners) const {
    std::vector<int32_t> owners;
    try {
      owners.resize(array != nullptr && array->length > 0 ? static_cast<size_t>(array->length) : 0);
    } catch (...) {
      if (array != nullptr && array->release != nullptr) array->release(array);
      if (schema != nullptr && schema->release != nullptr) schema->release(schema);
      throw;
    }
    detail::throw_if_error(paimon_wire_table_assigner_ids(handle_.get(), array, schema, assigners,
                                                          owners.data(), owners.size()));
    return owners;
  }
  /// The compaction plan of the latest snapshot: one task, as bytes to send to a worker, per
  /// bucket to compact (paimon_wire_table_plan_compaction); `full` compacts every bucket not
  /// already compacted.
  Payloads plan_compaction(bool full = false) const {
    paimon_wire_result_payloads result = paimon_wire_table_plan_compaction(handle_.get(), full);
    detail::throw_if_error(result.error);
    return Payloads(result.payloads);
  }
  /// Runs one task of plan_compaction on this table into the payload of its commit message at
  /// `version` (paimon_wire_compaction_task_run); commit it with a table commit that verifies
  /// compactions, under compaction_task_snapshot_id(task) as the identifier.
  Bytes run_compaction_task(ByteView task, int32_t version) const {
    paimon_wire_result_bytes result =
        paimon_wire_compaction_task_run(handle_.get(), task.data, task.size, version);
    detail::throw_if_error(result.error);
    return Bytes(result.bytes);
  }
  /// A write builder for one logical commit.
  WriteBuilder new_write_builder(std::string_view commit_user, bool overwrite = false,
                                 paimon_wire_write_kind kind = PAIMON_WIRE_WRITE_KIND_STANDARD) const {
    std::string user = detail::c_string(commit_user);
    paimon_wire_result_write_builder result =
        paimon_wire_write_builder_new(handle_.get(), user.c_str(), overwrite, kind);
    detail::throw_if_error(result.error);
    return WriteBuilder(result.builder);
  }
  /// The coordinator of one logical commit.
  TableCommit new_commit(std::string_view commit_user, bool overwrite = false,
                         paimon_wire_write_kind kind = PAIMON_WIRE_WRITE_KIND_STANDARD,
                         CommitMode mode = CommitMode::Standard) const {
    std::string user = detail::c_string(commit_user);
    paimon_wire_result_table_commit result{};
    switch (mode) {
      case CommitMode::Standard:
        result = paimon_wire_table_commit_new(handle_.get(), user.c_str(), overwrite, kind);
        break;
      case CommitMode::WithDeletes:
        result = paimon_wire_table_commit_new_with_deletes(handle_.get(), user.c_str(), overwrite, kind);
        break;
      case CommitMode::RefusingCompaction:
        result = paimon_wire_table_commit_new_refusing_compaction(handle_.get(), user.c_str(),
                                                             overwrite, kind);
        break;
      case CommitMode::WithCompaction:
        result = paimon_wire_table_commit_new_with_compaction(handle_.get(), user.c_str(),
                                                              overwrite, kind);
        break;
    }
    detail::throw_if_error(result.error);
    return TableCommit(result.commit);
  }
  /// The coordinator of one logical commit whose binding takes what `flags` allow: a bitwise
  /// OR of PAIMON_WIRE_BINDING_ALLOW_DELETES, PAIMON_WIRE_BINDING_ALLOW_COMPACTION and
  /// PAIMON_WIRE_BINDING_VERIFY_COMPACTION (compaction results taken and each one verified by
  /// reading its inputs and results; throws UNSUPPORTED for tables whose compactions cannot be
  /// verified) (0 is CommitMode::Standard). An unknown bit throws INVALID_ARGUMENT.
  TableCommit new_commit_with_flags(std::string_view commit_user, bool overwrite,
                                    paimon_wire_write_kind kind, uint32_t flags) const {
    std::string user = detail::c_string(commit_user);
    paimon_wire_result_table_commit result = paimon_wire_table_commit_new_with_flags(
        handle_.get(), user.c_str(), overwrite, kind, flags);
    detail::throw_if_error(result.error);
    return TableCommit(result.commit);
  }
  const paimon_wire_table *get() const noexcept { return handle_.get(); }
  paimon_wire_table *release() noexcept { return handle_.release(); }

 private:
  detail::Owner<paimon_wire_table, paimon_wire_table_free> handle_;
};

}  // namespace paimon_wire

#endif /* PAIMON_WIRE_HPP */
