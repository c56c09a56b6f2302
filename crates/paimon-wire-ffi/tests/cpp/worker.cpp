// A worker of a distributed write, in C++ through paimon_wire.hpp: writes rows of the test
// table `orders`, prepares the commit and hands the enveloped payload to the coordinator as a
// file.
//
// usage: worker WAREHOUSE DATABASE.TABLE COMMIT_USER FIRST_ID ROWS DT,DT,.. OUT
#include <cstdio>
#include <fstream>
#include <iostream>

#include "common.h"
#include "paimon_wire.hpp"

int main(int argc, char **argv) {
  if (argc != 8) {
    std::cerr << "usage: " << argv[0] << " WAREHOUSE DATABASE.TABLE COMMIT_USER FIRST_ID ROWS DT,.. OUT\n";
    return 2;
  }
  const char *partitions[16];
  int n_partitions = split_commas(argv[6], partitions, 16);
  int64_t first_id = std::atoll(argv[4]), rows = std::atoll(argv[5]);
  try {
    // Settings from C++: two runtime worker threads, a capped blocking pool, named threads,
    // zstd files, full Arrow validation.
    paimon_wire::TableOptions settings;
    settings.runtime_threads(2, 4)
        .thread_name_prefix("pw-worker-")
        .table_option("file.compression", "zstd")
        .arrow_validation(true);
    paimon_wire::Table table = paimon_wire::Table::open(argv[1], argv[2], {}, &settings);
    paimon_wire::WriteBuilder builder = table.new_write_builder(argv[3]);
    paimon_wire::TableWrite write = builder.new_write();
    for (int64_t done = 0; done < rows; done += 64) {
      int64_t n = rows - done < 64 ? rows - done : 64;
      ArrowArray array;
      ArrowSchema schema;
      make_orders(first_id + done, n, partitions, n_partitions, &array, &schema);
      write.write_arrow_batch(&array, &schema);
    }
    paimon_wire::CommitMessages messages = write.prepare_commit();
    paimon_wire::Bytes payload = messages.serialize();
    paimon_wire::Bytes framed = paimon_wire::envelope_wrap(payload, paimon_wire::serializer_version());
    std::ofstream out(argv[7], std::ios::binary);
    out.write(reinterpret_cast<const char *>(framed.data()), static_cast<std::streamsize>(framed.size()));
    if (!out) {
      std::cerr << "cannot write " << argv[7] << "\n";
      return 2;
    }
    paimon_wire_commit_messages_summary summary = messages.summarize();
    // The payload's own summary, read in place from the bytes, counts the same.
    paimon_wire_commit_messages_summary read_in_place =
        paimon_wire::payload_summarize(payload, paimon_wire::serializer_version());
    if (read_in_place.message_count != summary.message_count ||
        read_in_place.data_file_count != summary.data_file_count ||
        read_in_place.row_count != summary.row_count) {
      std::cerr << "payload_summarize differs from the messages' summary\n";
      return 3;
    }
    std::printf("messages=%zu data_files=%zu rows=%lld\n", summary.message_count,
                summary.data_file_count, static_cast<long long>(summary.row_count));
  } catch (const paimon_wire::Error &error) {
    std::cerr << "error " << static_cast<int>(error.code()) << ": " << error.what() << "\n";
    return 1;
  }
  return 0;
}
