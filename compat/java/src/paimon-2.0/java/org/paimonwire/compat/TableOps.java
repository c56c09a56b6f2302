package org.paimonwire.compat;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.Snapshot;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.Table;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.TableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;

/**
 * Whole-table commands on a real filesystem warehouse (Paimon 2.0.0 only: they need the format
 * and catalog classes that only the shaded 2.0.0 jar brings). The harness calls {@link #run} for
 * the commands it does not know itself.
 *
 * <p>Every table has the columns {@code id INT, pt STRING, v STRING} and is partitioned by {@code
 * pt}. Row {@code i} of a write is {@code (i, "p" + i % 3, PREFIX + i)}: the Rust side
 * (compat/rust) writes the same rows, so both can check what a reader returns.
 *
 * <pre>
 * Every command also takes --options-file F (catalog options, e.g. for an s3:// warehouse).
 *
 * create-table --warehouse W --table DB.T --kind append|append-fixed|pk|pk-dv|dynamic
 * write  --warehouse W --table DB.T --commit-user U --identifier I
 *        --rows FROM:TO[:PREFIX][,...] [--value-prefix P] [--route W/N] [--compact true]
 *        [--overwrite true] [--assigner I/N] --out F.bin
 * commit --warehouse W --table DB.T --commit-user U --identifier I --version V F.bin...
 * compact --warehouse W --table DB.T --commit-user U --identifier I
 * compact-bench --source W --table DB.T --work DIR [--warmup N] [--iterations N]
 *        (see {@link CompactBench})
 * read   --warehouse W --table DB.T
 * check-hash-index --warehouse W --table DB.T
 *        every key in exactly one bucket's HASH index, and its row in that bucket
 * bucket-tables --warehouse W [--rows N] [--seed S]   (see {@link BucketTables})
 * </pre>
 */
final class TableOps {

    private TableOps() {}

    /** Runs a table command; null if {@code cmd} is not one. */
    static Integer run(String cmd, Map<String, String> named, List<String> positional)
            throws Exception {
        switch (cmd) {
            case "create-table":
                return createTable(named);
            case "write":
                return write(named);
            case "commit":
                return commit(named, positional);
            case "compact":
                return compact(named);
            case "compact-bench":
                return CompactBench.run(named);
            case "read":
                return read(named);
            case "bucket-tables":
                return BucketTables.create(req(named, "--warehouse"), named);
            case "check-hash-index":
                return checkHashIndex(named);
            case "frontend":
                return DorisFrontend.run(named, positional);
            default:
                return null;
        }
    }

    static String req(Map<String, String> named, String key) {
        String v = named.get(key);
        if (v == null) {
            throw new IllegalArgumentException("missing " + key);
        }
        return v;
    }

    /**
     * The catalog of {@code --warehouse}, with the catalog options of {@code --options-file} (a
     * Java properties file, the same file {@code paimon-wire --options-file} reads: for an
     * {@code s3://} warehouse the endpoint, region, path-style flag and keys). Option values are
     * never printed.
     */
    static Catalog catalog(Map<String, String> named) throws IOException {
        Options options = new Options();
        String file = named.get("--options-file");
        if (file != null) {
            Properties properties = new Properties();
            try (Reader reader = Files.newBufferedReader(Paths.get(file))) {
                properties.load(reader);
            }
            for (String key : properties.stringPropertyNames()) {
                options.set(key, properties.getProperty(key));
            }
        }
        options.set("warehouse", req(named, "--warehouse"));
        if ("rest".equals(options.get("metastore"))) {
            // A REST catalog (metastore=rest, uri, token.provider, token; --warehouse is then
            // the catalog's warehouse name, not a path): RESTCatalog insists on a Hadoop
            // configuration, and Paimon's own loader of one wants hadoop-hdfs (HdfsConfiguration),
            // which is not on our classpath. A plain hadoop-common Configuration serves it.
            return CatalogFactory.createCatalog(
                    CatalogContext.create(options, new org.apache.hadoop.conf.Configuration()));
        }
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    static Table table(Catalog catalog, Map<String, String> named) throws Exception {
        return catalog.getTable(Identifier.fromString(req(named, "--table")));
    }

    // ------------------------------------------------------------------ create-table

    private static int createTable(Map<String, String> named) throws Exception {
        Identifier id = Identifier.fromString(req(named, "--table"));
        String kind = req(named, "--kind");
        Schema.Builder schema =
                Schema.newBuilder()
                        .column("id", DataTypes.INT().notNull())
                        .column("pt", DataTypes.STRING().notNull())
                        .column("v", DataTypes.STRING())
                        .partitionKeys("pt")
                        .option("file.format", "parquet");
        switch (kind) {
            case "append":
                schema.option("bucket", "-1");
                break;
            case "pk":
                schema.primaryKey("pt", "id").option("bucket", "2");
                break;
            case "append-fixed":
                // Bucketed append: Java's table writers compact it (an unaware-bucket table
                // needs a Flink or Spark job).
                schema.option("bucket", "2").option("bucket-key", "id");
                break;
            case "pk-dv":
                // Deletion vectors: Java's writers compact level 0 at every commit (lookup
                // compaction) and mark the rows they supersede in files they leave alone.
                schema.primaryKey("pt", "id")
                        .option("bucket", "2")
                        .option("deletion-vectors.enabled", "true");
                break;
            case "dynamic":
                // Paimon's default for a primary key: dynamic buckets from a HASH index. Small
                // buckets, so a few hundred keys fill several buckets per assigner.
                schema.primaryKey("pt", "id")
                        .option("bucket", "-1")
                        .option("dynamic-bucket.target-row-num", "8");
                break;
            default:
                throw new IllegalArgumentException(
                        "--kind is append, append-fixed, pk, pk-dv or dynamic, not " + kind);
        }
        try (Catalog catalog = catalog(named)) {
            catalog.createDatabase(id.getDatabaseName(), true);
            catalog.createTable(id, schema.build(), false);
        }
        System.out.println("created " + kind + " table " + id.getFullName());
        return 0;
    }

    // ------------------------------------------------------------------ write

    /**
     * A worker: writes the rows, prepares the commit and serializes the messages to a file.
     * {@code --rows} is {@code FROM:TO[:PREFIX]} ranges separated by commas (the prefix defaults
     * to {@code --value-prefix}); with {@code --route W/N} the worker writes only the rows whose
     * bucket ({@code TableWrite.getBucket}) is W modulo N, as an engine routing each bucket of a
     * primary-key table to one writer does. By default it never compacts ({@code write-only =
     * true}); with {@code --compact true} it is a Java writer as Flink runs it by default
     * ({@code write-only = false}) and waits for its compaction at prepare, so its messages
     * carry compaction results (with {@code num-sorted-run.compaction-trigger = 3}, so that a
     * few rounds compact).
     */
    private static int write(Map<String, String> named) throws Exception {
        String defaultPrefix = named.getOrDefault("--value-prefix", "v");
        int routeWorker = 0;
        int routeWorkers = 0;
        if (named.containsKey("--route")) {
            String[] route = named.get("--route").split("/");
            routeWorker = Integer.parseInt(route[0]);
            routeWorkers = Integer.parseInt(route[1]);
        }
        // A dynamic-bucket table's distributed writer, as Flink's DynamicBucketSink runs one:
        // assigner I of N (HashBucketAssigner with N channels and N assigners) that writes the
        // rows the channel computer sends it (BucketAssigner.computeAssigner) into the buckets
        // it assigns; TableWrite.write(row, bucket) keeps each bucket's HASH index.
        int assignId = -1;
        int assigners = 0;
        if (named.containsKey("--assigner")) {
            String[] assigner = named.get("--assigner").split("/");
            assignId = Integer.parseInt(assigner[0]);
            assigners = Integer.parseInt(assigner[1]);
        }
        long identifier = Long.parseLong(req(named, "--identifier"));
        boolean compact = Boolean.parseBoolean(named.getOrDefault("--compact", "false"));
        // An INSERT OVERWRITE writer: Java's batch write builder with overwrite, whose writers
        // ignore the table's previous files (sequence numbers start at 0 in every bucket).
        boolean overwrite = Boolean.parseBoolean(named.getOrDefault("--overwrite", "false"));
        if (overwrite && compact) {
            throw new IllegalArgumentException("--overwrite and --compact are exclusive");
        }
        List<CommitMessage> messages;
        int compactionFiles = 0;
        int written = 0;
        try (Catalog catalog = catalog(named)) {
            Map<String, String> options = new HashMap<>();
            options.put("write-only", compact ? "false" : "true");
            if (compact) {
                // Paimon's default trigger is 5 sorted runs; 3 makes a fresh writer per round
                // compact from the fourth round on, so a short test sees many compactions
                options.put("num-sorted-run.compaction-trigger", "3");
            }
            Table table = table(catalog, named).copy(options);
            StreamWriteBuilder builder =
                    table.newStreamWriteBuilder().withCommitUser(req(named, "--commit-user"));
            org.apache.paimon.index.HashBucketAssigner bucketAssigner = null;
            org.apache.paimon.table.sink.RowPartitionKeyExtractor extractor = null;
            if (assigners > 0) {
                org.apache.paimon.table.FileStoreTable store =
                        (org.apache.paimon.table.FileStoreTable) table;
                bucketAssigner =
                        new org.apache.paimon.index.HashBucketAssigner(
                                store.snapshotManager(),
                                req(named, "--commit-user"),
                                store.store().newIndexFileHandler(),
                                assigners,
                                assigners,
                                assignId,
                                store.coreOptions().dynamicBucketTargetRowNum(),
                                store.coreOptions().dynamicBucketMaxBuckets());
                extractor =
                        new org.apache.paimon.table.sink.RowPartitionKeyExtractor(store.schema());
            }
            // Lookup compaction (deletion-vector tables, lookup changelog) spills to a temporary
            // directory; closing the IOManager removes it.
            try (org.apache.paimon.disk.IOManager spill =
                            org.apache.paimon.disk.IOManager.create(
                                    System.getProperty("java.io.tmpdir"));
                    TableWrite write =
                            overwrite
                                    ? table.newBatchWriteBuilder().withOverwrite().newWrite()
                                    : builder.newWrite()) {
                write.withIOManager(spill);
                for (String range : req(named, "--rows").split(",")) {
                    String[] parts = range.split(":");
                    int from = Integer.parseInt(parts[0]);
                    int to = Integer.parseInt(parts[1]);
                    String prefix = parts.length > 2 ? parts[2] : defaultPrefix;
                    for (int i = from; i < to; i++) {
                        GenericRow row =
                                GenericRow.of(
                                        i,
                                        BinaryString.fromString("p" + Math.floorMod(i, 3)),
                                        BinaryString.fromString(prefix + i));
                        if (routeWorkers > 0
                                && write.getBucket(row) % routeWorkers != routeWorker) {
                            continue;
                        }
                        if (bucketAssigner != null) {
                            BinaryRow partition = extractor.partition(row);
                            int keyHash = extractor.trimmedPrimaryKey(row).hashCode();
                            int channel =
                                    org.apache.paimon.index.BucketAssigner.computeAssigner(
                                            partition.hashCode(), keyHash, assigners, assigners);
                            if (channel != assignId) {
                                continue;
                            }
                            write.write(row, bucketAssigner.assign(partition, keyHash));
                            written++;
                            continue;
                        }
                        write.write(row);
                        written++;
                    }
                }
                messages =
                        overwrite
                                ? ((BatchTableWrite) write).prepareCommit()
                                : ((StreamTableWrite) write).prepareCommit(compact, identifier);
            }
        }
        for (CommitMessage message : messages) {
            CompactIncrement increment = ((CommitMessageImpl) message).compactIncrement();
            compactionFiles += increment.compactBefore().size() + increment.compactAfter().size();
        }
        byte[] bytes = Codec.serializeList(messages);
        if ("dpcm".equals(named.get("--frame"))) {
            // As a Doris backend hands its messages to the frontend.
            bytes = DorisFrontend.frame(Codec.currentVersion(), bytes);
        } else if (named.containsKey("--frame") && !"raw".equals(named.get("--frame"))) {
            throw new IllegalArgumentException("--frame is raw or dpcm, not " + named.get("--frame"));
        }
        Files.write(Paths.get(req(named, "--out")), bytes);
        System.out.println(
                "wrote "
                        + written
                        + " rows of "
                        + req(named, "--rows")
                        + ": "
                        + messages.size()
                        + " message(s), version "
                        + Codec.currentVersion()
                        + ", "
                        + bytes.length
                        + " bytes, "
                        + compactionFiles
                        + " compaction file(s)");
        return 0;
    }

    // ------------------------------------------------------------------ check-hash-index

    /**
     * Java's view of a dynamic-bucket table's HASH indexes: every key hash is in one bucket's
     * index per partition, and every row (read split by split) is in the bucket the index names
     * for its trimmed primary key. Prints the key and bucket counts; fails naming the first key
     * that breaks either.
     */
    private static int checkHashIndex(Map<String, String> named) throws Exception {
        try (Catalog catalog = catalog(named)) {
            org.apache.paimon.table.FileStoreTable table =
                    (org.apache.paimon.table.FileStoreTable) table(catalog, named);
            org.apache.paimon.index.IndexFileHandler handler =
                    table.store().newIndexFileHandler();
            Map<BinaryRow, Map<Integer, Integer>> index = new HashMap<>();
            int buckets = 0;
            for (org.apache.paimon.manifest.IndexManifestEntry entry :
                    handler.scan(org.apache.paimon.index.HashIndexFile.HASH_INDEX)) {
                buckets++;
                Map<Integer, Integer> hashes =
                        index.computeIfAbsent(entry.partition().copy(), k -> new HashMap<>());
                try (org.apache.paimon.utils.IntIterator it =
                        handler.hashIndex(entry.partition(), entry.bucket())
                                .read(entry.indexFile())) {
                    while (true) {
                        int hash;
                        try {
                            hash = it.next();
                        } catch (java.io.EOFException end) {
                            break;
                        }
                        Integer other = hashes.put(hash, entry.bucket());
                        if (other != null && other != entry.bucket()) {
                            System.err.println(
                                    "key hash " + hash + " is in the HASH indexes of buckets "
                                            + other + " and " + entry.bucket());
                            return 1;
                        }
                    }
                }
            }
            org.apache.paimon.table.sink.RowPartitionKeyExtractor extractor =
                    new org.apache.paimon.table.sink.RowPartitionKeyExtractor(table.schema());
            ReadBuilder rb = table.newReadBuilder();
            int rows = 0;
            for (Split split : rb.newScan().plan().splits()) {
                DataSplit data = (DataSplit) split;
                try (RecordReader<InternalRow> reader = rb.newRead().createReader(split)) {
                    RecordReader.RecordIterator<InternalRow> batch;
                    while ((batch = reader.readBatch()) != null) {
                        InternalRow row;
                        while ((row = batch.next()) != null) {
                            rows++;
                            int hash = extractor.trimmedPrimaryKey(row).hashCode();
                            Map<Integer, Integer> hashes = index.get(data.partition());
                            Integer bucket = hashes == null ? null : hashes.get(hash);
                            if (bucket == null || bucket != data.bucket()) {
                                System.err.println(
                                        "row id=" + row.getInt(0) + " pt=" + row.getString(1)
                                                + " is in bucket " + data.bucket()
                                                + " but its HASH index names " + bucket);
                                return 1;
                            }
                        }
                        batch.releaseBatch();
                    }
                }
            }
            int keys = index.values().stream().mapToInt(Map::size).sum();
            System.out.println(
                    rows + " rows, " + keys + " key hashes in " + buckets
                            + " HASH indexes: every key in one bucket, every row in its key's bucket");
        }
        return 0;
    }

    // ------------------------------------------------------------------ commit

    /**
     * The coordinator: deserializes every payload with CommitMessageSerializer and commits them
     * once under the identifier (filterAndCommit: an identifier this commit user already
     * committed commits nothing).
     */
    private static int commit(Map<String, String> named, List<String> files) throws Exception {
        int version = Integer.parseInt(req(named, "--version"));
        long identifier = Long.parseLong(req(named, "--identifier"));
        List<CommitMessage> messages = new ArrayList<>();
        for (String f : files) {
            List<CommitMessage> part =
                    Codec.deserializeList(version, Files.readAllBytes(Paths.get(f))).messages;
            System.out.println(f + ": " + part.size() + " message(s)");
            messages.addAll(part);
        }
        try (Catalog catalog = catalog(named)) {
            Table table = table(catalog, named);
            StreamWriteBuilder builder =
                    table.newStreamWriteBuilder().withCommitUser(req(named, "--commit-user"));
            int committed;
            try (StreamTableCommit commit = builder.newCommit()) {
                Map<Long, List<CommitMessage>> byIdentifier = new HashMap<>();
                byIdentifier.put(identifier, messages);
                committed = commit.filterAndCommit(byIdentifier);
            }
            Long snapshot = table.latestSnapshot().map(s -> s.id()).orElse(null);
            System.out.println(
                    (committed == 0 ? "already committed" : "committed")
                            + " identifier "
                            + identifier
                            + ": "
                            + messages.size()
                            + " message(s); latest snapshot "
                            + snapshot);
        }
        return 0;
    }

    // ------------------------------------------------------------------ compact

    /**
     * A dedicated compaction job, as Flink's compact action runs one: a writer with {@code
     * write-only = false} fully compacts every partition and bucket that has data, and Java's
     * own committer commits the result (a COMPACT snapshot) under its commit user.
     */
    private static int compact(Map<String, String> named) throws Exception {
        long identifier = Long.parseLong(req(named, "--identifier"));
        try (Catalog catalog = catalog(named)) {
            Table table =
                    table(catalog, named).copy(Collections.singletonMap("write-only", "false"));
            Map<BinaryRow, Set<Integer>> buckets = new LinkedHashMap<>();
            ReadBuilder rb = table.newReadBuilder();
            for (Split split : rb.newScan().plan().splits()) {
                DataSplit data = (DataSplit) split;
                buckets.computeIfAbsent(data.partition().copy(), k -> new TreeSet<>())
                        .add(data.bucket());
            }
            StreamWriteBuilder builder =
                    table.newStreamWriteBuilder().withCommitUser(req(named, "--commit-user"));
            List<CommitMessage> messages;
            int units = 0;
            try (org.apache.paimon.disk.IOManager spill =
                            org.apache.paimon.disk.IOManager.create(
                                    System.getProperty("java.io.tmpdir"));
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
            int committed;
            try (StreamTableCommit commit = builder.newCommit()) {
                Map<Long, List<CommitMessage>> byIdentifier = new HashMap<>();
                byIdentifier.put(identifier, messages);
                committed = commit.filterAndCommit(byIdentifier);
            }
            Snapshot latest = table.latestSnapshot().orElse(null);
            System.out.println(
                    (committed == 0 ? "nothing compacted" : "compacted")
                            + " "
                            + units
                            + " bucket(s); latest snapshot "
                            + (latest == null ? "none" : latest.id() + " " + latest.commitKind()));
        }
        return 0;
    }

    // ------------------------------------------------------------------ read

    /** Every row of the latest snapshot as "id TAB pt TAB v", sorted, after a "rows N" line. */
    private static int read(Map<String, String> named) throws Exception {
        List<String> rows = new ArrayList<>();
        try (Catalog catalog = catalog(named)) {
            ReadBuilder rb = table(catalog, named).newReadBuilder();
            try (RecordReader<InternalRow> reader =
                    rb.newRead().createReader(rb.newScan().plan())) {
                reader.forEachRemaining(
                        row -> {
                            if (row.getRowKind() == RowKind.INSERT
                                    || row.getRowKind() == RowKind.UPDATE_AFTER) {
                                rows.add(
                                        row.getInt(0)
                                                + "\t"
                                                + row.getString(1)
                                                + "\t"
                                                + (row.isNullAt(2) ? "\\N" : row.getString(2)));
                            }
                        });
            }
        }
        rows.sort(
                (a, b) -> {
                    int ia = Integer.parseInt(a.substring(0, a.indexOf('\t')));
                    int ib = Integer.parseInt(b.substring(0, b.indexOf('\t')));
                    return ia != ib ? Integer.compare(ia, ib) : a.compareTo(b);
                });
        System.out.println("rows " + rows.size());
        for (String r : rows) {
            System.out.println(r);
        }
        return 0;
    }
}
