/*
 * A worker of a distributed write: writes rows of the test table `orders`, prepares the
 * commit, and hands the serialized commit messages (in an envelope, which carries the
 * serializer version) to the coordinator as a file.
 *
 * usage: worker WAREHOUSE DATABASE.TABLE COMMIT_USER OVERWRITE(0|1) FIRST_ID ROWS DT,DT,.. OUT
 *               [W/N | assigner:W/N]
 *
 * With W/N the worker is writer W of N of a fixed-bucket table: of rows FIRST_ID.., it writes
 * only those whose bucket (paimon_wire_table_bucket_ids) is W modulo N. With assigner:W/N it is
 * dynamic-bucket assigner W of N (paimon_wire_write_builder_new_assigner) and writes only the
 * rows paimon_wire_table_assigner_ids routes to W.
 */
#include <stdbool.h>
#include <string.h>

#include "common.h"

static void run_worker(const char *warehouse, const char *table_name, const char *commit_user,
                       bool overwrite, int64_t first_id, int64_t rows,
                       const char *const *partitions, int n_partitions, const char *out_path,
                       int route_worker, int route_workers, bool assigner) {
  paimon_wire_result_table table = paimon_wire_table_open(warehouse, table_name, NULL, NULL, 0);
  check(table.error, "paimon_wire_table_open");
  paimon_wire_result_write_builder builder =
      paimon_wire_write_builder_new(table.table, commit_user, overwrite, PAIMON_WIRE_WRITE_KIND_STANDARD);
  check(builder.error, "paimon_wire_write_builder_new");
  if (assigner) {
    paimon_wire_result_write_builder mine =
        paimon_wire_write_builder_new_assigner(builder.builder, route_worker, route_workers);
    check(mine.error, "paimon_wire_write_builder_new_assigner");
    paimon_wire_write_builder_free(builder.builder);
    builder = mine;
  }
  paimon_wire_result_table_write write = paimon_wire_write_builder_new_write(builder.builder);
  check(write.error, "paimon_wire_write_builder_new_write");

  if (route_workers > 0) {
    int64_t written =
        write_orders_of_worker(table.table, write.write, first_id, rows, partitions, n_partitions,
                               route_worker, route_workers, assigner ? route_workers : 0);
    printf("%s=%lld\n", assigner ? "assigned_rows" : "routed_rows", (long long)written);
  } else {
    write_orders(write.write, first_id, rows, partitions, n_partitions); /* Arrow C Data in */
  }
  paimon_wire_result_commit_messages messages = paimon_wire_table_write_prepare_commit(write.write);
  check(messages.error, "paimon_wire_table_write_prepare_commit");
  paimon_wire_result_bytes payload = paimon_wire_commit_messages_serialize(messages.messages);
  check(payload.error, "paimon_wire_commit_messages_serialize");
  paimon_wire_result_bytes framed = paimon_wire_envelope_wrap(payload.bytes.data, payload.bytes.len,
                                                    paimon_wire_commit_messages_serializer_version());
  check(framed.error, "paimon_wire_envelope_wrap");
  write_file(out_path, framed.bytes.data, framed.bytes.len); /* ... to the coordinator */

  paimon_wire_result_commit_messages_summary summary = paimon_wire_commit_messages_summarize(messages.messages);
  check(summary.error, "paimon_wire_commit_messages_summary");
  printf("messages=%zu data_files=%zu rows=%lld payload_bytes=%zu\n",
         summary.summary.message_count, summary.summary.data_file_count,
         (long long)summary.summary.row_count, payload.bytes.len);

  paimon_wire_bytes_free(framed.bytes);
  paimon_wire_bytes_free(payload.bytes);
  paimon_wire_commit_messages_free(messages.messages);
  paimon_wire_table_write_free(write.write);
  paimon_wire_write_builder_free(builder.builder);
  paimon_wire_table_free(table.table);
}

int main(int argc, char **argv) {
  if (argc != 9 && argc != 10) {
    fprintf(stderr,
            "usage: %s WAREHOUSE DATABASE.TABLE COMMIT_USER OVERWRITE FIRST_ID ROWS DT,.. OUT "
            "[W/N | assigner:W/N]\n",
            argv[0]);
    return 2;
  }
  int route_worker = 0, route_workers = 0;
  bool assigner = false;
  if (argc == 10) {
    const char *route = argv[9];
    if (strncmp(route, "assigner:", 9) == 0) {
      assigner = true;
      route += 9;
    }
    if (sscanf(route, "%d/%d", &route_worker, &route_workers) != 2 || route_workers <= 0 ||
        route_worker < 0 || route_worker >= route_workers) {
      fprintf(stderr, "W/N must be two numbers with 0 <= W < N, got %s\n", argv[9]);
      return 2;
    }
  }
  const char *partitions[16];
  int n_partitions = split_commas(argv[7], partitions, 16);
  run_worker(argv[1], argv[2], argv[3], atoi(argv[4]) != 0, atoll(argv[5]), atoll(argv[6]),
             partitions, n_partitions, argv[8], route_worker, route_workers, assigner);
  return 0;
}
