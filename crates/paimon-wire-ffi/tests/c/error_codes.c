/*
 * Provokes the error codes bad_input.c does not reach, one per run, and checks the code and
 * that the message names the problem. Prints `ok CODE: message` or fails (exit 1).
 *
 * usage: error_codes CASE WAREHOUSE   (db.orders: append, partitioned by dt; db.keyed: primary
 *                                      key (dt, id), 2 fixed buckets)
 *   CASE: limit_exceeded | io | identifier_superseded | identifier_reused | commit_conflict |
 *         shared_bucket | unrepresentable | merge_conflict
 * commit_conflict runs under the LD_PRELOAD shim that makes every snapshot publication lose.
 *
 * usage: error_codes rest_echo WAREHOUSE URI TOKEN
 *   Opens db.t of the REST catalog at URI (the test's server, which answers every request with
 *   an error whose body echoes TOKEN) with bearer token TOKEN, and prints the error
 *   (`error CODE: message`) and every log record the library hands to C (`log LEVEL TARGET:
 *   message`), for the test to look for TOKEN in.
 */
#include <stdbool.h>

#include "common.h"

static const char *const PARTS[] = {"2024-01-01", "2024-01-02"};

static paimon_wire_table *open_table(const char *warehouse, const char *name,
                                     const paimon_wire_table_options *options) {
  paimon_wire_result_table table =
      paimon_wire_table_open_with_options(warehouse, name, NULL, NULL, 0, options);
  check(table.error, "paimon_wire_table_open_with_options");
  return table.table;
}

static paimon_wire_commit_messages *decode(const paimon_wire_table_commit *commit, paimon_wire_bytes payload) {
  paimon_wire_result_commit_messages decoded = paimon_wire_commit_messages_deserialize(
      commit, payload.data, payload.len, paimon_wire_commit_messages_serializer_version());
  check(decoded.error, "paimon_wire_commit_messages_deserialize");
  return decoded.messages;
}

/* Commits `payload` under `identifier`; returns the error (NULL when committed). */
static paimon_wire_error *commit_payload(const paimon_wire_table *table, paimon_wire_bytes payload,
                                         int64_t identifier) {
  paimon_wire_result_table_commit commit =
      paimon_wire_table_commit_new(table, "codes", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(commit.error, "paimon_wire_table_commit_new");
  paimon_wire_commit_messages *messages = decode(commit.commit, payload);
  paimon_wire_result_commit done = paimon_wire_table_commit_commit(commit.commit, messages, identifier);
  paimon_wire_commit_messages_free(messages);
  paimon_wire_table_commit_free(commit.commit);
  return done.error;
}

/* A log callback that prints every record, and records errors as common.h's recorder does. */
static void print_record(void *user_data, paimon_wire_log_level level, const char *target,
                         const char *message) {
  if (paimon_wire_test_error_log >= 0)
    paimon_wire_test_record_error(user_data, level, target, message);
  printf("log %d %s: %s\n", (int)level, target, message);
}

int main(int argc, char **argv) {
  bool rest_echo = argc == 5 && strcmp(argv[1], "rest_echo") == 0;
  if (argc != 3 && !rest_echo) {
    fprintf(stderr, "usage: %s CASE WAREHOUSE | %s rest_echo WAREHOUSE URI TOKEN\n", argv[0], argv[0]);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char *what = argv[1];
  const char *warehouse = argv[2];
  if (strcmp(what, "limit_exceeded") == 0) {
    paimon_wire_table_options *options = paimon_wire_table_options_new();
    check(paimon_wire_table_options_set_decode_limits(options, 1 << 20, 1, 100), "set_decode_limits");
    paimon_wire_table *limited = open_table(warehouse, "db.orders", options);
    paimon_wire_table_options_free(options);
    /* Two partitions: two messages, one more than the limit. */
    paimon_wire_bytes payload = write_payload(limited, "codes", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 10, PARTS, NULL);
    paimon_wire_result_table_commit commit =
        paimon_wire_table_commit_new(limited, "codes", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
    check(commit.error, "paimon_wire_table_commit_new");
    paimon_wire_result_commit_messages decoded = paimon_wire_commit_messages_deserialize(
        commit.commit, payload.data, payload.len, paimon_wire_commit_messages_serializer_version());
    expect_code(decoded.error, PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED, "LIMIT_EXCEEDED", "messages");
    paimon_wire_table_commit_free(commit.commit);
    paimon_wire_bytes_free(payload);
    paimon_wire_table_free(limited);
  } else if (strcmp(what, "io") == 0) {
    /* An S3 warehouse whose endpoint nothing listens on. */
    const char *keys[] = {"s3.endpoint", "s3.region", "s3.access-key", "s3.secret-key"};
    const char *values[] = {"http://127.0.0.1:9", "us-east-1", "key", "secret"};
    paimon_wire_result_table table =
        paimon_wire_table_open("s3://bucket/warehouse", "db.orders", keys, values, 4);
    expect_code(table.error, PAIMON_WIRE_ERROR_CODE_IO, "IO", "127.0.0.1:9");
  } else if (strcmp(what, "identifier_superseded") == 0 || strcmp(what, "identifier_reused") == 0) {
    paimon_wire_table *table = open_table(warehouse, "db.orders", NULL);
    paimon_wire_bytes first = write_payload(table, "codes", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 10, PARTS, NULL);
    paimon_wire_bytes second = write_payload(table, "codes", PAIMON_WIRE_WRITE_KIND_STANDARD, 10, 10, PARTS, NULL);
    check(commit_payload(table, first, 5), "commit the first payload as 5");
    if (strcmp(what, "identifier_superseded") == 0) {
      expect_code(commit_payload(table, second, 3), PAIMON_WIRE_ERROR_CODE_IDENTIFIER_SUPERSEDED,
                  "IDENTIFIER_SUPERSEDED", "3");
    } else {
      expect_code(commit_payload(table, second, 5), PAIMON_WIRE_ERROR_CODE_IDENTIFIER_REUSED,
                  "IDENTIFIER_REUSED", "5");
    }
    paimon_wire_bytes_free(first);
    paimon_wire_bytes_free(second);
    paimon_wire_table_free(table);
  } else if (strcmp(what, "commit_conflict") == 0) {
    /* Few, short retries (table options of this job); every publication loses (the shim). */
    paimon_wire_table_options *options = paimon_wire_table_options_new();
    check(paimon_wire_table_options_set_table_option(options, "commit.max-retries", "2"), "max-retries");
    check(paimon_wire_table_options_set_table_option(options, "commit.min-retry-wait", "1 ms"),
          "min-retry-wait");
    paimon_wire_table *table = open_table(warehouse, "db.orders", options);
    paimon_wire_table_options_free(options);
    paimon_wire_bytes payload = write_payload(table, "codes", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 10, PARTS, NULL);
    expect_code(commit_payload(table, payload, 1), PAIMON_WIRE_ERROR_CODE_COMMIT_CONFLICT,
                "COMMIT_CONFLICT", "2 retries");
    paimon_wire_bytes_free(payload);
    paimon_wire_table_free(table);
  } else if (strcmp(what, "shared_bucket") == 0) {
    /* Two writers of one primary-key table write the same buckets. */
    paimon_wire_table *table = open_table(warehouse, "db.keyed", NULL);
    paimon_wire_bytes first = write_payload(table, "codes", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 10, PARTS, NULL);
    paimon_wire_bytes second = write_payload(table, "codes", PAIMON_WIRE_WRITE_KIND_STANDARD, 10, 10, PARTS, NULL);
    paimon_wire_result_table_commit commit =
        paimon_wire_table_commit_new(table, "codes", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
    check(commit.error, "paimon_wire_table_commit_new");
    const paimon_wire_commit_messages *parts[2] = {decode(commit.commit, first),
                                                   decode(commit.commit, second)};
    paimon_wire_result_commit_messages merged = paimon_wire_table_commit_merge(commit.commit, parts, 2);
    expect_code(merged.error, PAIMON_WIRE_ERROR_CODE_SHARED_BUCKET, "SHARED_BUCKET", "bucket");
    paimon_wire_commit_messages_free((paimon_wire_commit_messages *)parts[0]);
    paimon_wire_commit_messages_free((paimon_wire_commit_messages *)parts[1]);
    paimon_wire_table_commit_free(commit.commit);
    paimon_wire_bytes_free(first);
    paimon_wire_bytes_free(second);
    paimon_wire_table_free(table);
  } else if (strcmp(what, "unrepresentable") == 0 || strcmp(what, "merge_conflict") == 0) {
    /* Messages of a primary-key table with 2 fixed buckets: total_buckets = 2 and the newest
     * fields, which older serializer versions have no field for. */
    paimon_wire_table *table = open_table(warehouse, "db.keyed", NULL);
    paimon_wire_result_write_builder builder =
        paimon_wire_write_builder_new(table, "codes", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
    check(builder.error, "paimon_wire_write_builder_new");
    paimon_wire_result_table_write write = paimon_wire_write_builder_new_write(builder.builder);
    check(write.error, "paimon_wire_write_builder_new_write");
    write_orders(write.write, 0, 10, PARTS, 2);
    paimon_wire_result_commit_messages messages = paimon_wire_table_write_prepare_commit(write.write);
    check(messages.error, "paimon_wire_table_write_prepare_commit");
    if (strcmp(what, "unrepresentable") == 0) {
      /* The newest older version that refuses them, whichever field it lacks. */
      int32_t current = paimon_wire_commit_messages_serializer_version();
      for (int32_t version = current - 1; version >= 1; version--) {
        paimon_wire_result_bytes old = paimon_wire_commit_messages_serialize_version(messages.messages, version);
        if (old.error != NULL && old.error->code == PAIMON_WIRE_ERROR_CODE_UNREPRESENTABLE) {
          expect_code(old.error, PAIMON_WIRE_ERROR_CODE_UNREPRESENTABLE, "UNREPRESENTABLE", "has no");
          break;
        }
        fprintf(stderr, "version %d: %s\n", (int)version, old.error ? old.error->message : "written");
        paimon_wire_error_free(old.error);
        paimon_wire_bytes_free(old.bytes);
        if (version == 1) {
          fprintf(stderr, "FAIL UNREPRESENTABLE: every version wrote the messages\n");
          return 1;
        }
      }
    } else {
      /* The same files twice, the second time with other metadata: two writers claim one
       * file. The second copy flips the low bit of one byte of the serialized bytes at a
       * time, until a variant decodes and its merge with the first is a MERGE_CONFLICT. */
      paimon_wire_result_bytes payload = paimon_wire_commit_messages_serialize(messages.messages);
      check(payload.error, "paimon_wire_commit_messages_serialize");
      paimon_wire_result_table_commit commit =
          paimon_wire_table_commit_new(table, "codes", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
      check(commit.error, "paimon_wire_table_commit_new");
      const paimon_wire_commit_messages *parts[2];
      parts[0] = decode(commit.commit, payload.bytes);
      parts[1] = decode(commit.commit, payload.bytes);
      paimon_wire_result_commit_messages same = paimon_wire_table_commit_merge(commit.commit, parts, 2);
      check(same.error, "merge of identical duplicates");
      paimon_wire_commit_messages_free(same.messages);
      paimon_wire_commit_messages_free((paimon_wire_commit_messages *)parts[1]);
      parts[1] = NULL;
      /* Patch: decode every variant with one byte changed until one decodes and differs. */
      for (size_t i = 0; i < payload.bytes.len && parts[1] == NULL; i++) {
        payload.bytes.data[i] ^= 0x01;
        paimon_wire_result_commit_messages changed = paimon_wire_commit_messages_deserialize(
            commit.commit, payload.bytes.data, payload.bytes.len,
            paimon_wire_commit_messages_serializer_version());
        if (changed.error == NULL) {
          const paimon_wire_commit_messages *pair[2] = {parts[0], changed.messages};
          paimon_wire_result_commit_messages merged = paimon_wire_table_commit_merge(commit.commit, pair, 2);
          if (merged.error != NULL && merged.error->code == PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT) {
            expect_code(merged.error, PAIMON_WIRE_ERROR_CODE_MERGE_CONFLICT, "MERGE_CONFLICT",
                        "with a different");
            parts[1] = changed.messages;
          } else {
            paimon_wire_error_free(merged.error);
            paimon_wire_commit_messages_free(merged.messages);
            paimon_wire_commit_messages_free(changed.messages);
          }
        } else {
          paimon_wire_error_free(changed.error);
        }
        payload.bytes.data[i] ^= 0x01;
      }
      if (parts[1] == NULL) {
        fprintf(stderr, "FAIL MERGE_CONFLICT: no one-bit change of the payload conflicts\n");
        return 1;
      }
      paimon_wire_commit_messages_free((paimon_wire_commit_messages *)parts[0]);
      paimon_wire_commit_messages_free((paimon_wire_commit_messages *)parts[1]);
      paimon_wire_table_commit_free(commit.commit);
      paimon_wire_bytes_free(payload.bytes);
    }
    paimon_wire_commit_messages_free(messages.messages);
    paimon_wire_table_write_free(write.write);
    paimon_wire_write_builder_free(builder.builder);
    paimon_wire_table_free(table);
  } else if (rest_echo) {
    check(paimon_wire_set_log_callback(print_record, NULL, PAIMON_WIRE_LOG_LEVEL_TRACE),
          "paimon_wire_set_log_callback");
    const char *keys[] = {"metastore", "uri", "token.provider", "token"};
    const char *values[] = {"rest", argv[3], "bear", argv[4]};
    paimon_wire_result_table table = paimon_wire_table_open(warehouse, "db.t", keys, values, 4);
    if (table.error == NULL) {
      fprintf(stderr, "FAIL REST_ECHO: the table opened\n");
      paimon_wire_table_free(table.table);
      return 1;
    }
    printf("error %d: %s\n", (int)table.error->code, table.error->message);
    paimon_wire_error_free(table.error);
    check(paimon_wire_set_log_callback(NULL, NULL, 0), "turning the log callback off");
  } else {
    return 2;
  }
  return 0;
}
