/*
 * Size-bounded payloads through the C API, in one process: a worker's messages split into
 * payloads of at most MAX bytes (paimon_wire_commit_messages_serialize_split), every one within
 * the limit; a set missing a payload refused (PAIMON_WIRE_ERROR_CODE_SPLIT_SET_INCOMPLETE) and a
 * limit too small for one file refused (PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED), nothing
 * committed; then the whole set, reversed and with one payload delivered twice, decoded with
 * paimon_wire_commit_messages_deserialize_parts and committed once. Prints `payloads=N` and
 * `committed snapshot S`.
 *
 * usage: split WAREHOUSE   (db.orders: append, partitioned by dt)
 */
#include "common.h"

static const char *const PARTS[] = {"2024-01-01", "2024-01-02"};

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WAREHOUSE\n", argv[0]);
    return 2;
  }
  const int32_t version = paimon_wire_commit_messages_serializer_version();
  const size_t max_bytes = 1024;
  paimon_wire_result_table table = paimon_wire_table_open(argv[1], "db.orders", NULL, NULL, 0);
  check(table.error, "paimon_wire_table_open");

  /* Four writers' messages, kept prepared: one worker's list of 8 messages. */
  paimon_wire_commit_messages *prepared = NULL;
  paimon_wire_bytes whole = write_payload(table.table, "split", PAIMON_WIRE_WRITE_KIND_STANDARD,
                                          0, 200, PARTS, &prepared);

  paimon_wire_result_payloads split = paimon_wire_commit_messages_serialize_split(prepared, version, max_bytes);
  check(split.error, "paimon_wire_commit_messages_serialize_split");
  size_t n = split.payloads.count;
  if (n < 2) {
    fprintf(stderr, "FAIL: a %zu-byte payload split at %zu bytes gave %zu payload(s)\n", whole.len,
            max_bytes, n);
    return 1;
  }
  for (size_t i = 0; i < n; i++) {
    if (split.payloads.items[i].len > max_bytes) {
      fprintf(stderr, "FAIL: payload %zu has %zu bytes\n", i, split.payloads.items[i].len);
      return 1;
    }
  }
  printf("payloads=%zu (of a %zu-byte payload)\n", n, whole.len);

  /* Refusals: a limit below the minimum, a limit one file does not fit. */
  paimon_wire_result_payloads tiny = paimon_wire_commit_messages_serialize_split(prepared, version, 16);
  expect_code(tiny.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "INVALID_ARGUMENT", "below the minimum");
  paimon_wire_payloads_free(tiny.payloads);
  paimon_wire_result_payloads small = paimon_wire_commit_messages_serialize_split(prepared, version, 256);
  expect_code(small.error, PAIMON_WIRE_ERROR_CODE_LIMIT_EXCEEDED, "LIMIT_EXCEEDED", "data file");
  paimon_wire_payloads_free(small.payloads);

  paimon_wire_result_table_commit commit =
      paimon_wire_table_commit_new(table.table, "split", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(commit.error, "paimon_wire_table_commit_new");

  /* The set reversed, payload 0 twice, and (first) without payload 1. */
  paimon_wire_payload_part *parts = calloc(n + 1, sizeof(paimon_wire_payload_part));
  for (size_t i = 0; i < n; i++) {
    paimon_wire_bytes item = split.payloads.items[n - 1 - i];
    parts[i] = (paimon_wire_payload_part){item.data, item.len, (uint32_t)(n - 1 - i), (uint32_t)n};
  }
  parts[n] = parts[n - 1];
  paimon_wire_payload_part *gap = calloc(n, sizeof(paimon_wire_payload_part));
  size_t gap_len = 0;
  for (size_t i = 0; i <= n; i++)
    if (parts[i].index != 1)
      gap[gap_len++] = parts[i];
  paimon_wire_result_commit_messages incomplete =
      paimon_wire_commit_messages_deserialize_parts(commit.commit, gap, gap_len, version);
  expect_code(incomplete.error, PAIMON_WIRE_ERROR_CODE_SPLIT_SET_INCOMPLETE, "SPLIT_SET_INCOMPLETE",
              "missing (index 1)");

  paimon_wire_result_commit_messages bound =
      paimon_wire_commit_messages_deserialize_parts(commit.commit, parts, n + 1, version);
  check(bound.error, "paimon_wire_commit_messages_deserialize_parts");
  paimon_wire_result_commit done = paimon_wire_table_commit_commit(commit.commit, bound.messages, 1);
  check(done.error, "paimon_wire_table_commit_commit");
  printf("committed snapshot %lld\n", (long long)done.outcome.snapshot_id);

  free(gap);
  free(parts);
  paimon_wire_commit_messages_free(bound.messages);
  paimon_wire_table_commit_free(commit.commit);
  paimon_wire_payloads_free(split.payloads);
  paimon_wire_bytes_free(whole);
  paimon_wire_commit_messages_free(prepared);
  paimon_wire_table_free(table.table);
  return 0;
}
