/*
 * A C worker of the Java interop checks (scripts/java-interop): writes rows FROM..TO of the
 * interop table through libpaimon_wire (Arrow C Data in), prepares the commit and writes the
 * messages, serialized at VERSION without an envelope, to OUT, for a Java coordinator.
 *
 * The table and rows are those of compat/java (TableOps) and compat/rust (table.rs): columns
 * id INT, pt STRING, v STRING; row i is (i, "p" + i % 3, PREFIX + i).
 *
 * usage: worker WAREHOUSE DATABASE.TABLE COMMIT_USER FROM TO PREFIX VERSION OUT [OPTIONS_FILE]
 *               [assigner:W/N]
 *
 * With assigner:W/N the worker is dynamic-bucket assigner W of N of a dynamic-bucket table
 * (paimon_wire_write_builder_new_assigner) and writes only the rows of FROM..TO that
 * paimon_wire_table_assigner_ids routes to W.
 *
 * OPTIONS_FILE holds catalog options for paimon_wire_table_open, one KEY=VALUE a line (blank lines
 * and lines starting with '#' skipped), the file `paimon-wire --options-file` reads: for an
 * s3:// warehouse the endpoint, region, path-style flag and keys. Values are never printed.
 *
 * Builds against the checked-in header and the Arrow batch helpers of the C library's own tests
 * (crates/paimon-wire-ffi/tests/c).
 */
#include "common.h"

/* Rows `(id, "p" + id % 3, PREFIX + id)` of the given ids, as column buffers. */
typedef struct {
  int64_t n;
  int32_t *ids;
  char **pts;
  char **vs;
} rows_t;

static rows_t make_rows(const int32_t *ids, int64_t n, const char *prefix) {
  rows_t r = {n, (int32_t *)checked_malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1)),
              (char **)checked_malloc(sizeof(char *) * (size_t)(n > 0 ? n : 1)),
              (char **)checked_malloc(sizeof(char *) * (size_t)(n > 0 ? n : 1))};
  for (int64_t i = 0; i < n; i++) {
    int32_t id = ids[i];
    r.ids[i] = id;
    r.pts[i] = (char *)checked_malloc(16);
    snprintf(r.pts[i], 16, "p%d", ((id % 3) + 3) % 3);
    r.vs[i] = (char *)checked_malloc(strlen(prefix) + 16);
    snprintf(r.vs[i], strlen(prefix) + 16, "%s%d", prefix, id);
  }
  return r;
}

static void rows_batch(rows_t *r, struct ArrowArray *array, struct ArrowSchema *schema) {
  column_spec columns[3] = {{"id", 'i', r->ids}, {"pt", 'u', r->pts}, {"v", 'u', r->vs}};
  make_batch(r->n, 3, columns, array, schema);
}

static void free_rows(rows_t *r) {
  for (int64_t i = 0; i < r->n; i++) {
    free(r->pts[i]);
    free(r->vs[i]);
  }
  free(r->pts);
  free(r->vs);
  free(r->ids);
}

/* Writes rows FROM..TO; with `assigners` N > 0 only those whose dynamic-bucket assigner
 * (paimon_wire_table_assigner_ids) is `assigner` of N. Returns the number of rows written. */
static int64_t write_rows(const paimon_wire_table *table, paimon_wire_table_write *write,
                          int32_t from, int32_t to, const char *prefix, int assigner,
                          int assigners) {
  int64_t n = (int64_t)to - from;
  int32_t *ids = (int32_t *)checked_malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
  for (int64_t i = 0; i < n; i++) ids[i] = from + (int32_t)i;
  if (assigners > 0 && n > 0) {
    rows_t all = make_rows(ids, n, prefix);
    struct ArrowArray array;
    struct ArrowSchema schema;
    rows_batch(&all, &array, &schema);
    int32_t *owners = (int32_t *)checked_malloc(sizeof(int32_t) * (size_t)n);
    check(paimon_wire_table_assigner_ids(table, &array, &schema, assigners, owners, (size_t)n),
          "paimon_wire_table_assigner_ids");
    free_rows(&all);
    int64_t mine = 0;
    for (int64_t i = 0; i < n; i++)
      if (owners[i] == assigner) ids[mine++] = from + (int32_t)i;
    free(owners);
    n = mine;
  }
  if (n > 0) {
    rows_t rows = make_rows(ids, n, prefix);
    struct ArrowArray array;
    struct ArrowSchema schema;
    rows_batch(&rows, &array, &schema);
    check(paimon_wire_table_write_arrow_batch(write, &array, &schema),
          "paimon_wire_table_write_arrow_batch");
    free_rows(&rows);
  }
  free(ids);
  return n;
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
  if (argc < 9 || argc > 11) {
    fprintf(stderr,
            "usage: %s WAREHOUSE DATABASE.TABLE COMMIT_USER FROM TO PREFIX VERSION OUT "
            "[OPTIONS_FILE] [assigner:W/N]\n",
            argv[0]);
    return 2;
  }
  const char *options_file = NULL;
  int assigner = 0, assigners = 0;
  for (int a = 9; a < argc; a++) {
    if (strncmp(argv[a], "assigner:", 9) == 0) {
      if (sscanf(argv[a] + 9, "%d/%d", &assigner, &assigners) != 2 || assigners <= 0 ||
          assigner < 0 || assigner >= assigners) {
        fprintf(stderr, "assigner:W/N needs 0 <= W < N, got %s\n", argv[a]);
        return 2;
      }
    } else {
      options_file = argv[a];
    }
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
  size_t option_count =
      options_file != NULL ? read_options(options_file, &options_text, keys, values) : 0;
  paimon_wire_result_table table = paimon_wire_table_open(argv[1], argv[2], keys, values, option_count);
  free(options_text);
  check(table.error, "paimon_wire_table_open");
  paimon_wire_result_write_builder builder =
      paimon_wire_write_builder_new(table.table, argv[3], false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(builder.error, "paimon_wire_write_builder_new");
  if (assigners > 0) {
    paimon_wire_result_write_builder mine =
        paimon_wire_write_builder_new_assigner(builder.builder, assigner, assigners);
    check(mine.error, "paimon_wire_write_builder_new_assigner");
    paimon_wire_write_builder_free(builder.builder);
    builder = mine;
  }
  paimon_wire_result_table_write write = paimon_wire_write_builder_new_write(builder.builder);
  check(write.error, "paimon_wire_write_builder_new_write");
  int64_t written = write_rows(table.table, write.write, from, to, argv[6], assigner, assigners);
  paimon_wire_result_commit_messages messages = paimon_wire_table_write_prepare_commit(write.write);
  check(messages.error, "paimon_wire_table_write_prepare_commit");
  paimon_wire_result_bytes payload = paimon_wire_commit_messages_serialize_version(messages.messages, version);
  check(payload.error, "paimon_wire_commit_messages_serialize_version");
  write_file(argv[8], payload.bytes.data, payload.bytes.len);
  paimon_wire_result_commit_messages_summary summary = paimon_wire_commit_messages_summarize(messages.messages);
  check(summary.error, "paimon_wire_commit_messages_summarize");
  printf("wrote %lld of rows %d..%d: %zu message(s), version %d, %zu bytes\n", (long long)written,
         from, to, summary.summary.message_count, version, payload.bytes.len);

  paimon_wire_bytes_free(payload.bytes);
  paimon_wire_commit_messages_free(messages.messages);
  paimon_wire_table_write_free(write.write);
  paimon_wire_write_builder_free(builder.builder);
  paimon_wire_table_free(table.table);
  return 0;
}
