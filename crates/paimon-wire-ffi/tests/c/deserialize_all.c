/*
 * Many workers' payloads decoded and merged in one call
 * (paimon_wire_commit_messages_deserialize_all), in one process: four workers' payloads, one
 * of them written at serializer version 12 (a worker of an older release), another DPCM-framed.
 * A payload cut short is refused with its code and its position, a version no release wrote is
 * refused naming the payload, and nothing is committed; then the four decode and commit once.
 * Prints `messages=M data_files=F rows=R` and `committed snapshot S`.
 *
 * usage: deserialize_all WAREHOUSE   (db.orders: append, partitioned by dt)
 */
#include "common.h"

static const char *const PARTS[] = {"2024-01-01", "2024-01-02"};

enum { WORKERS = 4 };

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WAREHOUSE\n", argv[0]);
    return 2;
  }
  const int32_t current = paimon_wire_commit_messages_serializer_version();
  paimon_wire_result_table table = paimon_wire_table_open(argv[1], "db.orders", NULL, NULL, 0);
  check(table.error, "paimon_wire_table_open");

  /* Worker w writes rows 50w .. 50w+49. Worker 1 serializes at version 12, worker 3 in a DPCM
   * frame, the others as paimon_wire_commit_messages_serialize does. */
  paimon_wire_bytes payloads[WORKERS];
  paimon_wire_payload handed[WORKERS];
  for (int w = 0; w < WORKERS; w++) {
    paimon_wire_commit_messages *prepared = NULL;
    payloads[w] = write_payload(table.table, "all", PAIMON_WIRE_WRITE_KIND_STANDARD, 50 * w, 50,
                                PARTS, &prepared);
    int32_t version = current;
    if (w == 1) {
      version = 12;
      paimon_wire_bytes_free(payloads[w]);
      paimon_wire_result_bytes older = paimon_wire_commit_messages_serialize_version(prepared, version);
      check(older.error, "paimon_wire_commit_messages_serialize_version");
      payloads[w] = older.bytes;
    } else if (w == 3) {
      paimon_wire_result_bytes framed = paimon_wire_dpcm_frame(payloads[w].data, payloads[w].len, version);
      check(framed.error, "paimon_wire_dpcm_frame");
      paimon_wire_bytes_free(payloads[w]);
      payloads[w] = framed.bytes;
    }
    handed[w] = (paimon_wire_payload){payloads[w].data, payloads[w].len, version};
    paimon_wire_commit_messages_free(prepared);
  }

  paimon_wire_result_table_commit commit =
      paimon_wire_table_commit_new(table.table, "all", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(commit.error, "paimon_wire_table_commit_new");

  /* Payload 2 cut short. */
  paimon_wire_payload cut[WORKERS];
  memcpy(cut, handed, sizeof(handed));
  cut[2].len /= 2;
  paimon_wire_result_commit_messages refused =
      paimon_wire_commit_messages_deserialize_all(commit.commit, cut, WORKERS);
  expect_code(refused.error, PAIMON_WIRE_ERROR_CODE_MALFORMED_PAYLOAD, "MALFORMED_PAYLOAD",
              "payload 2 (counting from 0 in the order given): ");
  /* Payload 3 handed over with a version no release wrote. */
  paimon_wire_payload unknown[WORKERS];
  memcpy(unknown, handed, sizeof(handed));
  unknown[3].version = 99;
  refused = paimon_wire_commit_messages_deserialize_all(commit.commit, unknown, WORKERS);
  expect_code(refused.error, PAIMON_WIRE_ERROR_CODE_UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION",
              "payloads[3].version");
  /* No payloads: empty messages, nothing to commit. */
  paimon_wire_result_commit_messages none =
      paimon_wire_commit_messages_deserialize_all(commit.commit, NULL, 0);
  check(none.error, "paimon_wire_commit_messages_deserialize_all (no payloads)");
  paimon_wire_commit_messages_free(none.messages);

  paimon_wire_result_commit_messages bound =
      paimon_wire_commit_messages_deserialize_all(commit.commit, handed, WORKERS);
  check(bound.error, "paimon_wire_commit_messages_deserialize_all");
  paimon_wire_result_commit_messages_summary summary =
      paimon_wire_commit_messages_summarize(bound.messages);
  check(summary.error, "paimon_wire_commit_messages_summarize");
  printf("messages=%zu data_files=%zu rows=%lld\n", summary.summary.message_count,
         summary.summary.data_file_count, (long long)summary.summary.row_count);
  paimon_wire_result_commit done = paimon_wire_table_commit_commit(commit.commit, bound.messages, 1);
  check(done.error, "paimon_wire_table_commit_commit");
  printf("committed snapshot %lld\n", (long long)done.outcome.snapshot_id);

  paimon_wire_commit_messages_free(bound.messages);
  paimon_wire_table_commit_free(commit.commit);
  for (int w = 0; w < WORKERS; w++)
    paimon_wire_bytes_free(payloads[w]);
  paimon_wire_table_free(table.table);
  return 0;
}
