/*
 * Threads sharing handles: one opened table, one write builder and one table commit are used
 * by THREADS threads at once. Every thread asks the shared table for its routing and for the
 * bucket of every row (paimon_wire_table_bucket_ids), opens its own writer (from the shared
 * builder, or from a builder it makes from the shared table), writes the rows of its buckets
 * (bucket % THREADS == thread), prepares and serializes its messages, and decodes them through
 * the shared table commit; all writers write in parallel (a barrier starts them together).
 * The main thread then merges the parts and commits once.
 * Built with -fsanitize=thread by tests/threads.rs.
 *
 * usage: threads WAREHOUSE DATABASE.TABLE COMMIT_USER THREADS ROWS DT,DT,.. RUNTIME_WORKERS
 *
 * RUNTIME_WORKERS is the table runtime's worker threads (paimon_wire_table_options): 0 for a
 * current-thread runtime driven by the calling threads, N for N runtime threads of its own.
 */
#include <pthread.h>

#include "common.h"

#define MAX_THREADS 16

typedef struct {
  int index;
  int threads;
  int64_t rows;
  const char *const *partitions;
  int n_partitions;
  const char *commit_user;
  const paimon_wire_table *table;
  const paimon_wire_write_builder *builder;
  const paimon_wire_table_commit *commit;
  pthread_barrier_t *start;
  /* Out: the thread's messages, bound to `commit`, and the rows it wrote. */
  paimon_wire_commit_messages *part;
  int64_t written;
} worker_state;

static void *run_thread(void *arg) {
  worker_state *state = (worker_state *)arg;
  paimon_wire_routing routing;
  check(paimon_wire_table_routing(state->table, &routing), "paimon_wire_table_routing");
  if (routing.kind != PAIMON_WIRE_ROUTING_KIND_FIXED_BUCKET) {
    fprintf(stderr, "the test table must have fixed buckets\n");
    exit(1);
  }
  /* Even threads open their writer from the shared builder, odd threads make their own
   * builder from the shared table first. */
  paimon_wire_result_write_builder own_builder = {NULL, NULL};
  if (state->index % 2 == 1) {
    own_builder = paimon_wire_write_builder_new(state->table, state->commit_user, false,
                                           PAIMON_WIRE_WRITE_KIND_STANDARD);
    check(own_builder.error, "paimon_wire_write_builder_new");
  }
  paimon_wire_result_table_write write = paimon_wire_write_builder_new_write(
      own_builder.builder != NULL ? own_builder.builder : state->builder);
  check(write.error, "paimon_wire_write_builder_new_write");
  pthread_barrier_wait(state->start);

  state->written = write_orders_of_worker(state->table, write.write, 0, state->rows,
                                          state->partitions, state->n_partitions, state->index,
                                          state->threads, 0);
  paimon_wire_result_commit_messages messages = paimon_wire_table_write_prepare_commit(write.write);
  check(messages.error, "paimon_wire_table_write_prepare_commit");
  paimon_wire_result_bytes payload = paimon_wire_commit_messages_serialize(messages.messages);
  check(payload.error, "paimon_wire_commit_messages_serialize");
  paimon_wire_result_commit_messages part =
      paimon_wire_commit_messages_deserialize(state->commit, payload.bytes.data, payload.bytes.len,
                                         paimon_wire_commit_messages_serializer_version());
  check(part.error, "paimon_wire_commit_messages_deserialize");
  state->part = part.messages;

  paimon_wire_bytes_free(payload.bytes);
  paimon_wire_commit_messages_free(messages.messages);
  paimon_wire_table_write_free(write.write);
  paimon_wire_write_builder_free(own_builder.builder);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: %s WAREHOUSE DATABASE.TABLE COMMIT_USER THREADS ROWS DT,.. WORKERS\n",
            argv[0]);
    return 2;
  }
  int threads = atoi(argv[4]);
  if (threads < 1 || threads > MAX_THREADS) {
    fprintf(stderr, "THREADS must be 1 to %d\n", MAX_THREADS);
    return 2;
  }
  const char *partitions[16];
  int n_partitions = split_commas(argv[6], partitions, 16);

  paimon_wire_table_options *options = paimon_wire_table_options_new();
  check(paimon_wire_table_options_set_runtime_threads(options, (size_t)atoi(argv[7]), 8),
        "paimon_wire_table_options_set_runtime_threads");
  paimon_wire_result_table table =
      paimon_wire_table_open_with_options(argv[1], argv[2], NULL, NULL, 0, options);
  paimon_wire_table_options_free(options);
  check(table.error, "paimon_wire_table_open_with_options");
  paimon_wire_result_write_builder builder =
      paimon_wire_write_builder_new(table.table, argv[3], false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(builder.error, "paimon_wire_write_builder_new");
  paimon_wire_result_table_commit commit =
      paimon_wire_table_commit_new(table.table, argv[3], false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(commit.error, "paimon_wire_table_commit_new");

  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  pthread_t ids[MAX_THREADS];
  worker_state states[MAX_THREADS];
  for (int i = 0; i < threads; i++) {
    states[i] = (worker_state){.index = i,
                               .threads = threads,
                               .rows = atoll(argv[5]),
                               .partitions = partitions,
                               .n_partitions = n_partitions,
                               .commit_user = argv[3],
                               .table = table.table,
                               .builder = builder.builder,
                               .commit = commit.commit,
                               .start = &start,
                               .part = NULL,
                               .written = 0};
    if (pthread_create(&ids[i], NULL, run_thread, &states[i]) != 0) {
      fprintf(stderr, "pthread_create failed\n");
      return 2;
    }
  }
  const paimon_wire_commit_messages *parts[MAX_THREADS];
  int64_t written = 0;
  for (int i = 0; i < threads; i++) {
    pthread_join(ids[i], NULL);
    parts[i] = states[i].part;
    written += states[i].written;
    printf("thread %d wrote %lld rows\n", i, (long long)states[i].written);
  }
  pthread_barrier_destroy(&start);

  paimon_wire_result_commit_messages merged =
      paimon_wire_table_commit_merge(commit.commit, parts, (size_t)threads);
  check(merged.error, "paimon_wire_table_commit_merge");
  paimon_wire_result_commit result = paimon_wire_table_commit_commit(commit.commit, merged.messages, 1);
  check(result.error, "paimon_wire_table_commit_commit");
  paimon_wire_result_commit_messages_summary summary = paimon_wire_commit_messages_summarize(merged.messages);
  check(summary.error, "paimon_wire_commit_messages_summarize");
  printf("%s snapshot=%lld written=%lld rows=%lld\n",
         result.outcome.status == PAIMON_WIRE_COMMIT_STATUS_COMMITTED ? "committed" : "not-committed",
         (long long)result.outcome.snapshot_id, (long long)written,
         (long long)summary.summary.row_count);

  for (int i = 0; i < threads; i++) paimon_wire_commit_messages_free((paimon_wire_commit_messages *)parts[i]);
  paimon_wire_commit_messages_free(merged.messages);
  paimon_wire_table_commit_free(commit.commit);
  paimon_wire_write_builder_free(builder.builder);
  paimon_wire_table_free(table.table);
  return 0;
}
