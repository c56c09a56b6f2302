/*
 * A C worker of the Java interop checks (scripts/java-interop): writes rows FROM..TO of the
 * interop table through libpaimon_wire (Arrow C Data in), prepares the commit and writes the
 * messages, serialized at VERSION without an envelope, to OUT, for a Java coordinator.
 *
 * The table and rows are those of compat/java (TableOps) and compat/rust (table.rs): columns
 * id INT, pt STRING, v STRING; row i is (i, "p" + i % 3, PREFIX + i).
 *
 * usage: worker WAREHOUSE DATABASE.TABLE COMMIT_USER FROM TO PREFIX VERSION OUT [OPTIONS_FILE]
 *
 * OPTIONS_FILE holds catalog options for paimon_wire_table_open, one KEY=VALUE a line (blank lines
 * and lines starting with '#' skipped), the file `paimon-wire --options-file` reads: for an
 * s3:// warehouse the endpoint, region, path-style flag and keys. Values are never printed.
 *
 * Builds against the checked-in header and the Arrow batch helpers of the C library's own tests
 * (crates/paimon-wire-ffi/tests/c).
 */
#include "common.h"

static void write_rows(paimon_wire_table_write *write, int32_t from, int32_t to, const char *prefix) {
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
  check(paimon_wire_table_write_arrow_batch(write, &array, &schema), "paimon_wire_table_write_arrow_batch");
  for (int64_t i = 0; i < rows; i++) {
    free(pts[i]);
    free(vs[i]);
  }
  free(pts);
  free(vs);
  free(ids);
}

#define MAX_OPTIONS 64

/* Reads OPTIONS_FILE into keys/values (pointers into *text, which the caller frees); returns
 * the number of options. Exits on a line without '='. */
static size_t read_options(const char *path, char **text, const char **keys, const char **values) {
  size_t len = 0;
  uint8_t *data = read_file(path, &len);
  char *buf = (char *)checked_malloc(len + 1);
  memcpy(buf, data, len);
  buf[len] = '\0';
  free(data);
  *text = buf;
  size_t count = 0;
  int line_no = 0;
  for (char *line = buf; line != NULL && *line != '\0';) {
    char *next = strchr(line, '\n');
    if (next != NULL) *next++ = '\0';
    line_no++;
    size_t n = strlen(line);
    if (n > 0 && line[n - 1] == '\r') line[n - 1] = '\0';
    while (*line == ' ' || *line == '\t') line++;
    if (*line != '\0' && *line != '#') {
      char *eq = strchr(line, '=');
      if (eq == NULL || eq == line || count == MAX_OPTIONS) {
        fprintf(stderr, "%s: line %d: expected KEY=VALUE (at most %d options)\n", path, line_no,
                MAX_OPTIONS);
        exit(2);
      }
      *eq = '\0';
      keys[count] = line;
      values[count] = eq + 1;
      count++;
    }
    line = next;
  }
  return count;
}

int main(int argc, char **argv) {
  if (argc != 9 && argc != 10) {
    fprintf(stderr,
            "usage: %s WAREHOUSE DATABASE.TABLE COMMIT_USER FROM TO PREFIX VERSION OUT "
            "[OPTIONS_FILE]\n",
            argv[0]);
    return 2;
  }
  int32_t from = atoi(argv[4]), to = atoi(argv[5]);
  int32_t version = atoi(argv[7]);
  if (to < from) {
    fprintf(stderr, "FROM %d is after TO %d\n", from, to);
    return 2;
  }
  const char *keys[MAX_OPTIONS];
  const char *values[MAX_OPTIONS];
  char *options_text = NULL;
  size_t option_count = argc == 10 ? read_options(argv[9], &options_text, keys, values) : 0;
  paimon_wire_result_table table = paimon_wire_table_open(argv[1], argv[2], keys, values, option_count);
  free(options_text);
  check(table.error, "paimon_wire_table_open");
  paimon_wire_result_write_builder builder =
      paimon_wire_write_builder_new(table.table, argv[3], false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(builder.error, "paimon_wire_write_builder_new");
  paimon_wire_result_table_write write = paimon_wire_write_builder_new_write(builder.builder);
  check(write.error, "paimon_wire_write_builder_new_write");
  write_rows(write.write, from, to, argv[6]);
  paimon_wire_result_commit_messages messages = paimon_wire_table_write_prepare_commit(write.write);
  check(messages.error, "paimon_wire_table_write_prepare_commit");
  paimon_wire_result_bytes payload = paimon_wire_commit_messages_serialize_version(messages.messages, version);
  check(payload.error, "paimon_wire_commit_messages_serialize_version");
  write_file(argv[8], payload.bytes.data, payload.bytes.len);
  paimon_wire_result_commit_messages_summary summary = paimon_wire_commit_messages_summarize(messages.messages);
  check(summary.error, "paimon_wire_commit_messages_summarize");
  printf("wrote rows %d..%d: %zu message(s), version %d, %zu bytes\n", from, to,
         summary.summary.message_count, version, payload.bytes.len);

  paimon_wire_bytes_free(payload.bytes);
  paimon_wire_commit_messages_free(messages.messages);
  paimon_wire_table_write_free(write.write);
  paimon_wire_write_builder_free(builder.builder);
  paimon_wire_table_free(table.table);
  return 0;
}
