package org.paimonwire.compat;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.TableCommitImpl;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A frontend as Apache Doris's Paimon connector runs one, written here on Paimon 2.0's public
 * API from the connector's documented behaviour (no code of it):
 *
 * <ul>
 *   <li>each backend's commit messages arrive as a DPCM frame: the magic {@code DPCM}, the
 *       serializer version and the body length as big-endian int32, then {@code
 *       CommitMessageSerializer.serializeList} bytes;
 *   <li>frames are deduplicated by their bytes (a retried report);
 *   <li>the transaction commits with {@code filterAndCommit({txn: messages})} under the commit
 *       user {@code doris_txn_<txn>};
 *   <li>when a commit's outcome is unknown it retries once, then reconciles with {@code
 *       SnapshotManager.findSnapshotsForIdentifiers}; it never rolls back then.
 * </ul>
 *
 * <p>{@code frontend --warehouse W --table DB.T --txn T [--overwrite true] [--lose-answer
 * true] FRAME...}: with {@code --lose-answer} the first commit's answer is dropped after it
 * applied (the failure the test injects), so the frontend retries and reconciles. Prints one
 * line per frame, then {@code committed}, {@code already committed} or {@code reconciled}.
 */
final class DorisFrontend {

    private static final int HEADER = 12;

    private DorisFrontend() {}

    /** {@code body} (serializeList bytes at {@code version}) in a DPCM frame. */
    static byte[] frame(int version, byte[] body) {
        ByteBuffer out = ByteBuffer.allocate(HEADER + body.length);
        out.put(new byte[] {'D', 'P', 'C', 'M'}).putInt(version).putInt(body.length).put(body);
        return out.array();
    }

    /** The messages of one frame; refuses anything but one whole frame. */
    static List<CommitMessage> unframe(String name, byte[] bytes) throws IOException {
        if (bytes.length < HEADER
                || bytes[0] != 'D'
                || bytes[1] != 'P'
                || bytes[2] != 'C'
                || bytes[3] != 'M') {
            throw new IOException(name + ": not a DPCM frame");
        }
        ByteBuffer header = ByteBuffer.wrap(bytes, 4, 8);
        int version = header.getInt();
        int length = header.getInt();
        if (length != bytes.length - HEADER) {
            throw new IOException(
                    name + ": the frame declares " + length + " body bytes, "
                            + (bytes.length - HEADER) + " follow its header");
        }
        byte[] body = Arrays.copyOfRange(bytes, HEADER, bytes.length);
        List<CommitMessage> messages = Codec.deserializeList(version, body).messages;
        System.out.println(name + ": version " + version + ", " + messages.size() + " message(s)");
        return messages;
    }

    static int run(Map<String, String> named, List<String> frames) throws Exception {
        long txn = Long.parseLong(TableOps.req(named, "--txn"));
        boolean overwrite = Boolean.parseBoolean(named.getOrDefault("--overwrite", "false"));
        boolean loseAnswer = Boolean.parseBoolean(named.getOrDefault("--lose-answer", "false"));
        String commitUser = "doris_txn_" + txn;

        Set<ByteBuffer> seen = new HashSet<>();
        List<CommitMessage> messages = new ArrayList<>();
        for (String file : frames) {
            byte[] bytes = Files.readAllBytes(Paths.get(file));
            if (!seen.add(ByteBuffer.wrap(bytes))) {
                System.out.println(file + ": the same bytes as an earlier frame, skipped");
                continue;
            }
            messages.addAll(unframe(file, bytes));
        }
        Map<Long, List<CommitMessage>> byTxn = Collections.singletonMap(txn, messages);

        try (Catalog catalog = TableOps.catalog(named)) {
            FileStoreTable table = (FileStoreTable) TableOps.table(catalog, named);
            int committed = commit(table, commitUser, byTxn, overwrite);
            if (!loseAnswer) {
                System.out.println(
                        (committed == 0 ? "already committed" : "committed")
                                + " txn " + txn + " as " + commitUser + ": "
                                + messages.size() + " message(s); latest snapshot "
                                + table.latestSnapshot().map(Snapshot::id).orElse(null));
                return 0;
            }
            // The answer of that commit is lost: its outcome is unknown to this frontend. It
            // retries once (the identifier filter must make the retry commit nothing) ...
            int retried = commit(table, commitUser, byTxn, overwrite);
            // ... and reconciles: the transaction is committed iff a snapshot carries it.
            List<Snapshot> found =
                    table.snapshotManager()
                            .findSnapshotsForIdentifiers(commitUser, Collections.singletonList(txn));
            if (found.size() != 1 || retried != 0) {
                System.out.println(
                        "RECONCILE FAILED txn " + txn + ": retry committed " + retried
                                + ", snapshots carrying it " + found.size());
                return 1;
            }
            System.out.println(
                    "reconciled txn " + txn + " as " + commitUser + ": the retry committed nothing,"
                            + " snapshot " + found.get(0).id() + " carries it");
            return 0;
        }
    }

    private static int commit(
            FileStoreTable table,
            String commitUser,
            Map<Long, List<CommitMessage>> byTxn,
            boolean overwrite)
            throws Exception {
        try (TableCommitImpl commit = table.newCommit(commitUser)) {
            if (overwrite) {
                // INSERT OVERWRITE of the partitions written (dynamic partition overwrite).
                commit.withOverwrite(Collections.emptyMap());
            }
            return commit.filterAndCommit(byTxn);
        }
    }
}
