// The round trip of libpaimon_wire from C++ through paimon_wire.hpp, against the installed
// library found with find_package(PaimonWire): a worker writes an Arrow batch into
// `db.events (id INT, name STRING)` and serializes its commit messages in an envelope; a
// coordinator decodes them bound to its table commit and commits once. (In an engine these
// are separate processes; the bytes travel between them.)
//
// Build: cmake -S . -B build -DCMAKE_PREFIX_PATH=PREFIX && cmake --build build
// Run:   build/example WAREHOUSE      (the table db.events must exist)
#include <cstdio>
#include <iostream>
#include <vector>

#include "paimon_wire.hpp"

namespace {

// A three-row batch of static buffers (Arrow C Data Interface). The release callbacks only
// mark the structs released: nothing here was allocated.
const int32_t kIds[] = {10, 20, 30};
const int32_t kNameOffsets[] = {0, 3, 6, 9};
const char kNameData[] = "onetwothr";

void release_array(ArrowArray *array) { array->release = nullptr; }
void release_schema(ArrowSchema *schema) { schema->release = nullptr; }

struct Batch {
  const void *buffers[1] = {nullptr};
  const void *id_buffers[2] = {nullptr, kIds};
  const void *name_buffers[3] = {nullptr, kNameOffsets, kNameData};
  ArrowArray id{3, 0, 0, 2, 0, id_buffers, nullptr, nullptr, release_array, nullptr};
  ArrowArray name{3, 0, 0, 3, 0, name_buffers, nullptr, nullptr, release_array, nullptr};
  ArrowArray *children[2] = {&id, &name};
  ArrowArray array{3, 0, 0, 1, 2, buffers, children, nullptr, release_array, nullptr};
  ArrowSchema id_schema{"i", "id", nullptr, 0, 0, nullptr, nullptr, release_schema, nullptr};
  ArrowSchema name_schema{"u", "name", nullptr, ARROW_FLAG_NULLABLE, 0, nullptr, nullptr,
                          release_schema, nullptr};
  ArrowSchema *schema_children[2] = {&id_schema, &name_schema};
  ArrowSchema schema{"+s", "", nullptr, 0, 2, schema_children, nullptr, release_schema, nullptr};
};

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " WAREHOUSE\n";
    return 2;
  }
  // The installed library must be the one this header describes.
  if (!paimon_wire::library_abi_matches_header()) {
    std::cerr << "libpaimon_wire has ABI " << paimon_wire::library_abi_version() << ", header "
              << PAIMON_WIRE_ABI_VERSION << "\n";
    return 1;
  }
  std::cerr << "libpaimon_wire " << paimon_wire::library_version() << " (ABI "
            << paimon_wire::library_abi_version() << ")\n";
  try {
    paimon_wire::Table table = paimon_wire::Table::open(argv[1], "db.events");

    // Worker.
    paimon_wire::TableWrite write = table.new_write_builder("example-cpp-job").new_write();
    Batch batch;
    write.write_arrow_batch(&batch.array, &batch.schema);
    paimon_wire::Bytes payload = write.prepare_commit().serialize();
    paimon_wire::Bytes framed = paimon_wire::envelope_wrap(payload, paimon_wire::serializer_version());
    std::vector<uint8_t> sent = framed.to_vector();  // what travels to the coordinator

    // Coordinator.
    paimon_wire::TableCommit commit = table.new_commit("example-cpp-job");
    paimon_wire::CommitMessages messages = commit.deserialize_envelope(sent);
    paimon_wire_commit_outcome outcome = commit.commit(messages, 1);
    paimon_wire_commit_messages_summary summary = messages.summarize();
    bool ok = outcome.status == PAIMON_WIRE_COMMIT_STATUS_COMMITTED && summary.row_count == 3;
    std::printf("%s snapshot=%lld rows=%lld\n", ok ? "committed" : "UNEXPECTED",
                static_cast<long long>(outcome.snapshot_id),
                static_cast<long long>(summary.row_count));
    return ok ? 0 : 1;
  } catch (const paimon_wire::Error &error) {
    std::cerr << "error " << static_cast<int>(error.code()) << ": " << error.what() << "\n";
    return 1;
  }
}
