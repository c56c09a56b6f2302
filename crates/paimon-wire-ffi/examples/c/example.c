/*
 * The whole round trip of libpaimon_wire in one C program, against the installed library:
 * a worker writes an Arrow batch into table `db.events (id INT, name STRING)` and serializes
 * its commit messages into payloads of at most 1 MiB (an RPC frame limit); a coordinator decodes
 * the payloads bound to its table commit and commits once.
 * In an engine the worker and the coordinator are different processes and the bytes travel
 * between them; here they are one.
 *
 * Build: make PKG_CONFIG_PATH=PREFIX/lib/pkgconfig   (see Makefile)
 * Run:   ./example WAREHOUSE       (the table db.events must exist)
 */
#include <stdio.h>
#include <stdlib.h>

#include "paimon_wire.h"

/* A three-row batch of static buffers, exported through the Arrow C Data Interface. The
 * release callbacks only mark the structs released: nothing here was allocated. */
static const int32_t ids[] = {1, 2, 3};
static const int32_t name_offsets[] = {0, 5, 10, 15};
static const char name_data[] = "alphabravocharl";

static void release_array(struct ArrowArray *array) { array->release = NULL; }
static void release_schema(struct ArrowSchema *schema) { schema->release = NULL; }

struct batch {
  struct ArrowArray array, id, name;
  struct ArrowSchema schema, id_schema, name_schema;
  struct ArrowArray *children[2];
  struct ArrowSchema *schema_children[2];
  const void *buffers[1], *id_buffers[2], *name_buffers[3];
};

static void make_batch(struct batch *b) {
  b->id_buffers[0] = NULL;
  b->id_buffers[1] = ids;
  b->name_buffers[0] = NULL;
  b->name_buffers[1] = name_offsets;
  b->name_buffers[2] = name_data;
  b->buffers[0] = NULL;
  b->id = (struct ArrowArray){3, 0, 0, 2, 0, b->id_buffers, NULL, NULL, release_array, NULL};
  b->name = (struct ArrowArray){3, 0, 0, 3, 0, b->name_buffers, NULL, NULL, release_array, NULL};
  b->children[0] = &b->id;
  b->children[1] = &b->name;
  b->array = (struct ArrowArray){3, 0, 0, 1, 2, b->buffers, b->children, NULL, release_array, NULL};
  b->id_schema = (struct ArrowSchema){"i", "id", NULL, 0, 0, NULL, NULL, release_schema, NULL};
  b->name_schema =
      (struct ArrowSchema){"u", "name", NULL, ARROW_FLAG_NULLABLE, 0, NULL, NULL, release_schema, NULL};
  b->schema_children[0] = &b->id_schema;
  b->schema_children[1] = &b->name_schema;
  b->schema = (struct ArrowSchema){"+s", "", NULL, 0, 2, b->schema_children, NULL, release_schema, NULL};
}

/* Prints and frees `error`, and exits, when a call failed. */
static void check(paimon_wire_error *error, const char *what) {
  if (error == NULL) return;
  fprintf(stderr, "%s failed: error %d: %s\n", what, (int)error->code, error->message);
  paimon_wire_error_free(error);
  exit(1);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WAREHOUSE\n", argv[0]);
    return 2;
  }
  /* The installed library must be the one this header describes. */
  if (paimon_wire_abi_version() != PAIMON_WIRE_ABI_VERSION) {
    fprintf(stderr, "libpaimon_wire has ABI %u, the header %d\n", paimon_wire_abi_version(),
            PAIMON_WIRE_ABI_VERSION);
    return 1;
  }
  fprintf(stderr, "libpaimon_wire %s (ABI %u)\n", paimon_wire_version(), paimon_wire_abi_version());
  paimon_wire_result_table table = paimon_wire_table_open(argv[1], "db.events", NULL, NULL, 0);
  check(table.error, "paimon_wire_table_open");

  /* Worker: write a batch, prepare the commit, serialize the messages into payloads of at most
   * 1 MiB each (here one: three rows). Each goes to the coordinator with its index, the count
   * and the serializer version. */
  paimon_wire_result_write_builder builder =
      paimon_wire_write_builder_new(table.table, "example-job", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(builder.error, "paimon_wire_write_builder_new");
  paimon_wire_result_table_write write = paimon_wire_write_builder_new_write(builder.builder);
  check(write.error, "paimon_wire_write_builder_new_write");
  struct batch batch;
  make_batch(&batch);
  check(paimon_wire_table_write_arrow_batch(write.write, &batch.array, &batch.schema), "write");
  paimon_wire_result_commit_messages prepared = paimon_wire_table_write_prepare_commit(write.write);
  check(prepared.error, "paimon_wire_table_write_prepare_commit");
  int32_t version = paimon_wire_commit_messages_serializer_version();
  paimon_wire_result_payloads payloads =
      paimon_wire_commit_messages_serialize_split(prepared.messages, version, 1 << 20);
  check(payloads.error, "paimon_wire_commit_messages_serialize_split");

  /* Coordinator: decode the payloads as one worker's set, bound to a table commit (a set with a
   * payload missing is refused), and commit once. */
  paimon_wire_result_table_commit commit =
      paimon_wire_table_commit_new(table.table, "example-job", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(commit.error, "paimon_wire_table_commit_new");
  size_t count = payloads.payloads.count;
  paimon_wire_payload_part *parts = calloc(count, sizeof(paimon_wire_payload_part));
  if (parts == NULL) return 1;
  for (size_t i = 0; i < count; i++) {
    paimon_wire_bytes item = payloads.payloads.items[i];
    parts[i] = (paimon_wire_payload_part){item.data, item.len, (uint32_t)i, (uint32_t)count};
  }
  paimon_wire_result_commit_messages decoded =
      paimon_wire_commit_messages_deserialize_parts(commit.commit, parts, count, version);
  check(decoded.error, "paimon_wire_commit_messages_deserialize_parts");
  free(parts);
  paimon_wire_result_commit result = paimon_wire_table_commit_commit(commit.commit, decoded.messages, 1);
  check(result.error, "paimon_wire_table_commit_commit");
  paimon_wire_result_commit_messages_summary summary = paimon_wire_commit_messages_summarize(decoded.messages);
  check(summary.error, "paimon_wire_commit_messages_summarize");

  int ok = result.outcome.status == PAIMON_WIRE_COMMIT_STATUS_COMMITTED && summary.summary.row_count == 3;
  printf("%s snapshot=%lld rows=%lld\n", ok ? "committed" : "UNEXPECTED",
         (long long)result.outcome.snapshot_id, (long long)summary.summary.row_count);

  paimon_wire_commit_messages_free(decoded.messages);
  paimon_wire_table_commit_free(commit.commit);
  paimon_wire_payloads_free(payloads.payloads);
  paimon_wire_commit_messages_free(prepared.messages);
  paimon_wire_table_write_free(write.write);
  paimon_wire_write_builder_free(builder.builder);
  paimon_wire_table_free(table.table);
  return ok ? 0 : 1;
}
