/*
 * Native compaction through the C API, in one process: six jobs write and commit db.orders;
 * paimon_wire_table_plan_compaction plans a task per partition (six files each), every task
 * runs into a payload (paimon_wire_compaction_task_run, as a worker would), and a table commit
 * that verifies compactions commits them once under the planned snapshot
 * (paimon_wire_compaction_task_snapshot_id). A second plan is empty; bytes that are no task are
 * refused with INVALID_ARGUMENT. Prints `tasks=N`, `compacted snapshot S` and
 * `second plan: 0 task(s)`.
 *
 * usage: compaction WAREHOUSE   (db.orders: append, partitioned by dt)
 */
#include "common.h"

static const char *const PARTS[] = {"2024-01-01", "2024-01-02"};

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s WAREHOUSE\n", argv[0]);
    return 2;
  }
  const int32_t version = paimon_wire_commit_messages_serializer_version();
  paimon_wire_result_table table = paimon_wire_table_open(argv[1], "db.orders", NULL, NULL, 0);
  check(table.error, "paimon_wire_table_open");

  paimon_wire_result_table_commit jobs =
      paimon_wire_table_commit_new(table.table, "job", false, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(jobs.error, "paimon_wire_table_commit_new");
  for (int64_t job = 1; job <= 6; job++) {
    paimon_wire_bytes payload =
        write_payload(table.table, "job", PAIMON_WIRE_WRITE_KIND_STANDARD, 0, 20, PARTS, NULL);
    paimon_wire_result_commit_messages bound =
        paimon_wire_commit_messages_deserialize(jobs.commit, payload.data, payload.len, version);
    check(bound.error, "deserialize a job");
    paimon_wire_result_commit outcome = paimon_wire_table_commit_commit(jobs.commit, bound.messages, job);
    check(outcome.error, "commit a job");
    paimon_wire_commit_messages_free(bound.messages);
    paimon_wire_bytes_free(payload);
  }

  paimon_wire_result_payloads plan = paimon_wire_table_plan_compaction(table.table, false);
  check(plan.error, "paimon_wire_table_plan_compaction");
  size_t tasks = plan.payloads.count;
  printf("tasks=%zu\n", tasks);
  if (tasks != 2) {
    fprintf(stderr, "FAIL: expected a task per partition, got %zu\n", tasks);
    return 1;
  }
  int64_t snapshot = -1;
  check(paimon_wire_compaction_task_snapshot_id(plan.payloads.items[0].data,
                                                plan.payloads.items[0].len, &snapshot),
        "paimon_wire_compaction_task_snapshot_id");
  if (snapshot != 6) {
    fprintf(stderr, "FAIL: planned from snapshot %lld, not 6\n", (long long)snapshot);
    return 1;
  }

  paimon_wire_result_table_commit compactor = paimon_wire_table_commit_new_with_flags(
      table.table, "compactor", false, PAIMON_WIRE_WRITE_KIND_STANDARD,
      PAIMON_WIRE_BINDING_VERIFY_COMPACTION);
  check(compactor.error, "paimon_wire_table_commit_new_with_flags");
  paimon_wire_commit_messages *bound[2] = {NULL, NULL};
  for (size_t i = 0; i < tasks; i++) {
    paimon_wire_result_bytes payload = paimon_wire_compaction_task_run(
        table.table, plan.payloads.items[i].data, plan.payloads.items[i].len, version);
    check(payload.error, "paimon_wire_compaction_task_run");
    paimon_wire_result_commit_messages messages = paimon_wire_commit_messages_deserialize(
        compactor.commit, payload.bytes.data, payload.bytes.len, version);
    check(messages.error, "deserialize a compaction");
    bound[i] = messages.messages;
    paimon_wire_bytes_free(payload.bytes);
  }
  paimon_wire_result_commit_messages merged =
      paimon_wire_table_commit_merge(compactor.commit, (const paimon_wire_commit_messages *const *)bound, tasks);
  check(merged.error, "paimon_wire_table_commit_merge");
  paimon_wire_result_commit outcome =
      paimon_wire_table_commit_commit(compactor.commit, merged.messages, snapshot);
  check(outcome.error, "commit the compaction");
  if (outcome.outcome.status != PAIMON_WIRE_COMMIT_STATUS_COMMITTED) {
    fprintf(stderr, "FAIL: the compaction was not committed (status %d)\n", (int)outcome.outcome.status);
    return 1;
  }
  printf("compacted snapshot %lld\n", (long long)outcome.outcome.snapshot_id);

  paimon_wire_result_payloads again = paimon_wire_table_plan_compaction(table.table, false);
  check(again.error, "the second plan");
  printf("second plan: %zu task(s)\n", again.payloads.count);

  const uint8_t garbage[] = "{}";
  paimon_wire_result_bytes refused = paimon_wire_compaction_task_run(table.table, garbage, 2, version);
  expect_code(refused.error, PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "INVALID_ARGUMENT", "not a compaction task");
  int64_t ignored = 0;
  expect_code(paimon_wire_compaction_task_snapshot_id(garbage, 2, &ignored),
              PAIMON_WIRE_ERROR_CODE_INVALID_ARGUMENT, "INVALID_ARGUMENT", "not a compaction task");

  paimon_wire_payloads_free(again.payloads);
  paimon_wire_commit_messages_free(merged.messages);
  for (size_t i = 0; i < tasks; i++) paimon_wire_commit_messages_free(bound[i]);
  paimon_wire_payloads_free(plan.payloads);
  paimon_wire_table_commit_free(compactor.commit);
  paimon_wire_table_commit_free(jobs.commit);
  paimon_wire_table_free(table.table);
  return 0;
}
