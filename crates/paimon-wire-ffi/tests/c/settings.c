/*
 * The settings of paimon_wire_table_options and the log hook, each shown to have an effect.
 * Prints `key=value` lines for tests/settings.rs to check.
 *
 * usage: settings limit|threads|log|format|validation|hash WAREHOUSE
 *   (the warehouse holds db.orders: append, partitioned by dt; for `hash` a primary-key table
 *   with dynamic buckets, bucket = -1, partitioned by dt)
 */
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>

#include "common.h"

static const char *const PARTS[] = {"2024-01-01", "2024-01-02"};

static paimon_wire_table *open_with(const char *warehouse, const paimon_wire_table_options *options) {
  paimon_wire_result_table table =
      paimon_wire_table_open_with_options(warehouse, "db.orders", NULL, NULL, 0, options);
  check(table.error, "paimon_wire_table_open_with_options");
  return table.table;
}

/* Decodes `payload` through a table commit of `table`; prints `<label>_code=` (0 when decoded)
 * and `<label>_message=`, and commits it when `commit_id` > 0. */
static void decode(const paimon_wire_table *table, const char *user, paimon_wire_bytes payload,
                   const char *label, int64_t commit_id) {
  paimon_wire_result_table_commit commit =
      paimon_wire_table_commit_new(table, user, false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(commit.error, "paimon_wire_table_commit_new");
  paimon_wire_result_commit_messages decoded = paimon_wire_commit_messages_deserialize(
      commit.commit, payload.data, payload.len, paimon_wire_commit_messages_serializer_version());
  if (decoded.error != NULL) {
    printf("%s_code=%d\n%s_message=%s\n", label, (int)decoded.error->code, label,
           decoded.error->message);
    paimon_wire_error_free(decoded.error);
  } else {
    printf("%s_code=0\n", label);
    if (commit_id > 0) {
      paimon_wire_result_commit done =
          paimon_wire_table_commit_commit(commit.commit, decoded.messages, commit_id);
      check(done.error, "paimon_wire_table_commit_commit");
      printf("%s_snapshot=%lld\n", label, (long long)done.outcome.snapshot_id);
    }
    paimon_wire_commit_messages_free(decoded.messages);
  }
  paimon_wire_table_commit_free(commit.commit);
}

/* A payload of 10 rows against a limit of 16 bytes per payload, and against the defaults. */
static void limit(const char *warehouse) {
  paimon_wire_table_options *options = paimon_wire_table_options_new();
  check(paimon_wire_table_options_set_decode_limits(options, 16, 100, 100), "set_decode_limits");
  paimon_wire_table *limited = open_with(warehouse, options);
  paimon_wire_table_options_free(options);
  paimon_wire_table *plain = open_with(warehouse, NULL);
  paimon_wire_bytes payload = write_payload(plain, "limit", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 10, PARTS, NULL);
  printf("payload_bytes=%zu\n", payload.len);
  decode(limited, "limit", payload, "limited", 0);
  decode(plain, "limit", payload, "default", 0);
  paimon_wire_bytes_free(payload);
  paimon_wire_table_free(limited);
  paimon_wire_table_free(plain);
}

/* Commits `payload` under `commit_id` through a new table commit of `table`; prints
 * `<label>_code=` (0 when committed) and `<label>_message=`, or `<label>_snapshot=`. */
static void commit_payload(const paimon_wire_table *table, const char *user, paimon_wire_bytes payload,
                           const char *label, int64_t commit_id) {
  paimon_wire_result_table_commit commit =
      paimon_wire_table_commit_new(table, user, false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(commit.error, "paimon_wire_table_commit_new");
  paimon_wire_result_commit_messages decoded = paimon_wire_commit_messages_deserialize(
      commit.commit, payload.data, payload.len, paimon_wire_commit_messages_serializer_version());
  check(decoded.error, "paimon_wire_commit_messages_deserialize");
  paimon_wire_result_commit done =
      paimon_wire_table_commit_commit(commit.commit, decoded.messages, commit_id);
  if (done.error != NULL) {
    printf("%s_code=%d\n%s_message=%s\n", label, (int)done.error->code, label,
           done.error->message);
    paimon_wire_error_free(done.error);
  } else {
    printf("%s_code=0\n%s_status=%d\n%s_snapshot=%lld\n", label, label, (int)done.outcome.status,
           label, (long long)done.outcome.snapshot_id);
  }
  paimon_wire_commit_messages_free(decoded.messages);
  paimon_wire_table_commit_free(commit.commit);
}

/* The HASH index budget on a dynamic-bucket table: 0 is refused; a commit's HASH index
 * checks need 12 bytes a key plus a 1 MiB read buffer, so a budget of 1 KiB refuses the first
 * commit (before anything is read or published), the default budget commits the same payload,
 * and a budget of 2 MiB commits the next one (its keys and the live index's). */
static void hash_budget(const char *warehouse) {
  printf("default_budget=%llu\n", (unsigned long long)PAIMON_WIRE_DEFAULT_HASH_INDEX_BUDGET);
  paimon_wire_table_options *options = paimon_wire_table_options_new();
  paimon_wire_error *refused = paimon_wire_table_options_set_hash_index_budget(options, 0);
  printf("zero_budget_code=%d\n", refused == NULL ? 0 : (int)refused->code);
  if (refused != NULL) printf("zero_budget_message=%s\n", refused->message);
  paimon_wire_error_free(refused);
  check(paimon_wire_table_options_set_hash_index_budget(options, 1024), "set_hash_index_budget");
  paimon_wire_table *tiny = open_with(warehouse, options);
  check(paimon_wire_table_options_set_hash_index_budget(options, 2 << 20), "set_hash_index_budget");
  paimon_wire_table *roomy = open_with(warehouse, options);
  paimon_wire_table_options_free(options);
  paimon_wire_table *plain = open_with(warehouse, NULL);

  paimon_wire_bytes first = write_payload(plain, "hash", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 10, PARTS, NULL);
  commit_payload(tiny, "hash", first, "tiny", 1);
  commit_payload(plain, "hash", first, "default", 1);
  paimon_wire_bytes_free(first);
  paimon_wire_bytes second = write_payload(plain, "hash", PAIMON_WIRE_WRITE_KIND_STANDARD, 10, 10, PARTS, NULL);
  commit_payload(tiny, "hash", second, "tiny_again", 2);
  commit_payload(roomy, "hash", second, "roomy", 2);
  paimon_wire_bytes_free(second);
  paimon_wire_table_free(tiny);
  paimon_wire_table_free(roomy);
  paimon_wire_table_free(plain);
}

/* Counts this process's threads whose name starts with `prefix`. */
static int threads_named(const char *prefix) {
  DIR *dir = opendir("/proc/self/task");
  if (dir == NULL) exit(2);
  int count = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (entry->d_name[0] == '.') continue;
    char path[300];
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    char name[64] = {0};
    if (fgets(name, sizeof name, f) != NULL && strncmp(name, prefix, strlen(prefix)) == 0) count++;
    fclose(f);
  }
  closedir(dir);
  return count;
}

/* Two named worker threads and a capped blocking pool; then the threads end with the table. */
static void threads(const char *warehouse) {
  paimon_wire_table_options *options = paimon_wire_table_options_new();
  paimon_wire_error *refused = paimon_wire_table_options_set_runtime_threads(options, 2, 0);
  printf("zero_blocking_code=%d\n", refused == NULL ? 0 : (int)refused->code);
  paimon_wire_error_free(refused);
  check(paimon_wire_table_options_set_runtime_threads(options, 2, 3), "set_runtime_threads");
  check(paimon_wire_table_options_set_thread_name_prefix(options, "pwthr-"), "set_thread_name_prefix");
  printf("named_before_open=%d\n", threads_named("pwthr-"));
  paimon_wire_table *table = open_with(warehouse, options);
  paimon_wire_table_options_free(options);
  paimon_wire_bytes payload = write_payload(table, "threads", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 10, PARTS, NULL);
  printf("named_while_open=%d\n", threads_named("pwthr-"));
  paimon_wire_bytes_free(payload);
  paimon_wire_table_free(table);
}

/* The log records received, one line each. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static void on_log(void *user_data, paimon_wire_log_level level, const char *target,
                   const char *message) {
  pthread_mutex_lock(&log_lock);
  int *count = (int *)user_data;
  (*count)++;
  /* One line per record: newlines in the message are shown as \n. */
  printf("record level=%d target=%s message=", (int)level, target);
  for (const char *c = message; *c != '\0'; c++) {
    if (*c == '\n') fputs("\\n", stdout); else putchar(*c);
  }
  putchar('\n');
  pthread_mutex_unlock(&log_lock);
}

static void log_records(const char *warehouse) {
  int count = 0;
  paimon_wire_error *refused = paimon_wire_set_log_callback(on_log, &count, 6);
  printf("bad_level_code=%d\n", refused == NULL ? 0 : (int)refused->code);
  paimon_wire_error_free(refused);
  check(paimon_wire_set_log_callback(on_log, &count, PAIMON_WIRE_LOG_LEVEL_DEBUG), "set_log_callback");
  paimon_wire_table_free(open_with(warehouse, NULL));
  /* A warning of the paimon crate: an object store client with an invalid User-Agent (the
   * open then fails: nothing listens on the endpoint). */
  const char *keys[] = {"s3.endpoint", "s3.region", "s3.access-key", "s3.secret-key",
                        "user-agent.module"};
  const char *values[] = {"http://127.0.0.1:9", "us-east-1", "key", "s3cr3t-value", "bad\nagent"};
  paimon_wire_result_table s3 = paimon_wire_table_open("s3://bucket/warehouse", "db.orders", keys, values, 5);
  printf("s3_open_failed=%d\n", s3.error != NULL);
  paimon_wire_error_free(s3.error);
  paimon_wire_table_free(s3.table);
  /* Unregistered: no more records. */
  check(paimon_wire_set_log_callback(NULL, NULL, 0), "set_log_callback(NULL)");
  int before = count;
  paimon_wire_table_free(open_with(warehouse, NULL));
  printf("records=%d records_after_unregister=%d\n", before, count - before);
}

/* Writes with `file.format` overridden to Avro and commits. An override to ORC, which the
 * library has only when built with the `orc` feature, is refused when the table is opened
 * (or opens, in a build that has it). */
static void format(const char *warehouse) {
  paimon_wire_table_options *options = paimon_wire_table_options_new();
  check(paimon_wire_table_options_set_table_option(options, "file.format", "avro"), "set_table_option");
  paimon_wire_error *refused = paimon_wire_table_options_set_table_option(options, "", "x");
  printf("empty_key_code=%d\n", refused == NULL ? 0 : (int)refused->code);
  paimon_wire_error_free(refused);
  paimon_wire_table *table = open_with(warehouse, options);
  paimon_wire_table_options_free(options);
  paimon_wire_bytes payload = write_payload(table, "format", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 10, PARTS, NULL);
  decode(table, "format", payload, "avro", 1);
  paimon_wire_bytes_free(payload);
  paimon_wire_table_free(table);

  paimon_wire_table_options *orc = paimon_wire_table_options_new();
  check(paimon_wire_table_options_set_table_option(orc, "file.format", "orc"), "set_table_option");
  paimon_wire_result_table opened =
      paimon_wire_table_open_with_options(warehouse, "db.orders", NULL, NULL, 0, orc);
  paimon_wire_table_options_free(orc);
  if (opened.error != NULL) {
    printf("orc_open_code=%d\norc_open_message=%s\n", (int)opened.error->code, opened.error->message);
    paimon_wire_error_free(opened.error);
  } else {
    printf("orc_open_code=0\n");
    paimon_wire_table_free(opened.table);
  }
}

/* A batch whose `name` column holds bytes that are not UTF-8, with and without validation. */
static paimon_wire_error *write_invalid_utf8(const paimon_wire_table *table) {
  paimon_wire_result_write_builder builder =
      paimon_wire_write_builder_new(table, "validation", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(builder.error, "paimon_wire_write_builder_new");
  paimon_wire_result_table_write write = paimon_wire_write_builder_new_write(builder.builder);
  check(write.error, "paimon_wire_write_builder_new_write");
  struct ArrowArray array;
  struct ArrowSchema schema;
  make_orders(0, 4, PARTS, 2, &array, &schema);
  /* Child 1 is `name` ("name-0", ...): its first byte becomes a lone continuation byte. */
  ((uint8_t *)array.children[1]->buffers[2])[0] = 0x80;
  paimon_wire_error *error = paimon_wire_table_write_arrow_batch(write.write, &array, &schema);
  paimon_wire_table_write_free(write.write);
  paimon_wire_write_builder_free(builder.builder);
  return error;
}

static void validation(const char *warehouse) {
  paimon_wire_table *validated = open_with(warehouse, NULL);
  paimon_wire_error *error = write_invalid_utf8(validated);
  printf("validated_code=%d\n", error == NULL ? 0 : (int)error->code);
  if (error != NULL) printf("validated_message=%s\n", error->message);
  paimon_wire_error_free(error);
  paimon_wire_table_free(validated);

  paimon_wire_table_options *options = paimon_wire_table_options_new();
  check(paimon_wire_table_options_set_arrow_validation(options, false), "set_arrow_validation");
  paimon_wire_table *unvalidated = open_with(warehouse, options);
  paimon_wire_table_options_free(options);
  error = write_invalid_utf8(unvalidated);
  printf("unvalidated_code=%d\n", error == NULL ? 0 : (int)error->code);
  paimon_wire_error_free(error);
  paimon_wire_table_free(unvalidated);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s limit|threads|log|format|validation|hash WAREHOUSE\n", argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *what = argv[1];
  if (strcmp(what, "limit") == 0) limit(argv[2]);
  else if (strcmp(what, "threads") == 0) threads(argv[2]);
  else if (strcmp(what, "log") == 0) log_records(argv[2]);
  else if (strcmp(what, "format") == 0) format(argv[2]);
  else if (strcmp(what, "validation") == 0) validation(argv[2]);
  else if (strcmp(what, "hash") == 0) hash_budget(argv[2]);
  else return 2;
  return 0;
}
