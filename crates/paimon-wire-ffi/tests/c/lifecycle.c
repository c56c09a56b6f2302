/*
 * The whole lifecycle in one process (so it can run under valgrind): create the table, write, prepare,
 * serialize, deserialize through a table commit, merge, commit once, commit the same
 * identifier again (already committed), commit nothing, then abort a second write and
 * discard a third. Prints what it committed for the Rust test to check against the table.
 *
 * usage: lifecycle WAREHOUSE   (an empty warehouse: it creates db.orders, append, partitioned by dt)
 */
#include <stdbool.h>
#include <string.h>

#include "common.h"

static const char *const PARTS[] = {"2024-01-01", "2024-01-02", "2024-01-03"};

static void fail(const char *what) {
  fprintf(stderr, "FAIL %s\n", what);
  exit(1);
}

/* Writes rows first_id.. and returns the serialized messages at `version`. */
static paimon_wire_bytes write_and_serialize(const paimon_wire_write_builder *builder, int64_t first_id,
                                        int64_t rows, int32_t version) {
  paimon_wire_result_table_write write = paimon_wire_write_builder_new_write(builder);
  check(write.error, "paimon_wire_write_builder_new_write");
  write_orders(write.write, first_id, rows, PARTS, 3);
  paimon_wire_result_commit_messages messages = paimon_wire_table_write_prepare_commit(write.write);
  check(messages.error, "paimon_wire_table_write_prepare_commit");
  paimon_wire_result_bytes payload = paimon_wire_commit_messages_serialize_version(messages.messages, version);
  check(payload.error, "paimon_wire_commit_messages_serialize_version");
  paimon_wire_commit_messages_free(messages.messages);
  paimon_wire_table_write_free(write.write);
  return payload.bytes;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WAREHOUSE\n", argv[0]);
    return 2;
  }
  /* The table's columns are those of the batches it will take: one batch's schema. */
  struct ArrowArray one_row;
  struct ArrowSchema columns;
  make_orders(0, 1, PARTS, 3, &one_row, &columns);
  const char *partition_keys[] = {"dt"};
  paimon_wire_result_table created = paimon_wire_table_create(
      argv[1], "db.orders", &columns, partition_keys, 1, NULL, 0, NULL, NULL, 0, NULL, NULL, 0, false);
  check(created.error, "paimon_wire_table_create");
  paimon_wire_table_free(created.table);
  /* It exists now: refused, unless told to open it as it is. */
  paimon_wire_result_table again = paimon_wire_table_create(
      argv[1], "db.orders", &columns, partition_keys, 1, NULL, 0, NULL, NULL, 0, NULL, NULL, 0, false);
  if (again.error == NULL || again.error->code != PAIMON_WIRE_ERROR_CODE_PAIMON ||
      strstr(again.error->message, "already exists") == NULL)
    fail("creating an existing table is refused");
  paimon_wire_error_free(again.error);
  again = paimon_wire_table_create(argv[1], "db.orders", &columns, partition_keys, 1, NULL, 0, NULL,
                                   NULL, 0, NULL, NULL, 0, true);
  check(again.error, "paimon_wire_table_create, ignoring that it exists");
  paimon_wire_table_free(again.table);
  /* create read the schema and did not take it: the caller releases both. */
  columns.release(&columns);
  one_row.release(&one_row);

  paimon_wire_result_table table = paimon_wire_table_open(argv[1], "db.orders", NULL, NULL, 0);
  check(table.error, "paimon_wire_table_open");
  paimon_wire_result_write_builder builder =
      paimon_wire_write_builder_new(table.table, "life", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(builder.error, "paimon_wire_write_builder_new");
  paimon_wire_result_table_commit commit =
      paimon_wire_table_commit_new(table.table, "life", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(commit.error, "paimon_wire_table_commit_new");
  /* The table handle may go before the handles made from it. */
  paimon_wire_table_free(table.table);

  /* Two writers, as two workers would; their payloads are merged. */
  int32_t version = paimon_wire_commit_messages_serializer_version();
  paimon_wire_bytes first = write_and_serialize(builder.builder, 0, 60, version);
  paimon_wire_bytes second = write_and_serialize(builder.builder, 60, 40, version);
  paimon_wire_result_commit_messages a =
      paimon_wire_commit_messages_deserialize(commit.commit, first.data, first.len, version);
  check(a.error, "deserialize first");
  paimon_wire_result_commit_messages b =
      paimon_wire_commit_messages_deserialize(commit.commit, second.data, second.len, version);
  check(b.error, "deserialize second");
  /* The first part twice: a worker retry, kept once. */
  const paimon_wire_commit_messages *parts[3] = {a.messages, b.messages, a.messages};
  paimon_wire_result_commit_messages merged = paimon_wire_table_commit_merge(commit.commit, parts, 3);
  check(merged.error, "paimon_wire_table_commit_merge");
  paimon_wire_result_commit_messages_summary summary = paimon_wire_commit_messages_summarize(merged.messages);
  check(summary.error, "summarize");
  if (summary.summary.row_count != 100) fail("merge keeps a retried part once");

  paimon_wire_result_commit done = paimon_wire_table_commit_commit(commit.commit, merged.messages, 1);
  check(done.error, "commit");
  if (done.outcome.status != PAIMON_WIRE_COMMIT_STATUS_COMMITTED || done.outcome.snapshot_id != 1)
    fail("first commit makes snapshot 1");
  done = paimon_wire_table_commit_commit(commit.commit, merged.messages, 1);
  check(done.error, "commit again");
  if (done.outcome.status != PAIMON_WIRE_COMMIT_STATUS_ALREADY_COMMITTED ||
      done.outcome.snapshot_id != 1)
    fail("the same identifier again is already committed in snapshot 1");
  printf("committed snapshot=%lld data_files=%zu rows=%lld\n",
         (long long)done.outcome.snapshot_id, summary.summary.data_file_count,
         (long long)summary.summary.row_count);

  paimon_wire_result_commit_messages nothing = paimon_wire_table_commit_merge(commit.commit, NULL, 0);
  check(nothing.error, "merge nothing");
  done = paimon_wire_table_commit_commit(commit.commit, nothing.messages, 2);
  check(done.error, "commit nothing");
  if (done.outcome.status != PAIMON_WIRE_COMMIT_STATUS_NOTHING_TO_COMMIT) fail("nothing to commit");

  /* An abandoned write: abort deletes the files its messages name. */
  paimon_wire_bytes abandoned = write_and_serialize(builder.builder, 1000, 30, version);
  paimon_wire_result_commit_messages dropped =
      paimon_wire_commit_messages_deserialize(commit.commit, abandoned.data, abandoned.len, version);
  check(dropped.error, "deserialize abandoned");
  check(paimon_wire_table_commit_abort(commit.commit, dropped.messages), "paimon_wire_table_commit_abort");
  printf("aborted\n");

  /* A writer freed before prepare_commit discards what it wrote. */
  paimon_wire_result_table_write discarded = paimon_wire_write_builder_new_write(builder.builder);
  check(discarded.error, "new_write");
  write_orders(discarded.write, 2000, 30, PARTS, 3);
  paimon_wire_table_write_free(discarded.write);

  paimon_wire_commit_messages_free(dropped.messages);
  paimon_wire_commit_messages_free(nothing.messages);
  paimon_wire_commit_messages_free(merged.messages);
  paimon_wire_commit_messages_free(a.messages);
  paimon_wire_commit_messages_free(b.messages);
  paimon_wire_bytes_free(abandoned);
  paimon_wire_bytes_free(first);
  paimon_wire_bytes_free(second);
  paimon_wire_table_commit_free(commit.commit);
  paimon_wire_write_builder_free(builder.builder);
  return 0;
}
