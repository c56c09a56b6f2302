package org.paimonwire.compat;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.io.DataInputDeserializer;
import org.apache.paimon.options.Options;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageSerializer;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.types.DataTypes;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Paimon's own coordinator, timed end to end on payload files (issue 15), the Java side of
 * {@code coordinator-e2e} in crates/paimon-wire-bench:
 *
 * <pre>
 * commit-bench --kind append|pk [--version 12] [--warmup-seconds 20] [--iterations 5] DIR
 * </pre>
 *
 * <p>Every iteration makes a fresh table in a new temp warehouse and creates the data and
 * changelog files the payloads add, empty, from {@code DIR/files.list} (not timed; the same
 * schema as the Rust side's {@code create_w3_table} / {@code create_pk_table}), then times: opening the
 * table, a {@code StreamTableCommit}, reading every {@code DIR/*.bin} payload file and
 * {@code CommitMessageSerializer.deserializeList} of each, and one {@code filterAndCommit} of all
 * messages under identifier 1 (which writes the manifests and snapshot 1). {@code
 * filterAndCommit} is what {@code TableOps commit} and Flink's committer use; it needs no
 * writer. The warm-up repeats whole iterations for at least {@code --warmup-seconds} (so C2 has
 * compiled the decoder and the commit path). Garbage collection is part of the time.
 *
 * <p>Prints {@code commit-bench impl=java-R kind=K payloads=P files=F iterations=N median_ns=T
 * min_ns=T max_ns=T vmhwm_kb=R max_heap_mb=H}: {@code files} counts the new data files committed,
 * {@code vmhwm_kb} is the JVM process's peak resident set size at the end (VmHWM), {@code
 * max_heap_mb} the heap the JVM may grow to ({@code -Xmx}, e.g. through JAVA_TOOL_OPTIONS).
 */
final class CommitBench {

    private CommitBench() {}

    /** Entry point from {@link Harness}: returns the exit code, or null for another command. */
    static Integer run(String cmd, Map<String, String> named, List<String> positional)
            throws Exception {
        if (!"commit-bench".equals(cmd)) {
            return null;
        }
        String kind = TableOps.req(named, "--kind");
        if (!kind.equals("append") && !kind.equals("pk")) {
            throw new IllegalArgumentException("--kind is append or pk, not " + kind);
        }
        int version = Integer.parseInt(named.getOrDefault("--version", "12"));
        double warmupSeconds = Double.parseDouble(named.getOrDefault("--warmup-seconds", "20"));
        int iterations = Integer.parseInt(named.getOrDefault("--iterations", "5"));
        if (positional.size() != 1 || iterations < 1) {
            throw new IllegalArgumentException("commit-bench takes one payload directory");
        }
        List<Path> files = new ArrayList<>();
        try (Stream<Path> list = Files.list(Paths.get(positional.get(0)))) {
            list.filter(p -> p.toString().endsWith(".bin")).sorted().forEach(files::add);
        }
        if (files.isEmpty()) {
            throw new IllegalArgumentException("no payload files (*.bin) in " + positional.get(0));
        }

        long warmupEnd = System.nanoTime() + (long) (warmupSeconds * 1e9);
        int warmups = 0;
        do {
            commitOnce(kind, version, files);
            warmups++;
        } while (System.nanoTime() < warmupEnd);
        System.err.println("commit-bench: " + warmups + " warm-up iteration(s)");

        long[] times = new long[iterations];
        int dataFiles = 0;
        for (int i = 0; i < iterations; i++) {
            long[] result = commitOnce(kind, version, files);
            times[i] = result[0];
            dataFiles = (int) result[1];
        }
        Arrays.sort(times);
        System.out.println(
                "commit-bench impl=java-"
                        + Harness.release()
                        + " kind="
                        + kind
                        + " payloads="
                        + files.size()
                        + " files="
                        + dataFiles
                        + " iterations="
                        + iterations
                        + " median_ns="
                        + times[iterations / 2]
                        + " min_ns="
                        + times[0]
                        + " max_ns="
                        + times[iterations - 1]
                        + " vmhwm_kb="
                        + peakRssKib()
                        + " max_heap_mb="
                        + Runtime.getRuntime().maxMemory() / (1024 * 1024));
        return 0;
    }

    /** One commit on a fresh table: {time in ns, new data files committed}. */
    private static long[] commitOnce(String kind, int version, List<Path> files) throws Exception {
        Path warehouse = Files.createTempDirectory("commit-bench");
        try {
            Options options = new Options();
            options.set("warehouse", warehouse.toString());
            try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options))) {
                Identifier id = Identifier.create("db", kind.equals("pk") ? "pk" : "w3");
                catalog.createDatabase("db", true);
                catalog.createTable(id, schema(kind), false);
                createListedFiles(
                        files.get(0).getParent(),
                        warehouse.resolve("db.db").resolve(id.getObjectName()));

                long start = System.nanoTime();
                Table table = catalog.getTable(id);
                CommitMessageSerializer serializer = new CommitMessageSerializer();
                List<CommitMessage> messages = new ArrayList<>();
                for (Path file : files) {
                    byte[] bytes = Files.readAllBytes(file);
                    messages.addAll(
                            serializer.deserializeList(version, new DataInputDeserializer(bytes)));
                }
                int committed;
                try (StreamTableCommit commit =
                        table.newStreamWriteBuilder().withCommitUser("commit-bench").newCommit()) {
                    committed = commit.filterAndCommit(Collections.singletonMap(1L, messages));
                }
                long elapsed = System.nanoTime() - start;

                long snapshot = table.latestSnapshot().map(s -> s.id()).orElse(0L);
                if (committed != 1 || snapshot != 1) {
                    throw new IllegalStateException(
                            "expected snapshot 1 committed, got " + committed + " / " + snapshot);
                }
                long dataFiles = 0;
                for (CommitMessage m : messages) {
                    dataFiles +=
                            ((org.apache.paimon.table.sink.CommitMessageImpl) m)
                                    .newFilesIncrement()
                                    .newFiles()
                                    .size();
                }
                return new long[] {elapsed, dataFiles};
            }
        } finally {
            try (Stream<Path> walk = Files.walk(warehouse)) {
                walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * Creates every file of {@code DIR/files.list} (written by {@code coordinator-e2e write}: the
     * data and changelog files the payloads add, relative to the table directory), empty:
     * filterAndCommit checks that the files it adds exist, and workers would have written them.
     */
    private static void createListedFiles(Path dir, Path tableDir) throws IOException {
        java.util.Set<Path> made = new java.util.HashSet<>();
        for (String line : Files.readAllLines(dir.resolve("files.list"))) {
            Path file = tableDir.resolve(line);
            if (made.add(file.getParent())) {
                Files.createDirectories(file.getParent());
            }
            Files.createFile(file);
        }
    }

    /** The same tables as create_w3_table and create_pk_table of paimon-wire-bench. */
    private static Schema schema(String kind) {
        Schema.Builder schema = Schema.newBuilder();
        if (kind.equals("append")) {
            schema.column("dt", DataTypes.INT());
            for (int c = 0; c < 20; c++) {
                schema.column("c" + c, DataTypes.BIGINT());
            }
            schema.partitionKeys("dt").option("bucket", "-1");
        } else {
            schema.column("dt", DataTypes.INT().notNull())
                    .column("k0", DataTypes.BIGINT().notNull())
                    .column("k1", DataTypes.BIGINT().notNull());
            for (int c = 0; c < 7; c++) {
                schema.column("v" + c, DataTypes.BIGINT());
            }
            schema.partitionKeys("dt").primaryKey("dt", "k0", "k1").option("bucket", "16");
        }
        return schema.build();
    }

    /** This process's peak resident set size so far, in KiB (VmHWM of /proc/self/status). */
    private static long peakRssKib() throws IOException {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.substring(6).replace("kB", "").trim());
            }
        }
        return -1;
    }
}
