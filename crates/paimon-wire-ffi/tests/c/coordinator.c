/*
 * The coordinator of a distributed write: reads every worker's payload file, deserializes it
 * through one table commit (which fixes table, commit user and mode), merges the parts and
 * commits them once under a commit identifier. Prints the outcome on stdout.
 *
 * usage: coordinator [--with-compaction | --flags N] WAREHOUSE DATABASE.TABLE COMMIT_USER
 *                    OVERWRITE(0|1) COMMIT_ID CRASH_AFTER_COMMIT(0|1) PAYLOAD_FILE...
 *
 * The table commit comes from paimon_wire_table_commit_new (compaction results refused), or
 * with --with-compaction from paimon_wire_table_commit_new_with_compaction, or with --flags N
 * from paimon_wire_table_commit_new_with_flags(..., N).
 *
 * With CRASH_AFTER_COMMIT=1 the process kills itself with SIGKILL right after the commit
 * returns, before reporting anything, as a coordinator crash would.
 */
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>

#include "common.h"

/* Which paimon_wire_table_commit_new* function binds the table commit. */
typedef enum { BIND_DEFAULT, BIND_WITH_COMPACTION, BIND_WITH_FLAGS } binding_kind;

static void run_coordinator(binding_kind binding, uint32_t flags, const char *warehouse,
                            const char *table_name, const char *commit_user, bool overwrite,
                            int64_t commit_id, bool crash_after_commit, char *const *paths,
                            int n_paths) {
  paimon_wire_result_table table = paimon_wire_table_open(warehouse, table_name, NULL, NULL, 0);
  check(table.error, "paimon_wire_table_open");
  paimon_wire_result_table_commit commit;
  switch (binding) {
    case BIND_WITH_COMPACTION:
      commit = paimon_wire_table_commit_new_with_compaction(table.table, commit_user, overwrite,
                                                            PAIMON_WIRE_WRITE_KIND_STANDARD);
      check(commit.error, "paimon_wire_table_commit_new_with_compaction");
      break;
    case BIND_WITH_FLAGS:
      commit = paimon_wire_table_commit_new_with_flags(table.table, commit_user, overwrite,
                                                       PAIMON_WIRE_WRITE_KIND_STANDARD, flags);
      check(commit.error, "paimon_wire_table_commit_new_with_flags");
      break;
    default:
      commit = paimon_wire_table_commit_new(table.table, commit_user, overwrite,
                                            PAIMON_WIRE_WRITE_KIND_STANDARD);
      check(commit.error, "paimon_wire_table_commit_new");
      break;
  }

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
  binding_kind binding = BIND_DEFAULT;
  uint32_t flags = 0;
  int first = 1;
  if (argc > 1 && strcmp(argv[1], "--with-compaction") == 0) {
    binding = BIND_WITH_COMPACTION;
    first = 2;
  } else if (argc > 2 && strcmp(argv[1], "--flags") == 0) {
    binding = BIND_WITH_FLAGS;
    flags = (uint32_t)strtoul(argv[2], NULL, 0);
    first = 3;
  }
  if (argc - first < 7) {
    fprintf(stderr,
            "usage: %s [--with-compaction | --flags N] WAREHOUSE DATABASE.TABLE COMMIT_USER "
            "OVERWRITE COMMIT_ID CRASH PAYLOAD...\n",
            argv[0]);
    return 2;
  }
  char **args = argv + first;
  run_coordinator(binding, flags, args[0], args[1], args[2], atoi(args[3]) != 0, atoll(args[4]),
                  atoi(args[5]) != 0, args + 6, argc - first - 6);
  return 0;
}
