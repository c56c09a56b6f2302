/*
 * The coordinator of a distributed write: reads every worker's payload file, deserializes it
 * through one table commit (which fixes table, commit user and mode), merges the parts and
 * commits them once under a commit identifier. Prints the outcome on stdout.
 *
 * usage: coordinator WAREHOUSE DATABASE.TABLE COMMIT_USER OVERWRITE(0|1) COMMIT_ID
 *                    CRASH_AFTER_COMMIT(0|1) PAYLOAD_FILE...
 *
 * With CRASH_AFTER_COMMIT=1 the process kills itself with SIGKILL right after the commit
 * returns, before reporting anything, as a coordinator crash would.
 */
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "common.h"

static void run_coordinator(const char *warehouse, const char *table_name,
                            const char *commit_user, bool overwrite, int64_t commit_id,
                            bool crash_after_commit, char *const *paths, int n_paths) {
  paimon_wire_result_table table = paimon_wire_table_open(warehouse, table_name, NULL, NULL, 0);
  check(table.error, "paimon_wire_table_open");
  paimon_wire_result_table_commit commit =
      paimon_wire_table_commit_new(table.table, commit_user, overwrite, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(commit.error, "paimon_wire_table_commit_new");

  const paimon_wire_commit_messages **parts =
      (const paimon_wire_commit_messages **)checked_malloc(sizeof(void *) * (size_t)n_paths);
  for (int i = 0; i < n_paths; i++) { /* bytes from each worker */
    size_t len;
    uint8_t *framed = read_file(paths[i], &len);
    paimon_wire_result_envelope envelope = paimon_wire_envelope_unwrap(framed, len);
    check(envelope.error, "paimon_wire_envelope_unwrap");
    paimon_wire_result_commit_messages part = paimon_wire_commit_messages_deserialize(
        commit.commit, envelope.envelope.payload, envelope.envelope.payload_len,
        envelope.envelope.serializer_version);
    check(part.error, "paimon_wire_commit_messages_deserialize");
    parts[i] = part.messages;
    free(framed);
  }
  paimon_wire_result_commit_messages merged =
      paimon_wire_table_commit_merge(commit.commit, parts, (size_t)n_paths);
  check(merged.error, "paimon_wire_table_commit_merge");
  paimon_wire_result_commit result = paimon_wire_table_commit_commit(commit.commit, merged.messages, commit_id);
  check(result.error, "paimon_wire_table_commit_commit");
  if (crash_after_commit) kill(getpid(), SIGKILL);

  paimon_wire_result_commit_messages_summary summary = paimon_wire_commit_messages_summarize(merged.messages);
  check(summary.error, "paimon_wire_commit_messages_summary");
  const char *status = result.outcome.status == PAIMON_WIRE_COMMIT_STATUS_COMMITTED ? "committed"
                       : result.outcome.status == PAIMON_WIRE_COMMIT_STATUS_ALREADY_COMMITTED
                           ? "already-committed"
                           : "nothing-to-commit";
  printf("%s snapshot=%lld data_files=%zu rows=%lld\n", status,
         (long long)result.outcome.snapshot_id, summary.summary.data_file_count,
         (long long)summary.summary.row_count);

  for (int i = 0; i < n_paths; i++) paimon_wire_commit_messages_free((paimon_wire_commit_messages *)parts[i]);
  free(parts);
  paimon_wire_commit_messages_free(merged.messages);
  paimon_wire_table_commit_free(commit.commit);
  paimon_wire_table_free(table.table);
}

int main(int argc, char **argv) {
  if (argc < 8) {
    fprintf(stderr,
            "usage: %s WAREHOUSE DATABASE.TABLE COMMIT_USER OVERWRITE COMMIT_ID CRASH PAYLOAD...\n",
            argv[0]);
    return 2;
  }
  run_coordinator(argv[1], argv[2], argv[3], atoi(argv[4]) != 0, atoll(argv[5]),
                  atoi(argv[6]) != 0, argv + 7, argc - 7);
  return 0;
}
