// Errors of the C API come out of paimon_wire.hpp as paimon_wire::Error with the C code, and
// the owners are move-only: a moved-from owner holds NULL, which the library refuses.
//
// usage: errors WAREHOUSE   (with db.orders, an append table partitioned by dt)
#include <cstdio>
#include <functional>
#include <iostream>
#include <string>
#include <type_traits>
#include <vector>

#include "common.h"
#include "paimon_wire.hpp"

static_assert(!std::is_copy_constructible_v<paimon_wire::Table>, "owners are move-only");
static_assert(!std::is_copy_assignable_v<paimon_wire::TableWrite>, "owners are move-only");
static_assert(std::is_nothrow_move_constructible_v<paimon_wire::TableCommit>, "noexcept moves");
static_assert(!std::is_copy_constructible_v<paimon_wire::Bytes>, "owners are move-only");

static int failures = 0;
static int checks = 0;

// Runs `call`, which must throw paimon_wire::Error with `expected` and a message holding
// `needle`.
static void expect_error(const char *what, paimon_wire_error_code expected, const std::string &needle,
                         const std::function<void()> &call) {
  checks++;
  try {
    call();
    std::fprintf(stderr, "FAIL %s: no exception\n", what);
    failures++;
  } catch (const paimon_wire::Error &error) {
    if (error.code() != expected || std::string(error.what()).find(needle) == std::string::npos) {
      std::fprintf(stderr, "FAIL %s: error %d (%s), expected %d with \"%s\"\n", what,
                   static_cast<int>(error.code()), error.what(), static_cast<int>(expected),
                   needle.c_str());
      failures++;
    } else {
      std::printf("ok %s: %d %s\n", what, static_cast<int>(error.code()), error.what());
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " WAREHOUSE\n";
    return 2;
  }
  const std::string warehouse = argv[1];
  checks++;
  if (!paimon_wire::library_abi_matches_header() || paimon_wire::library_version().empty()) {
    std::fprintf(stderr, "FAIL the library's ABI %u does not match the header's %d\n",
                 paimon_wire::library_abi_version(), PAIMON_WIRE_ABI_VERSION);
    failures++;
  }
  expect_error("open a missing table", PAIMON_WIRE_ERROR_CODE_TABLE_NOT_FOUND, "",
               [&] { paimon_wire::Table::open(warehouse, "db.missing"); });
  expect_error("open a name without a database", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "",
               [&] { paimon_wire::Table::open(warehouse, "nodot"); });

  {
    // Table::create from a batch's schema: a new table of those columns; the existing one is
    // refused unless ignore_if_exists; the schema stays the caller's.
    const char *partitions[] = {"2024-01-01"};
    ArrowArray array;
    ArrowSchema schema;
    make_orders(0, 1, partitions, 1, &array, &schema);
    paimon_wire::Table created = paimon_wire::Table::create(
        warehouse, "db.created", schema, {"dt"}, {"dt", "id"}, {{"bucket", "2"}});
    checks++;
    if (created.routing().kind != PAIMON_WIRE_ROUTING_KIND_FIXED_BUCKET ||
        created.routing().buckets != 2) {
      std::fprintf(stderr, "FAIL Table::create: not a table of 2 fixed buckets\n");
      failures++;
    }
    expect_error("create an existing table", PAIMON_WIRE_ERROR_CODE_PAIMON, "already exists",
                 [&] { paimon_wire::Table::create(warehouse, "db.orders", schema, {"dt"}); });
    paimon_wire::Table::create(warehouse, "db.orders", schema, {"dt"}, {}, {}, {}, true);
    checks++;
    if (schema.release == nullptr) {
      std::fprintf(stderr, "FAIL Table::create released the caller's schema\n");
      failures++;
    }
    schema.release(&schema);
    array.release(&array);
  }

  paimon_wire::Table table = paimon_wire::Table::open(warehouse, "db.orders");
  expect_error("bucket ids of a bucket-unaware table", PAIMON_WIRE_ERROR_CODE_UNSUPPORTED, "", [&] {
    const char *partitions[] = {"2024-01-01"};
    ArrowArray array;
    ArrowSchema schema;
    make_orders(0, 3, partitions, 1, &array, &schema);
    table.bucket_ids(&array, &schema);
  });
  expect_error("assigner ids of a table without dynamic buckets", PAIMON_WIRE_ERROR_CODE_UNSUPPORTED,
               "bucket = -1", [&] {
                 const char *partitions[] = {"2024-01-01"};
                 ArrowArray array;
                 ArrowSchema schema;
                 make_orders(0, 3, partitions, 1, &array, &schema);
                 table.assigner_ids(&array, &schema, 2);
               });
  expect_error("an assigner of a table without dynamic buckets", PAIMON_WIRE_ERROR_CODE_UNSUPPORTED,
               "bucket = -1", [&] { table.new_write_builder("job").new_assigner(0, 2); });
  expect_error("an unknown write kind", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "", [&] {
    table.new_write_builder("job", false, static_cast<paimon_wire_write_kind>(42));
  });

  expect_error("an empty commit user for a writer", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "",
               [&] { table.new_write_builder(""); });
  expect_error("an empty commit user for a commit", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "",
               [&] { table.new_commit(""); });
  expect_error("an unknown binding flag", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "unknown bits 0x8",
               [&] {
                 table.new_commit_with_flags("job", false, PAIMON_WIRE_WRITE_KIND_STANDARD,
                                             PAIMON_WIRE_BINDING_ALLOW_COMPACTION | 8u);
               });

  paimon_wire::WriteBuilder builder = table.new_write_builder("job");
  paimon_wire::TableWrite write = builder.new_write();
  expect_error("an Arrow batch already released", PAIMON_WIRE_ERROR_CODE_ARROW, "", [&] {
    ArrowArray array{};
    ArrowSchema schema{};
    write.write_arrow_batch(&array, &schema);
  });

  paimon_wire::TableWrite fresh = builder.new_write();
  paimon_wire::CommitMessages prepared = fresh.prepare_commit();
  paimon_wire::TableCommit commit = table.new_commit("job");
  expect_error("merge of prepared (unbound) messages", PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES, "",
               [&] { commit.merge({&prepared}); });
  expect_error("serialize at an unknown version", PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, "",
               [&] { prepared.serialize(999); });
  const std::vector<uint8_t> garbage = {1, 2, 3, 4, 5, 6, 7};
  expect_error("deserialize a truncated payload", PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "",
               [&] { commit.deserialize(garbage, paimon_wire::serializer_version()); });
  expect_error("deserialize at an unknown version", PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, "",
               [&] { commit.deserialize(garbage, 999); });
  expect_error("unwrap bytes that are no envelope", PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "",
               [&] { paimon_wire::envelope_unwrap(garbage); });
  expect_error("wrap at version 0", PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, "",
               [&] { paimon_wire::envelope_wrap(garbage, 0); });

  // Settings refused by the C library, and a decode limit the payload exceeds.
  expect_error("a blocking pool of no threads", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "",
               [&] { paimon_wire::TableOptions().runtime_threads(0, 0); });
  expect_error("an empty thread name prefix", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "",
               [&] { paimon_wire::TableOptions().thread_name_prefix(""); });
  expect_error("an empty table option key", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "",
               [&] { paimon_wire::TableOptions().table_option("", "zstd"); });
  expect_error("a HASH index budget of 0", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "`bytes` is 0",
               [&] { paimon_wire::TableOptions().hash_index_budget(0); });
  expect_error("a log level above TRACE", PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "",
               [&] { paimon_wire::set_log_callback(nullptr, nullptr, 6); });
  expect_error("a payload beyond the decode limit", PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED, "", [&] {
    paimon_wire::TableOptions tight;
    tight.decode_limits(1, 10, 10);
    paimon_wire::Table limited = paimon_wire::Table::open(warehouse, "db.orders", {}, &tight);
    paimon_wire::Bytes bytes = prepared.serialize();
    limited.new_commit("job").deserialize(bytes, paimon_wire::serializer_version());
  });
  paimon_wire::set_log_callback(nullptr, nullptr, 0);

  // A split set given without one of its payloads.
  expect_error("a split set with a payload missing", PAIMON_WIRE_ERROR_CODE_SPLIT_SET_INCOMPLETE,
               "missing (index 1)", [&] {
                 paimon_wire::Payloads payloads = prepared.serialize_split(paimon_wire::serializer_version(), 256);
                 commit.deserialize_parts({{payloads[0], 0, 2}}, paimon_wire::serializer_version());
               });

  // Many payloads decoded at once, the second cut short: the error names it.
  expect_error("deserialize_all with payload 1 cut short", PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD,
               "payload 1 (counting from 0 in the order given)", [&] {
                 const int32_t version = paimon_wire::serializer_version();
                 paimon_wire::Bytes whole = prepared.serialize();
                 paimon_wire::ByteView cut(whole.data(), whole.size() / 2);
                 commit.deserialize_all({{whole, version}, {cut, version}});
               });

  // A moved-from owner holds NULL; the library refuses it with NULL_POINTER.
  paimon_wire::TableCommit moved = std::move(commit);
  if (commit.get() != nullptr || moved.get() == nullptr) {
    std::fprintf(stderr, "FAIL a move leaves the source empty\n");
    failures++;
  }
  expect_error("a moved-from table commit", PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "",
               [&] { commit.commit(prepared, 1); });

  // The envelope round trip still works after all that (the owners are intact).
  paimon_wire::Bytes payload = prepared.serialize();
  paimon_wire::Bytes framed = paimon_wire::envelope_wrap(payload, paimon_wire::serializer_version());
  paimon_wire::CommitMessages decoded = moved.deserialize_envelope(framed);
  paimon_wire_commit_outcome outcome = moved.commit(decoded, 1);
  if (outcome.status != PAIMON_WIRE_COMMIT_STATUS_NOTHING_TO_COMMIT) {
    std::fprintf(stderr, "FAIL an empty commit reports status %d\n", static_cast<int>(outcome.status));
    failures++;
  }
  std::printf("checks=%d failures=%d\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
