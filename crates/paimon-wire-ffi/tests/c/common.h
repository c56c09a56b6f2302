/* Helpers shared by the C test programs: error checks, files, and the test table's rows. */
#ifndef PAIMON_WIRE_TEST_COMMON_H
#define PAIMON_WIRE_TEST_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#include "arrow_batch.h"
#include "paimon_wire.h"

/* The error recorder: with PAIMON_WIRE_TEST_ERROR_LOG set, every error a function of the
 * library returns (its DEBUG record "<function> returned error <code> (...): ...", target
 * paimon_wire::ffi) is appended to that file as one line, so the Rust test that ran the
 * program can check each code against the function's documented error list in the header
 * (tests/support/error_lists.rs). A program that registers a log callback of its own stops
 * the recording from then on. */
static int paimon_wire_test_error_log = -1;

static void paimon_wire_test_record_error(void *user_data, paimon_wire_log_level level,
                                          const char *target, const char *message) {
  (void)user_data;
  (void)level;
  if (strcmp(target, "paimon_wire::ffi") != 0) return;
  /* The first line of the message, which holds the function and the code. */
  size_t len = strcspn(message, "\n");
  char line[512];
  if (len > sizeof line - 2) len = sizeof line - 2;
  memcpy(line, message, len);
  line[len] = '\n';
  /* One write(2) of an O_APPEND file per line: lines of several threads do not interleave. */
  if (write(paimon_wire_test_error_log, line, len + 1) < 0) abort();
}

__attribute__((constructor)) static void paimon_wire_test_install_error_recorder(void) {
  const char *path = getenv("PAIMON_WIRE_TEST_ERROR_LOG");
  if (path == NULL) return;
  paimon_wire_test_error_log = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (paimon_wire_test_error_log < 0) abort();
  paimon_wire_error *error =
      paimon_wire_set_log_callback(paimon_wire_test_record_error, NULL, PAIMON_WIRE_LOG_LEVEL_DEBUG);
  if (error != NULL) abort();
}

/* Exits with status 1, printing the error, if `error` is not NULL. */
static inline void check(paimon_wire_error *error, const char *what) {
  if (error == NULL) return;
  fprintf(stderr, "%s failed: error %d: %s\n", what, (int)error->code, error->message);
  paimon_wire_error_free(error);
  exit(1);
}

/* Exits unless `error` carries `code` and `needle` is in its message. */
static inline void expect_code(paimon_wire_error *error, paimon_wire_error_code code, const char *name,
                        const char *needle) {
  if (error == NULL) {
    fprintf(stderr, "FAIL %s: the call succeeded\n", name);
    exit(1);
  }
  if (error->code != code || strstr(error->message, needle) == NULL) {
    fprintf(stderr, "FAIL %s: expected code %d with \"%s\", got %d: %s\n", name, (int)code,
            needle, (int)error->code, error->message);
    exit(1);
  }
  printf("ok %s: %s\n", name, error->message);
  paimon_wire_error_free(error);
}

static inline void write_file(const char *path, const uint8_t *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (f == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
}

/* Reads a whole file into a malloc'd buffer. */
static inline uint8_t *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = (uint8_t *)checked_malloc((size_t)size);
  if (fread(data, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  fclose(f);
  *len = (size_t)size;
  return data;
}

/* Builds one batch of the test table `orders (id INT, name STRING, amount BIGINT, dt STRING)`
 * with the `rows` ids in `id_list`: name "name-<id>", amount id*10, and dt
 * `partitions[id % n_partitions]`. */
static inline void make_orders_of(const int64_t *id_list, int64_t rows,
                                  const char *const *partitions, int n_partitions,
                                  struct ArrowArray *array, struct ArrowSchema *schema) {
  int32_t *ids = (int32_t *)checked_malloc(sizeof(int32_t) * (size_t)rows);
  int64_t *amounts = (int64_t *)checked_malloc(sizeof(int64_t) * (size_t)rows);
  char **names = (char **)checked_malloc(sizeof(char *) * (size_t)rows);
  const char **dts = (const char **)checked_malloc(sizeof(char *) * (size_t)rows);
  for (int64_t i = 0; i < rows; i++) {
    int64_t id = id_list[i];
    ids[i] = (int32_t)id;
    amounts[i] = id * 10;
    names[i] = (char *)checked_malloc(32);
    snprintf(names[i], 32, "name-%lld", (long long)id);
    dts[i] = partitions[id % n_partitions];
  }
  column_spec columns[4] = {
      {"id", 'i', ids}, {"name", 'u', names}, {"amount", 'l', amounts}, {"dt", 'u', dts}};
  make_batch(rows, 4, columns, array, schema);
  for (int64_t i = 0; i < rows; i++) free(names[i]);
  free(names);
  free(dts);
  free(ids);
  free(amounts);
}

/* make_orders_of for ids first_id..first_id+rows-1. */
static inline void make_orders(int64_t first_id, int64_t rows, const char *const *partitions,
                        int n_partitions, struct ArrowArray *array, struct ArrowSchema *schema) {
  int64_t *id_list = (int64_t *)checked_malloc(sizeof(int64_t) * (size_t)rows);
  for (int64_t i = 0; i < rows; i++) id_list[i] = first_id + i;
  make_orders_of(id_list, rows, partitions, n_partitions, array, schema);
  free(id_list);
}

/* Writes rows first_id.. in batches of at most 64 rows. */
static inline void write_orders(paimon_wire_table_write *write, int64_t first_id, int64_t rows,
                         const char *const *partitions, int n_partitions) {
  for (int64_t done = 0; done < rows; done += 64) {
    int64_t n = rows - done < 64 ? rows - done : 64;
    struct ArrowArray array;
    struct ArrowSchema schema;
    make_orders(first_id + done, n, partitions, n_partitions, &array, &schema);
    check(paimon_wire_table_write_arrow_batch(write, &array, &schema), "writing a batch");
  }
}

/* Writes `rows` rows from first_id on, over the two partitions `partitions`, with a new writer of
 * `table` made as `user` and `write_kind`, and returns the serialized messages (current
 * version). With `prepared_out` the prepared messages are handed out too, else freed. */
static inline paimon_wire_bytes write_payload(const paimon_wire_table *table, const char *user,
                                              int32_t write_kind, int64_t first_id, int64_t rows,
                                              const char *const *partitions,
                                              paimon_wire_commit_messages **prepared_out) {
  paimon_wire_result_write_builder builder = paimon_wire_write_builder_new(table, user, false, write_kind);
  check(builder.error, "paimon_wire_write_builder_new");
  paimon_wire_result_table_write write = paimon_wire_write_builder_new_write(builder.builder);
  check(write.error, "paimon_wire_write_builder_new_write");
  write_orders(write.write, first_id, rows, partitions, 2);
  paimon_wire_result_commit_messages messages = paimon_wire_table_write_prepare_commit(write.write);
  check(messages.error, "paimon_wire_table_write_prepare_commit");
  paimon_wire_result_bytes payload = paimon_wire_commit_messages_serialize(messages.messages);
  check(payload.error, "paimon_wire_commit_messages_serialize");
  if (prepared_out != NULL)
    *prepared_out = messages.messages;
  else
    paimon_wire_commit_messages_free(messages.messages);
  paimon_wire_table_write_free(write.write);
  paimon_wire_write_builder_free(builder.builder);
  return payload.bytes;
}

/* Of rows first_id.., writes only those this worker takes: with `assigners` 0, those whose
 * bucket (paimon_wire_table_bucket_ids) is `worker` modulo `workers`, an engine routing every
 * bucket of a primary-key table to one writer; with `assigners` N > 0, those whose
 * dynamic-bucket assigner (paimon_wire_table_assigner_ids) is `worker` of N, an engine sending
 * every row to the worker that is its assigner. Returns the number of rows written. */
static inline int64_t write_orders_of_worker(const paimon_wire_table *table,
                                             paimon_wire_table_write *write, int64_t first_id,
                                             int64_t rows, const char *const *partitions,
                                             int n_partitions, int worker, int workers,
                                             int assigners) {
  int64_t written = 0;
  for (int64_t done = 0; done < rows; done += 64) {
    int64_t n = rows - done < 64 ? rows - done : 64;
    struct ArrowArray array;
    struct ArrowSchema schema;
    make_orders(first_id + done, n, partitions, n_partitions, &array, &schema);
    int32_t owners[64];
    if (assigners > 0)
      check(paimon_wire_table_assigner_ids(table, &array, &schema, assigners, owners, 64),
            "paimon_wire_table_assigner_ids");
    else
      check(paimon_wire_table_bucket_ids(table, &array, &schema, owners, 64),
            "paimon_wire_table_bucket_ids");
    int64_t mine[64];
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
      if (owners[i] < 0) {
        fprintf(stderr, "negative bucket or assigner %d\n", owners[i]);
        exit(1);
      }
      if ((assigners > 0 ? owners[i] : owners[i] % workers) == worker)
        mine[count++] = first_id + done + i;
    }
    if (count == 0) continue;
    make_orders_of(mine, count, partitions, n_partitions, &array, &schema);
    check(paimon_wire_table_write_arrow_batch(write, &array, &schema), "writing a batch");
    written += count;
  }
  return written;
}

/* Splits a comma-separated list in place. Returns the count. */
static inline int split_commas(char *list, const char **out, int max) {
  int n = 0;
  for (char *token = strtok(list, ","); token != NULL && n < max; token = strtok(NULL, ","))
    out[n++] = token;
  return n;
}

#endif /* PAIMON_WIRE_TEST_COMMON_H */
