// A backend as Apache Doris runs one, through paimon_wire.hpp against the installed library:
// it writes rows FROM..TO of a table into Paimon files, prepares the commit and hands its
// commit messages to the frontend as a DPCM frame (magic "DPCM", the serializer version and
// the body length as big-endian int32, then Java's serializeList body), written to OUT. The
// frontend, a Java program (compat/java: `frontend`) or paimon-wire's coordinator, commits
// every backend's frames once.
//
// The table has the columns id INT NOT NULL, pt STRING NOT NULL, v STRING; row i is
// (i, "p" + i % 3, PREFIX + i). Append, fixed-bucket primary-key and dynamic-bucket tables
// are written alike; with assigner:W/N the backend is dynamic-bucket assigner W of N and
// writes only the rows the table routes to W; with `overwrite` it writes for INSERT
// OVERWRITE (its files replace the partitions it writes, so it ignores their old files).
//
// Build: cmake -S . -B build -DCMAKE_PREFIX_PATH=PREFIX && cmake --build build
// Run:   build/doris_backend WAREHOUSE DB.TABLE COMMIT_USER FROM TO PREFIX VERSION OUT
//                            [assigner:W/N] [overwrite]
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "paimon_wire.hpp"

namespace {

// One Arrow batch (C Data Interface) that owns its buffers. The consumer releases the array
// and the schema once each; the second release frees the batch.
struct Batch {
  std::vector<int32_t> ids;
  std::vector<int32_t> pt_offsets{0};
  std::string pt_data;
  std::vector<int32_t> v_offsets{0};
  std::string v_data;
  int releases_left = 2;

  const void *struct_buffers[1] = {nullptr};
  const void *id_buffers[2] = {nullptr, nullptr};
  const void *pt_buffers[3] = {nullptr, nullptr, nullptr};
  const void *v_buffers[3] = {nullptr, nullptr, nullptr};
  ArrowArray id{}, pt{}, v{}, array{};
  ArrowArray *children[3] = {&id, &pt, &v};
  ArrowSchema id_schema{}, pt_schema{}, v_schema{}, schema{};
  ArrowSchema *schema_children[3] = {&id_schema, &pt_schema, &v_schema};
};

void release_child_array(ArrowArray *array) { array->release = nullptr; }
void release_child_schema(ArrowSchema *schema) { schema->release = nullptr; }

void release_batch(Batch *batch) {
  if (--batch->releases_left == 0) delete batch;
}
void release_array(ArrowArray *array) {
  Batch *batch = static_cast<Batch *>(array->private_data);
  array->release = nullptr;
  release_batch(batch);
}
void release_schema(ArrowSchema *schema) {
  Batch *batch = static_cast<Batch *>(schema->private_data);
  schema->release = nullptr;
  release_batch(batch);
}

// The rows of `ids` as a new batch; pass &batch->array and &batch->schema to a call that
// takes ownership of them.
Batch *make_batch(const std::vector<int32_t> &ids, const std::string &prefix) {
  Batch *b = new Batch();
  b->ids = ids;
  for (int32_t id : ids) {
    b->pt_data += "p" + std::to_string(((id % 3) + 3) % 3);
    b->pt_offsets.push_back(static_cast<int32_t>(b->pt_data.size()));
    b->v_data += prefix + std::to_string(id);
    b->v_offsets.push_back(static_cast<int32_t>(b->v_data.size()));
  }
  const int64_t n = static_cast<int64_t>(ids.size());
  b->id_buffers[1] = b->ids.data();
  b->pt_buffers[1] = b->pt_offsets.data();
  b->pt_buffers[2] = b->pt_data.data();
  b->v_buffers[1] = b->v_offsets.data();
  b->v_buffers[2] = b->v_data.data();
  b->id = {n, 0, 0, 2, 0, b->id_buffers, nullptr, nullptr, release_child_array, nullptr};
  b->pt = {n, 0, 0, 3, 0, b->pt_buffers, nullptr, nullptr, release_child_array, nullptr};
  b->v = {n, 0, 0, 3, 0, b->v_buffers, nullptr, nullptr, release_child_array, nullptr};
  b->array = {n, 0, 0, 1, 3, b->struct_buffers, b->children, nullptr, release_array, b};
  b->id_schema = {"i", "id", nullptr, 0, 0, nullptr, nullptr, release_child_schema, nullptr};
  b->pt_schema = {"u", "pt", nullptr, 0, 0, nullptr, nullptr, release_child_schema, nullptr};
  b->v_schema = {"u", "v", nullptr, ARROW_FLAG_NULLABLE, 0, nullptr, nullptr,
                 release_child_schema, nullptr};
  b->schema = {"+s", "", nullptr, 0, 3, b->schema_children, nullptr, release_schema, b};
  return b;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 9 || argc > 11) {
    std::cerr << "usage: " << argv[0]
              << " WAREHOUSE DB.TABLE COMMIT_USER FROM TO PREFIX VERSION OUT [assigner:W/N]"
                 " [overwrite]\n";
    return 2;
  }
  const int32_t from = std::atoi(argv[4]);
  const int32_t to = std::atoi(argv[5]);
  const std::string prefix = argv[6];
  const int32_t version = std::atoi(argv[7]);
  int assigner = 0, assigners = 0;
  bool overwrite = false;
  for (int a = 9; a < argc; a++) {
    if (std::strcmp(argv[a], "overwrite") == 0) {
      overwrite = true;
    } else if (std::sscanf(argv[a], "assigner:%d/%d", &assigner, &assigners) != 2 ||
               assigners <= 0 || assigner < 0 || assigner >= assigners) {
      std::cerr << "expected assigner:W/N with 0 <= W < N or overwrite, got " << argv[a] << "\n";
      return 2;
    }
  }
  try {
    paimon_wire::Table table = paimon_wire::Table::open(argv[1], argv[2]);
    std::vector<int32_t> ids;
    for (int32_t id = from; id < to; id++) ids.push_back(id);
    paimon_wire::WriteBuilder builder = table.new_write_builder(argv[3], overwrite);
    if (assigners > 0) {
      // A dynamic-bucket table: this backend writes the rows whose bucket its assigner owns.
      Batch *all = make_batch(ids, prefix);
      std::vector<int32_t> owners = table.assigner_ids(&all->array, &all->schema, assigners);
      std::vector<int32_t> mine;
      for (size_t i = 0; i < ids.size(); i++) {
        if (owners[i] == assigner) mine.push_back(ids[i]);
      }
      ids = mine;
      builder = builder.new_assigner(assigner, assigners);
    }
    paimon_wire::TableWrite write = builder.new_write();
    Batch *batch = make_batch(ids, prefix);
    write.write_arrow_batch(&batch->array, &batch->schema);
    paimon_wire::CommitMessages messages = write.prepare_commit();
    paimon_wire::Bytes frame = messages.serialize_framed(version, PAIMON_WIRE_FRAME_DPCM);
    std::vector<uint8_t> bytes = frame.to_vector();
    std::ofstream out(argv[8], std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::cerr << "cannot write " << argv[8] << "\n";
      return 1;
    }
    paimon_wire_commit_messages_summary summary = messages.summarize();
    std::printf("backend wrote %zu row(s) of %d..%d: %zu message(s), DPCM frame of %zu bytes, version %d\n",
                ids.size(), from, to, summary.message_count, bytes.size(), version);
    return 0;
  } catch (const paimon_wire::Error &error) {
    std::cerr << "error " << static_cast<int>(error.code()) << ": " << error.what() << "\n";
    return 1;
  }
}
