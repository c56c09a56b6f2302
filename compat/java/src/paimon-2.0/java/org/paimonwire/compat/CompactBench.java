package org.paimonwire.compat;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.Split;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Java's dedicated compaction job, JIT-warmed, for {@code scripts/bench-compaction}:
 *
 * <pre>
 * compact-bench --source W --table DB.T --work DIR [--warmup N] [--iterations N]
 * </pre>
 *
 * <p>Each iteration copies warehouse {@code W} to a fresh directory under {@code DIR} (not
 * timed), then compacts every bucket of the table fully as the harness's {@code compact} command
 * does ({@code TableWrite.compact(partition, bucket, true)}, prepare, commit) and times that.
 * The first {@code --warmup} iterations (default 2) warm the JIT and are not counted. Prints each
 * iteration's milliseconds, their median, and the peak heap the JVM used (the sum of its heap
 * pools' peak usage).
 */
final class CompactBench {

    private CompactBench() {}

    static int run(Map<String, String> named) throws Exception {
        Path source = Paths.get(TableOps.req(named, "--source"));
        Path work = Paths.get(TableOps.req(named, "--work"));
        int warmup = Integer.parseInt(named.getOrDefault("--warmup", "2"));
        int iterations = Integer.parseInt(named.getOrDefault("--iterations", "3"));
        List<Long> measured = new ArrayList<>();
        for (int i = 0; i < warmup + iterations; i++) {
            Path copy = work.resolve("iteration-" + i);
            copyTree(source, copy);
            Map<String, String> at = new HashMap<>(named);
            at.put("--warehouse", copy.toString());
            long started = System.nanoTime();
            int buckets = compactAll(at, i + 1);
            long millis = (System.nanoTime() - started) / 1_000_000;
            deleteTree(copy);
            String kind = i < warmup ? "warm-up" : "measured";
            System.out.println(kind + " iteration " + i + ": " + millis + " ms, " + buckets + " bucket(s)");
            if (i >= warmup) {
                measured.add(millis);
            }
        }
        Collections.sort(measured);
        System.out.println("median " + measured.get(measured.size() / 2) + " ms");
        long peakHeap = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                peakHeap += pool.getPeakUsage().getUsed();
            }
        }
        System.out.println("peak heap " + peakHeap / (1024 * 1024) + " MB");
        return 0;
    }

    /** Compacts every bucket fully and commits; returns how many buckets it compacted. */
    private static int compactAll(Map<String, String> named, long identifier) throws Exception {
        try (Catalog catalog = TableOps.catalog(named)) {
            Table table =
                    TableOps.table(catalog, named)
                            .copy(Collections.singletonMap("write-only", "false"));
            Map<BinaryRow, Set<Integer>> buckets = new LinkedHashMap<>();
            for (Split split : table.newReadBuilder().newScan().plan().splits()) {
                DataSplit data = (DataSplit) split;
                buckets.computeIfAbsent(data.partition().copy(), k -> new TreeSet<>())
                        .add(data.bucket());
            }
            StreamWriteBuilder builder = table.newStreamWriteBuilder().withCommitUser("bench");
            List<CommitMessage> messages;
            int units = 0;
            try (IOManager spill = IOManager.create(System.getProperty("java.io.tmpdir"));
                    StreamTableWrite write = builder.newWrite()) {
                write.withIOManager(spill);
                for (Map.Entry<BinaryRow, Set<Integer>> e : buckets.entrySet()) {
                    for (int bucket : e.getValue()) {
                        write.compact(e.getKey(), bucket, true);
                        units++;
                    }
                }
                messages = write.prepareCommit(true, identifier);
            }
            try (StreamTableCommit commit = builder.newCommit()) {
                Map<Long, List<CommitMessage>> byIdentifier = new HashMap<>();
                byIdentifier.put(identifier, messages);
                commit.filterAndCommit(byIdentifier);
            }
            return units;
        }
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> paths = Files.walk(from)) {
            for (Path path : (Iterable<Path>) paths::iterator) {
                Path target = to.resolve(from.relativize(path).toString());
                if (Files.isDirectory(path)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(path, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            List<Path> all = new ArrayList<>();
            paths.forEach(all::add);
            all.sort(Comparator.reverseOrder());
            for (Path path : all) {
                Files.delete(path);
            }
        }
    }
}
