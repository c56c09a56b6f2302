/*
 * A C worker of the Java interop checks (scripts/java-interop): writes rows FROM..TO of the
 * interop table through libpaimon_wire (Arrow C Data in), prepares the commit and writes the
 * messages, serialized at VERSION without an envelope, to OUT, for a Java coordinator.
 *
 * The table and rows are those of compat/java (TableOps) and compat/rust (table.rs): columns
 * id INT, pt STRING, v STRING; row i is (i, "p" + i % 3, PREFIX + i).
 *
 * usage: worker WAREHOUSE DATABASE.TABLE COMMIT_USER FROM TO PREFIX VERSION OUT
 *
 * Builds against the checked-in header and the Arrow batch helpers of the C library's own tests
 * (crates/paimon-wire-ffi/tests/c).
 */
#include "common.h"

static void write_rows(paimon_table_write *write, int32_t from, int32_t to, const char *prefix) {
  int64_t rows = (int64_t)to - from;
  int32_t *ids = (int32_t *)checked_malloc(sizeof(int32_t) * (size_t)rows);
  char **pts = (char **)checked_malloc(sizeof(char *) * (size_t)rows);
  char **vs = (char **)checked_malloc(sizeof(char *) * (size_t)rows);
  for (int64_t i = 0; i < rows; i++) {
    int32_t id = from + (int32_t)i;
    ids[i] = id;
    pts[i] = (char *)checked_malloc(16);
    snprintf(pts[i], 16, "p%d", ((id % 3) + 3) % 3);
    vs[i] = (char *)checked_malloc(strlen(prefix) + 16);
    snprintf(vs[i], strlen(prefix) + 16, "%s%d", prefix, id);
  }
  column_spec columns[3] = {{"id", 'i', ids}, {"pt", 'u', pts}, {"v", 'u', vs}};
  struct ArrowArray array;
  struct ArrowSchema schema;
  make_batch(rows, 3, columns, &array, &schema);
  check(paimon_table_write_arrow_batch(write, &array, &schema), "paimon_table_write_arrow_batch");
  for (int64_t i = 0; i < rows; i++) {
    free(pts[i]);
    free(vs[i]);
  }
  free(pts);
  free(vs);
  free(ids);
}

int main(int argc, char **argv) {
  if (argc != 9) {
    fprintf(stderr, "usage: %s WAREHOUSE DATABASE.TABLE COMMIT_USER FROM TO PREFIX VERSION OUT\n",
            argv[0]);
    return 2;
  }
  int32_t from = atoi(argv[4]), to = atoi(argv[5]);
  int32_t version = atoi(argv[7]);
  if (to < from) {
    fprintf(stderr, "FROM %d is after TO %d\n", from, to);
    return 2;
  }
  paimon_result_table table = paimon_table_open(argv[1], argv[2], NULL, NULL, 0);
  check(table.error, "paimon_table_open");
  paimon_result_write_builder builder =
      paimon_write_builder_new(table.table, argv[3], false, PAIMON_WRITE_KIND_STANDARD);
  check(builder.error, "paimon_write_builder_new");
  paimon_result_table_write write = paimon_write_builder_new_write(builder.builder);
  check(write.error, "paimon_write_builder_new_write");
  write_rows(write.write, from, to, argv[6]);
  paimon_result_commit_messages messages = paimon_table_write_prepare_commit(write.write);
  check(messages.error, "paimon_table_write_prepare_commit");
  paimon_result_bytes payload = paimon_commit_messages_serialize_version(messages.messages, version);
  check(payload.error, "paimon_commit_messages_serialize_version");
  write_file(argv[8], payload.bytes.data, payload.bytes.len);
  paimon_result_commit_messages_summary summary = paimon_commit_messages_summarize(messages.messages);
  check(summary.error, "paimon_commit_messages_summarize");
  printf("wrote rows %d..%d: %zu message(s), version %d, %zu bytes\n", from, to,
         summary.summary.message_count, version, payload.bytes.len);

  paimon_bytes_free(payload.bytes);
  paimon_commit_messages_free(messages.messages);
  paimon_table_write_free(write.write);
  paimon_write_builder_free(builder.builder);
  paimon_table_free(table.table);
  return 0;
}
