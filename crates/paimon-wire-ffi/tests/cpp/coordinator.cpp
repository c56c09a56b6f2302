// The coordinator of a distributed write, in C++ through paimon_wire.hpp: decodes every
// worker's payload file through one table commit, merges the parts and commits them once.
//
// usage: coordinator WAREHOUSE DATABASE.TABLE COMMIT_USER COMMIT_ID PAYLOAD_FILE...
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "paimon_wire.hpp"

static std::vector<uint8_t> read_all(const char *path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(std::string("cannot open ") + path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

int main(int argc, char **argv) {
  if (argc < 6) {
    std::cerr << "usage: " << argv[0] << " WAREHOUSE DATABASE.TABLE COMMIT_USER COMMIT_ID PAYLOAD...\n";
    return 2;
  }
  try {
    paimon_wire::Table table = paimon_wire::Table::open(argv[1], argv[2]);
    paimon_wire::TableCommit commit = table.new_commit(argv[3]);
    std::vector<paimon_wire::CommitMessages> parts;
    for (int i = 5; i < argc; i++) parts.push_back(commit.deserialize_envelope(read_all(argv[i])));
    std::vector<const paimon_wire::CommitMessages *> views;
    for (const paimon_wire::CommitMessages &part : parts) views.push_back(&part);
    paimon_wire::CommitMessages merged = commit.merge(views);
    paimon_wire_commit_outcome outcome = commit.commit(merged, std::atoll(argv[4]));
    paimon_wire_commit_messages_summary summary = merged.summarize();
    const char *status = outcome.status == PAIMON_WIRE_COMMIT_STATUS_COMMITTED ? "committed"
                         : outcome.status == PAIMON_WIRE_COMMIT_STATUS_ALREADY_COMMITTED
                             ? "already-committed"
                             : "nothing-to-commit";
    std::printf("%s snapshot=%lld data_files=%zu rows=%lld\n", status,
                static_cast<long long>(outcome.snapshot_id), summary.data_file_count,
                static_cast<long long>(summary.row_count));
  } catch (const paimon_wire::Error &error) {
    std::cerr << "error " << static_cast<int>(error.code()) << ": " << error.what() << "\n";
    return 1;
  } catch (const std::exception &error) {
    std::cerr << "error: " << error.what() << "\n";
    return 2;
  }
  return 0;
}
