/*
 * Bad input through the C API: NULL pointers, handles of the wrong kind, unsupported
 * versions, truncated / random / mutated payloads, payloads for the wrong table or write
 * kind, messages bound to another table commit, malformed Arrow input, envelopes and DPCM frames. Every
 * call must return the documented error code (never crash, never leak: this program runs
 * under valgrind).
 *
 * usage: bad_input WAREHOUSE
 * The warehouse holds db.orders (append, partitioned by dt), db.other (append,
 * unpartitioned, 4 buckets) and db.postponed (primary key, bucket -2,
 * postpone.default-bucket-num 2), all with columns (id, name, amount, dt).
 */
#include <stdbool.h>

#include "common.h"

static int checks = 0;
static int failures = 0;

/* Expects `error` to carry `code`, and `needle` in its message when not NULL. Frees it. */
static void expect_error(paimon_wire_error *error, paimon_wire_error_code code, const char *needle,
                         const char *what) {
  checks++;
  if (error == NULL) {
    fprintf(stderr, "FAIL %s: expected error %d, got success\n", what, (int)code);
    failures++;
    return;
  }
  if (error->code != code || (needle != NULL && strstr(error->message, needle) == NULL)) {
    fprintf(stderr, "FAIL %s: expected error %d%s%s, got %d: %s\n", what, (int)code,
            needle ? " containing " : "", needle ? needle : "", (int)error->code,
            error->message);
    failures++;
  }
  paimon_wire_error_free(error);
}

static void expect(bool condition, const char *what) {
  checks++;
  if (!condition) {
    fprintf(stderr, "FAIL %s\n", what);
    failures++;
  }
}

static const char *const PARTS[] = {"2024-01-01", "2024-01-02"};

static paimon_wire_table *open_table(const char *warehouse, const char *name) {
  paimon_wire_result_table table = paimon_wire_table_open(warehouse, name, NULL, NULL, 0);
  check(table.error, name);
  return table.table;
}

static paimon_wire_table_commit *new_commit(const paimon_wire_table *table, const char *user,
                                       int32_t write_kind) {
  paimon_wire_result_table_commit commit = paimon_wire_table_commit_new(table, user, false, write_kind);
  check(commit.error, "paimon_wire_table_commit_new");
  return commit.commit;
}

/* A deserialize that must fail with `code`. */
static void expect_deserialize_error(const paimon_wire_table_commit *commit, const uint8_t *data,
                                     size_t len, int32_t version, paimon_wire_error_code code,
                                     const char *needle, const char *what) {
  paimon_wire_result_commit_messages result =
      paimon_wire_commit_messages_deserialize(commit, data, len, version);
  expect(result.messages == NULL, what);
  expect_error(result.error, code, needle, what);
}

/* A deserialize of arbitrary bytes: either a clean error of a payload kind, or messages. */
static void deserialize_anything(const paimon_wire_table_commit *commit, const uint8_t *data,
                                 size_t len, const char *what) {
  paimon_wire_result_commit_messages result = paimon_wire_commit_messages_deserialize(commit, data, len, 14);
  checks++;
  if ((result.messages == NULL) == (result.error == NULL)) {
    fprintf(stderr, "FAIL %s: exactly one of messages and error must be set\n", what);
    failures++;
  }
  if (result.error != NULL) {
    paimon_wire_error_code code = result.error->code;
    if (code != PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD &&
        code != PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED && code != PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT) {
      fprintf(stderr, "FAIL %s: unexpected code %d: %s\n", what, (int)code,
              result.error->message);
      failures++;
    }
    paimon_wire_error_free(result.error);
  }
  paimon_wire_commit_messages_free(result.messages);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}

static void table_open_errors(const char *warehouse) {
  paimon_wire_result_table t = paimon_wire_table_open(NULL, "db.orders", NULL, NULL, 0);
  expect(t.table == NULL, "open NULL warehouse: no table");
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`warehouse`", "open NULL warehouse");
  t = paimon_wire_table_open(warehouse, NULL, NULL, NULL, 0);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`table_name`", "open NULL name");
  t = paimon_wire_table_open(warehouse, "orders", NULL, NULL, 0);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "orders", "open name without db");
  t = paimon_wire_table_open(warehouse, "db.missing", NULL, NULL, 0);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_TABLE_NOT_FOUND, NULL, "open missing table");
  t = paimon_wire_table_open(warehouse, "db.\xff\xfe", NULL, NULL, 0);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "UTF-8", "open non-UTF-8 name");
  t = paimon_wire_table_open(warehouse, "db.orders", NULL, NULL, 1);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`option_keys`", "open NULL options");
  /* storage-hdfs is not a default feature: its own code, naming the feature, not an I/O error */
  t = paimon_wire_table_open("hdfs://namenode:8020/warehouse", "db.orders", NULL, NULL, 0);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_STORAGE_BACKEND_NOT_COMPILED, "`storage-hdfs`",
               "open hdfs:// without storage-hdfs");
  t = paimon_wire_table_open("ftp://host/warehouse", "db.orders", NULL, NULL, 0);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED, "ftp://", "open ftp:// warehouse");
  /* a secret option's value never appears in an error */
  const char *keys[] = {"metastore", "s3.secret-key"};
  const char *values[] = {"no-such-metastore", "SUPERSECRET-C"};
  t = paimon_wire_table_open(warehouse, "db.orders", keys, values, 2);
  expect(t.error == NULL || strstr(t.error->message, "SUPERSECRET") == NULL,
         "no secret option value in the error");
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "no-such-metastore",
               "open with an unknown metastore");
}

static void table_create_errors(const char *warehouse) {
  struct ArrowArray row;
  struct ArrowSchema columns;
  make_orders(0, 1, PARTS, 2, &row, &columns);
  const char *dt[] = {"dt"};
  paimon_wire_result_table t = paimon_wire_table_create(warehouse, "db.fresh", NULL, dt, 1, NULL, 0, NULL,
                                                        NULL, 0, NULL, NULL, 0, false);
  expect(t.table == NULL, "create NULL schema: no table");
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`schema`", "create NULL schema");
  t = paimon_wire_table_create(warehouse, "db.fresh", &columns, NULL, 1, NULL, 0, NULL, NULL, 0, NULL,
                               NULL, 0, false);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`partition_keys`", "create NULL keys");
  t = paimon_wire_table_create(warehouse, "fresh", &columns, dt, 1, NULL, 0, NULL, NULL, 0, NULL, NULL,
                               0, false);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "fresh", "create name without db");
  const char *no_column[] = {"no_such_column"};
  t = paimon_wire_table_create(warehouse, "db.fresh", &columns, no_column, 1, NULL, 0, NULL, NULL, 0,
                               NULL, NULL, 0, false);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "no_such_column", "create with a key naming no column");
  t = paimon_wire_table_create(warehouse, "db.orders", &columns, dt, 1, NULL, 0, NULL, NULL, 0, NULL,
                               NULL, 0, false);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_PAIMON, "already exists", "create an existing table");
  /* A schema that is not a struct (one column's), then a released one. */
  t = paimon_wire_table_create(warehouse, "db.fresh", columns.children[0], NULL, 0, NULL, 0, NULL, NULL,
                               0, NULL, NULL, 0, false);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_ARROW, "schema", "create with a column's schema");
  columns.release(&columns);
  t = paimon_wire_table_create(warehouse, "db.fresh", &columns, dt, 1, NULL, 0, NULL, NULL, 0, NULL,
                               NULL, 0, false);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_ARROW, "schema", "create with a released schema");
  row.release(&row);
  /* Nothing was created by any of them. */
  t = paimon_wire_table_open(warehouse, "db.fresh", NULL, NULL, 0);
  expect_error(t.error, PAIMON_WIRE_ERROR_CODE_TABLE_NOT_FOUND, NULL, "no table after failed creates");
}

static void write_errors(paimon_wire_table *orders, paimon_wire_table_commit *commit) {
  paimon_wire_result_write_builder b = paimon_wire_write_builder_new(NULL, "job", false, 0);
  expect_error(b.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`table`", "builder NULL table");
  b = paimon_wire_write_builder_new(orders, NULL, false, 0);
  expect_error(b.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`commit_user`", "builder NULL user");
  b = paimon_wire_write_builder_new(orders, "job", false, 7);
  expect_error(b.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "`write_kind`", "builder kind 7");
  b = paimon_wire_write_builder_new(orders, "a/b", false, 0);
  expect_error(b.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "commit_user", "builder user a/b");
  b = paimon_wire_write_builder_new(orders, "", false, 0);
  expect_error(b.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "commit_user", "builder empty user");
  b = paimon_wire_write_builder_new(orders, "job", false, PAIMON_WIRE_WRITE_KIND_POSTPONE_FIXED_BUCKET);
  expect_error(b.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED, "bucket=-2", "fixed kind, append table");
  b = paimon_wire_write_builder_new((const paimon_wire_table *)commit, "job", false, 0);
  expect_error(b.error, PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND, "paimon_wire_table_commit was passed",
               "builder from a table commit");

  b = paimon_wire_write_builder_new(orders, "job", false, 0);
  check(b.error, "builder");
  paimon_wire_result_table_write w = paimon_wire_write_builder_new_write(NULL);
  expect_error(w.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, NULL, "new_write NULL");
  w = paimon_wire_write_builder_new_write((const paimon_wire_write_builder *)orders);
  expect_error(w.error, PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND, NULL, "new_write from a table");
  w = paimon_wire_write_builder_new_write(b.builder);
  check(w.error, "new_write");

  /* Ownership of the Arrow structs is taken even when the call fails. */
  struct ArrowArray array;
  struct ArrowSchema schema;
  make_orders(0, 3, PARTS, 2, &array, &schema);
  expect_error(paimon_wire_table_write_arrow_batch(NULL, &array, &schema),
               PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`write`", "write NULL handle");
  expect(array.release == NULL && schema.release == NULL, "NULL handle still takes ownership");

  make_orders(0, 3, PARTS, 2, &array, &schema);
  expect_error(paimon_wire_table_write_arrow_batch((paimon_wire_table_write *)b.builder, &array, &schema),
               PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND, NULL, "write with a builder handle");
  expect(array.release == NULL && schema.release == NULL, "wrong kind still takes ownership");

  make_orders(0, 3, PARTS, 2, &array, &schema);
  expect_error(paimon_wire_table_write_arrow_batch(w.write, NULL, &schema),
               PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`array`", "write NULL array");
  expect(schema.release == NULL, "NULL array: schema taken");
  array.release(&array);

  make_orders(0, 3, PARTS, 2, &array, &schema);
  array.release(&array); /* already released */
  expect_error(paimon_wire_table_write_arrow_batch(w.write, &array, &schema),
               PAIMON_WIRE_ERROR_CODE_ARROW, "already released", "write released array");
  expect(schema.release == NULL, "released array: schema taken");

  /* A plain int32 array is not a record batch. */
  int32_t ints[2] = {1, 2};
  column_spec one = {"id", 'i', ints};
  make_column(&one, 2, &array, &schema);
  expect_error(paimon_wire_table_write_arrow_batch(w.write, &array, &schema), PAIMON_WIRE_ERROR_CODE_ARROW,
               "struct array", "write non-struct array");

  /* A batch whose last column is misnamed. */
  int64_t longs[2] = {1, 2};
  const char *strings[2] = {"a", "b"};
  column_spec wrong[4] = {
      {"id", 'i', ints}, {"name", 'u', strings}, {"amount", 'l', longs}, {"day", 'u', strings}};
  make_batch(2, 4, wrong, &array, &schema);
  paimon_wire_error *e = paimon_wire_table_write_arrow_batch(w.write, &array, &schema);
  expect_error(e, PAIMON_WIRE_ERROR_CODE_PAIMON, "'day'", "write batch of the wrong schema");
  expect(array.release == NULL && schema.release == NULL, "wrong schema: both taken");

  paimon_wire_table_write_free(w.write);
  paimon_wire_write_builder_free(b.builder);
}

static void serialize_errors(const paimon_wire_table *orders, paimon_wire_commit_messages *prepared,
                             paimon_wire_table_commit *commit) {
  paimon_wire_result_bytes r = paimon_wire_commit_messages_serialize(NULL);
  expect(r.bytes.data == NULL && r.bytes.len == 0, "serialize NULL: empty bytes");
  expect_error(r.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`messages`", "serialize NULL");
  r = paimon_wire_commit_messages_serialize((const paimon_wire_commit_messages *)orders);
  expect_error(r.error, PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND, "paimon_wire_table was passed",
               "serialize a table handle");
  const int32_t bad_versions[] = {0, -1, 15, 1000};
  for (int i = 0; i < 4; i++) {
    r = paimon_wire_commit_messages_serialize_version(prepared, bad_versions[i]);
    expect_error(r.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, "version",
                 "serialize unsupported version");
  }
  paimon_wire_result_commit_messages_summary expected = paimon_wire_commit_messages_summarize(prepared);
  check(expected.error, "summarize");
  /* Every version either writes bytes that read back to the same rows, or refuses cleanly. */
  for (int32_t version = 1; version <= paimon_wire_commit_messages_serializer_version(); version++) {
    r = paimon_wire_commit_messages_serialize_version(prepared, version);
    if (r.error != NULL) {
      paimon_wire_error_code code = r.error->code;
      expect(code == PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION ||
                 code == PAIMON_WIRE_ERROR_CODE_UNREPRESENTABLE,
             "older version refused with a version error");
      paimon_wire_error_free(r.error);
      continue;
    }
    /* The table-less summary of the bytes (read in place) counts what the handle holds. */
    paimon_wire_result_commit_messages_summary read_in_place =
        paimon_wire_payload_summarize(r.bytes.data, r.bytes.len, version);
    check(read_in_place.error, "summarize a payload");
    expect(read_in_place.summary.message_count == expected.summary.message_count &&
               read_in_place.summary.data_file_count == expected.summary.data_file_count &&
               read_in_place.summary.row_count == expected.summary.row_count,
           "a payload's summary equals its messages' summary");
    if (r.bytes.len > 8) {
      paimon_wire_result_commit_messages_summary cut =
          paimon_wire_payload_summarize(r.bytes.data, r.bytes.len - 3, version);
      expect_error(cut.error, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "offset", "summarize a cut payload");
    }
    paimon_wire_result_commit_messages back =
        paimon_wire_commit_messages_deserialize(commit, r.bytes.data, r.bytes.len, version);
    check(back.error, "deserialize an older version");
    paimon_wire_result_commit_messages_summary s = paimon_wire_commit_messages_summarize(back.messages);
    check(s.error, "summarize");
    expect(s.summary.row_count == expected.summary.row_count, "older version keeps the rows");
    paimon_wire_commit_messages_free(back.messages);
    paimon_wire_bytes_free(r.bytes);
  }
  paimon_wire_result_commit_messages_summary s = paimon_wire_commit_messages_summarize(NULL);
  expect_error(s.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, NULL, "summarize NULL");
  s = paimon_wire_payload_summarize(NULL, 4, 14);
  expect_error(s.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`data`", "summarize NULL data");
  s = paimon_wire_payload_summarize(NULL, 0, 0);
  expect_error(s.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, "version", "summarize version 0");
}

static void deserialize_errors(const paimon_wire_table *orders, const paimon_wire_table_commit *commit,
                               paimon_wire_bytes payload) {
  expect_deserialize_error(NULL, payload.data, payload.len, 14, PAIMON_WIRE_ERROR_CODE_NULL_POINTER,
                           "`commit`", "deserialize NULL commit");
  expect_deserialize_error((const paimon_wire_table_commit *)orders, payload.data, payload.len, 14,
                           PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND, "paimon_wire_table was passed",
                           "deserialize through a table handle");
  expect_deserialize_error(commit, NULL, 10, 14, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`data`",
                           "deserialize NULL data");
  const int32_t bad_versions[] = {0, -7, 15, 2147483647};
  for (int i = 0; i < 4; i++)
    expect_deserialize_error(commit, payload.data, payload.len, bad_versions[i],
                             PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, "version",
                             "deserialize unsupported version");
  for (size_t len = 0; len < payload.len; len++)
    expect_deserialize_error(commit, payload.data, len, 14, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD,
                             NULL, "deserialize truncated payload");
  uint8_t *longer = (uint8_t *)checked_malloc(payload.len + 1);
  memcpy(longer, payload.data, payload.len);
  longer[payload.len] = 0;
  expect_deserialize_error(commit, longer, payload.len + 1, 14,
                           PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "trailing",
                           "deserialize with a trailing byte");
  free(longer);

  uint8_t random_bytes[600];
  for (int round = 0; round < 200; round++) {
    size_t len = (size_t)(next_random() % sizeof random_bytes);
    for (size_t i = 0; i < len; i++) random_bytes[i] = (uint8_t)next_random();
    deserialize_anything(commit, random_bytes, len, "deserialize random bytes");
  }
  uint8_t *mutated = (uint8_t *)checked_malloc(payload.len);
  for (int round = 0; round < 300; round++) {
    memcpy(mutated, payload.data, payload.len);
    mutated[next_random() % payload.len] ^= (uint8_t)(1u << (next_random() % 8));
    deserialize_anything(commit, mutated, payload.len, "deserialize a mutated payload");
  }
  free(mutated);
}

static void binding_errors(const char *warehouse, paimon_wire_table *orders,
                           paimon_wire_table_commit *commit, paimon_wire_commit_messages *prepared,
                           paimon_wire_bytes payload) {
  /* A payload written for db.orders (partitioned) does not fit db.other (unpartitioned). */
  paimon_wire_table *other = open_table(warehouse, "db.other");
  paimon_wire_table_commit *other_commit = new_commit(other, "job", PAIMON_WIRE_WRITE_KIND_STANDARD);
  expect_deserialize_error(other_commit, payload.data, payload.len, 14,
                           PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED, "partition",
                           "payload for another table");

  /* Messages bound to one table commit are refused by every other one. */
  paimon_wire_result_commit_messages bound =
      paimon_wire_commit_messages_deserialize(commit, payload.data, payload.len, 14);
  check(bound.error, "deserialize");
  paimon_wire_table_commit *second = new_commit(orders, "job", PAIMON_WIRE_WRITE_KIND_STANDARD);
  paimon_wire_result_commit c = paimon_wire_table_commit_commit(second, bound.messages, 1);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES, NULL, "commit foreign messages");
  c = paimon_wire_table_commit_commit(other_commit, bound.messages, 1);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES, NULL, "commit on another table");
  const paimon_wire_commit_messages *parts[2] = {bound.messages, NULL};
  paimon_wire_result_commit_messages m = paimon_wire_table_commit_merge(second, parts, 1);
  expect_error(m.error, PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES, NULL, "merge foreign messages");
  expect_error(paimon_wire_table_commit_abort(second, bound.messages),
               PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES, NULL, "abort foreign messages");

  /* Messages straight from a writer are bound to no table commit. */
  c = paimon_wire_table_commit_commit(commit, prepared, 1);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES, "serialize them",
               "commit unbound messages");
  parts[0] = prepared;
  m = paimon_wire_table_commit_merge(commit, parts, 1);
  expect_error(m.error, PAIMON_WIRE_ERROR_CODE_FOREIGN_MESSAGES, NULL, "merge unbound messages");

  /* NULL and wrong kinds on the coordinator calls. */
  c = paimon_wire_table_commit_commit(NULL, bound.messages, 1);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`commit`", "commit NULL commit");
  c = paimon_wire_table_commit_commit(commit, NULL, 1);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`messages`", "commit NULL messages");
  c = paimon_wire_table_commit_commit((const paimon_wire_table_commit *)bound.messages, bound.messages, 1);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND, NULL, "commit through messages");
  c = paimon_wire_table_commit_commit(commit, (const paimon_wire_commit_messages *)commit, 1);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_WRONG_HANDLE_KIND, NULL, "commit a commit handle");
  expect_error(paimon_wire_table_commit_abort(commit, NULL), PAIMON_WIRE_ERROR_CODE_NULL_POINTER, NULL,
               "abort NULL messages");
  m = paimon_wire_table_commit_merge(commit, NULL, 2);
  expect_error(m.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`parts`", "merge NULL parts");
  parts[0] = bound.messages;
  m = paimon_wire_table_commit_merge(commit, parts, 2);
  expect_error(m.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`parts[1]`", "merge a NULL part");
  m = paimon_wire_table_commit_merge(commit, NULL, 0);
  check(m.error, "merge nothing");
  paimon_wire_result_commit_messages_summary s = paimon_wire_commit_messages_summarize(m.messages);
  expect(s.error == NULL && s.summary.message_count == 0, "merge of nothing is empty");
  paimon_wire_commit_messages_free(m.messages);

  /* Free functions ignore NULL and handles of another kind; the handles stay usable. */
  paimon_wire_table_free((paimon_wire_table *)commit);
  paimon_wire_table_commit_free((paimon_wire_table_commit *)bound.messages);
  paimon_wire_commit_messages_free((paimon_wire_commit_messages *)orders);
  paimon_wire_table_write_free((paimon_wire_table_write *)orders);
  paimon_wire_write_builder_free((paimon_wire_write_builder *)commit);
  paimon_wire_table_free(NULL);
  paimon_wire_table_commit_free(NULL);
  paimon_wire_commit_messages_free(NULL);
  paimon_wire_table_write_free(NULL);
  paimon_wire_write_builder_free(NULL);
  paimon_wire_error_free(NULL);
  paimon_wire_bytes empty = {NULL, 0};
  paimon_wire_bytes_free(empty);
  parts[0] = bound.messages;
  m = paimon_wire_table_commit_merge(commit, parts, 1);
  check(m.error, "merge after the ignored frees");
  paimon_wire_commit_messages_free(m.messages);

  paimon_wire_commit_messages_free(bound.messages);
  paimon_wire_table_commit_free(second);
  paimon_wire_table_commit_free(other_commit);
  paimon_wire_table_free(other);
}

static void write_kind_errors(const char *warehouse, const paimon_wire_table *orders) {
  paimon_wire_result_table_commit c = paimon_wire_table_commit_new(orders, "job", false, 9);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "`write_kind`", "commit kind 9");
  c = paimon_wire_table_commit_new(orders, "", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "commit_user", "commit empty user");
  c = paimon_wire_table_commit_new(orders, "a/b", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "commit_user", "commit user a/b");
  c = paimon_wire_table_commit_new(orders, "job", false, PAIMON_WIRE_WRITE_KIND_POSTPONE_FIXED_BUCKET);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED, NULL, "fixed-bucket commit, append table");
  c = paimon_wire_table_commit_new(NULL, "job", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`table`", "commit NULL table");
  c = paimon_wire_table_commit_new_with_compaction(NULL, "job", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`table`", "compaction commit NULL table");
  c = paimon_wire_table_commit_new_with_flags(orders, NULL, false, PAIMON_WIRE_WRITE_KIND_STANDARD,
                                              PAIMON_WIRE_BINDING_ALLOW_COMPACTION);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`commit_user`", "flags commit NULL user");
  /* Unknown binding flags: refused, naming the unknown bits. */
  c = paimon_wire_table_commit_new_with_flags(orders, "job", false, PAIMON_WIRE_WRITE_KIND_STANDARD, 8);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "unknown bits 0x8", "commit flags 8");
  c = paimon_wire_table_commit_new_with_flags(orders, "job", false, PAIMON_WIRE_WRITE_KIND_STANDARD,
                                              PAIMON_WIRE_BINDING_VERIFY_COMPACTION | 8u);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "PAIMON_WIRE_BINDING_VERIFY_COMPACTION",
               "commit flags 8 with verify, naming the known flags");
  c = paimon_wire_table_commit_new_with_flags(
      orders, "job", false, PAIMON_WIRE_WRITE_KIND_STANDARD,
      PAIMON_WIRE_BINDING_ALLOW_COMPACTION | 0x80000000u);
  expect_error(c.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "unknown bits 0x80000000",
               "commit flags with the top bit");
  /* Every known combination binds. */
  for (uint32_t flags = 0;
       flags <= (PAIMON_WIRE_BINDING_ALLOW_DELETES | PAIMON_WIRE_BINDING_ALLOW_COMPACTION |
                 PAIMON_WIRE_BINDING_VERIFY_COMPACTION);
       flags++) {
    c = paimon_wire_table_commit_new_with_flags(orders, "job", false, PAIMON_WIRE_WRITE_KIND_STANDARD,
                                                flags);
    expect(c.error == NULL && c.commit != NULL, "commit with known flags");
    paimon_wire_error_free(c.error);
    paimon_wire_table_commit_free(c.commit);
  }

  /* A postpone table: each coordinator takes only the messages of its own write kind. */
  paimon_wire_table *postponed = open_table(warehouse, "db.postponed");
  /* Its compactions cannot be verified: a verifying binding is refused, with or without
   * the other flags; compaction trusted by metadata binds. */
  for (uint32_t flags = PAIMON_WIRE_BINDING_VERIFY_COMPACTION;
       flags <= (PAIMON_WIRE_BINDING_ALLOW_DELETES | PAIMON_WIRE_BINDING_ALLOW_COMPACTION |
                 PAIMON_WIRE_BINDING_VERIFY_COMPACTION);
       flags++) {
    c = paimon_wire_table_commit_new_with_flags(postponed, "job", false,
                                                PAIMON_WIRE_WRITE_KIND_STANDARD, flags);
    expect_error(c.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED, "cannot be verified",
                 "verified compaction on a postpone table");
    paimon_wire_table_commit_free(c.commit);
  }
  c = paimon_wire_table_commit_new_with_flags(postponed, "job", false, PAIMON_WIRE_WRITE_KIND_STANDARD,
                                              PAIMON_WIRE_BINDING_ALLOW_COMPACTION);
  expect(c.error == NULL && c.commit != NULL, "trusted compaction on a postpone table");
  paimon_wire_error_free(c.error);
  paimon_wire_table_commit_free(c.commit);
  paimon_wire_bytes standard = write_payload(postponed, "job", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 10, PARTS, NULL);
  paimon_wire_bytes fixed =
      write_payload(postponed, "job", PAIMON_WIRE_WRITE_KIND_POSTPONE_FIXED_BUCKET, 100, 10, PARTS, NULL);
  paimon_wire_table_commit *standard_commit =
      new_commit(postponed, "job", PAIMON_WIRE_WRITE_KIND_STANDARD);
  paimon_wire_table_commit *fixed_commit =
      new_commit(postponed, "job", PAIMON_WIRE_WRITE_KIND_POSTPONE_FIXED_BUCKET);
  expect_deserialize_error(standard_commit, fixed.data, fixed.len, 14,
                           PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED, "total-buckets",
                           "fixed-bucket payload, standard coordinator");
  expect_deserialize_error(fixed_commit, standard.data, standard.len, 14,
                           PAIMON_WIRE_ERROR_CODE_VALIDATION_FAILED, NULL,
                           "standard payload, fixed-bucket coordinator");
  paimon_wire_result_commit_messages ok =
      paimon_wire_commit_messages_deserialize(standard_commit, standard.data, standard.len, 14);
  expect(ok.error == NULL, "standard payload, standard coordinator");
  paimon_wire_error_free(ok.error);
  paimon_wire_commit_messages_free(ok.messages);
  ok = paimon_wire_commit_messages_deserialize(fixed_commit, fixed.data, fixed.len, 14);
  expect(ok.error == NULL, "fixed-bucket payload, fixed-bucket coordinator");
  paimon_wire_error_free(ok.error);
  paimon_wire_commit_messages_free(ok.messages);

  paimon_wire_table_commit_free(standard_commit);
  paimon_wire_table_commit_free(fixed_commit);
  paimon_wire_bytes_free(standard);
  paimon_wire_bytes_free(fixed);
  paimon_wire_table_free(postponed);
}

static void envelope_errors(paimon_wire_bytes payload) {
  paimon_wire_result_bytes w = paimon_wire_envelope_wrap(NULL, 5, 14);
  expect_error(w.error, PAIMON_WIRE_ERROR_CODE_NULL_POINTER, "`payload`", "wrap NULL");
  w = paimon_wire_envelope_wrap(payload.data, payload.len, 0);
  expect_error(w.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, NULL, "wrap version 0");

  paimon_wire_result_envelope u = paimon_wire_envelope_unwrap(payload.data, payload.len);
  expect_error(u.error, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "PWIR", "unwrap a raw payload");
  u = paimon_wire_envelope_unwrap(NULL, 0);
  expect_error(u.error, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, NULL, "unwrap nothing");

  w = paimon_wire_envelope_wrap(payload.data, payload.len, 14);
  check(w.error, "wrap");
  paimon_wire_bytes framed = w.bytes;
  u = paimon_wire_envelope_unwrap(framed.data, framed.len);
  check(u.error, "unwrap");
  expect(u.envelope.serializer_version == 14 && u.envelope.payload_len == payload.len &&
             memcmp(u.envelope.payload, payload.data, payload.len) == 0,
         "unwrap gives back the payload and version");
  u = paimon_wire_envelope_unwrap(framed.data, framed.len - 1);
  expect_error(u.error, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "truncated", "unwrap truncated");
  framed.data[framed.len - 1] ^= 0x01;
  u = paimon_wire_envelope_unwrap(framed.data, framed.len);
  expect_error(u.error, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "CRC32C", "unwrap corrupted");
  framed.data[framed.len - 1] ^= 0x01;
  framed.data[11] = 99; /* serializer version 14 -> 99 */
  u = paimon_wire_envelope_unwrap(framed.data, framed.len);
  expect_error(u.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, "99", "unwrap version 99");
  framed.data[11] = 14;
  framed.data[5] = 2; /* envelope format 1 -> 2 */
  u = paimon_wire_envelope_unwrap(framed.data, framed.len);
  expect_error(u.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, NULL, "unwrap envelope v2");
  paimon_wire_bytes_free(framed);
}

/* Big-endian int32 at `at`. */
static int32_t be32(const uint8_t *at) {
  return (int32_t)(((uint32_t)at[0] << 24) | ((uint32_t)at[1] << 16) | ((uint32_t)at[2] << 8) |
                   (uint32_t)at[3]);
}

/* Apache Doris's frames (DPCM): written by serialize_framed and dpcm_frame, read by the
 * coordinator's deserialize as they are, and refused with a code and the offset when wrong. */
static void dpcm_frames(const paimon_wire_commit_messages *prepared,
                        const paimon_wire_table_commit *commit, paimon_wire_bytes payload) {
  paimon_wire_result_bytes w =
      paimon_wire_commit_messages_serialize_framed(prepared, 14, PAIMON_WIRE_FRAME_DPCM);
  check(w.error, "serialize_framed DPCM");
  paimon_wire_bytes frame = w.bytes;
  expect(frame.len == payload.len + 12 && memcmp(frame.data, "DPCM", 4) == 0 &&
             be32(frame.data + 4) == 14 && be32(frame.data + 8) == (int32_t)payload.len &&
             memcmp(frame.data + 12, payload.data, payload.len) == 0,
         "a DPCM frame: magic, big-endian version and length, then the raw payload");
  w = paimon_wire_dpcm_frame(payload.data, payload.len, 14);
  check(w.error, "dpcm_frame");
  expect(w.bytes.len == frame.len && memcmp(w.bytes.data, frame.data, frame.len) == 0,
         "dpcm_frame of the raw payload is serialize_framed's frame");
  paimon_wire_bytes_free(w.bytes);
  w = paimon_wire_commit_messages_serialize_framed(prepared, 14, 7);
  expect_error(w.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "frame 7", "frame kind 7");
  w = paimon_wire_commit_messages_serialize_framed(prepared, 14, PAIMON_WIRE_FRAME_ENVELOPE);
  check(w.error, "serialize_framed envelope");
  paimon_wire_result_envelope u = paimon_wire_envelope_unwrap(w.bytes.data, w.bytes.len);
  check(u.error, "unwrap serialize_framed's envelope");
  expect(u.envelope.payload_len == payload.len &&
             memcmp(u.envelope.payload, payload.data, payload.len) == 0,
         "serialize_framed's envelope holds the raw payload");
  paimon_wire_bytes_free(w.bytes);

  u = paimon_wire_dpcm_unframe(frame.data, frame.len);
  check(u.error, "dpcm_unframe");
  expect(u.envelope.serializer_version == 14 && u.envelope.payload_len == payload.len &&
             memcmp(u.envelope.payload, payload.data, payload.len) == 0,
         "dpcm_unframe gives back the payload and version");
  u = paimon_wire_dpcm_unframe(payload.data, payload.len);
  expect_error(u.error, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "DPCM", "unframe a raw payload");

  paimon_wire_result_commit_messages ok =
      paimon_wire_commit_messages_deserialize(commit, frame.data, frame.len, 14);
  check(ok.error, "deserialize a DPCM frame");
  paimon_wire_result_commit_messages_summary from_frame =
      paimon_wire_commit_messages_summarize(ok.messages);
  paimon_wire_result_commit_messages_summary from_prepared =
      paimon_wire_commit_messages_summarize(prepared);
  expect(from_frame.error == NULL && from_prepared.error == NULL &&
             from_frame.summary.data_file_count == from_prepared.summary.data_file_count &&
             from_frame.summary.row_count == from_prepared.summary.row_count,
         "the frame's messages are the prepared ones");
  paimon_wire_commit_messages_free(ok.messages);
  paimon_wire_result_commit_messages_summary framed_summary =
      paimon_wire_payload_summarize(frame.data, frame.len, 14);
  expect(framed_summary.error == NULL &&
             framed_summary.summary.row_count == from_prepared.summary.row_count,
         "payload_summarize reads a DPCM frame as it is");
  paimon_wire_error_free(framed_summary.error);
  framed_summary = paimon_wire_payload_summarize(frame.data, frame.len, 12);
  expect_error(framed_summary.error, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "sent as version 12",
               "payload_summarize of a frame at another version");

  expect_deserialize_error(commit, frame.data, frame.len, 13, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD,
                           "sent as version 13", "a frame of version 14 handed over as 13");
  expect_deserialize_error(commit, frame.data, frame.len - 1, 14,
                           PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "truncated", "a truncated frame");
  uint8_t *longer = malloc(frame.len + 1);
  expect(longer != NULL, "malloc");
  memcpy(longer, frame.data, frame.len);
  longer[frame.len] = 0;
  expect_deserialize_error(commit, longer, frame.len + 1, 14, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD,
                           "offset", "a frame with a byte after its body");
  free(longer);
  frame.data[7] = 99; /* serializer version 14 -> 99 */
  u = paimon_wire_dpcm_unframe(frame.data, frame.len);
  expect_error(u.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, "99", "unframe version 99");
  frame.data[7] = 14;
  frame.data[8] = 0x80; /* a negative body length */
  expect_deserialize_error(commit, frame.data, frame.len, 14, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD,
                           "offset 8", "a frame with a negative length");
  paimon_wire_bytes_free(frame);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WAREHOUSE\n", argv[0]);
    return 2;
  }
  const char *warehouse = argv[1];
  paimon_wire_table *orders = open_table(warehouse, "db.orders");
  paimon_wire_table_commit *commit = new_commit(orders, "job", PAIMON_WIRE_WRITE_KIND_STANDARD);
  paimon_wire_commit_messages *prepared = NULL;
  paimon_wire_bytes payload = write_payload(orders, "job", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 20, PARTS, &prepared);

  table_open_errors(warehouse);
  table_create_errors(warehouse);
  write_errors(orders, commit);
  serialize_errors(orders, prepared, commit);
  deserialize_errors(orders, commit, payload);
  binding_errors(warehouse, orders, commit, prepared, payload);
  write_kind_errors(warehouse, orders);
  envelope_errors(payload);
  dpcm_frames(prepared, commit, payload);

  paimon_wire_bytes_free(payload);
  paimon_wire_commit_messages_free(prepared);
  paimon_wire_table_commit_free(commit);
  paimon_wire_table_free(orders);
  printf("bad_input: %d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
