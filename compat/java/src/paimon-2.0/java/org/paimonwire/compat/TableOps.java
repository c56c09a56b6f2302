package org.paimonwire.compat;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowKind;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

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
 * create-table --warehouse W --table DB.T --kind append|pk
 * write  --warehouse W --table DB.T --commit-user U --identifier I --rows FROM:TO
 *        [--value-prefix P] --out F.bin
 * commit --warehouse W --table DB.T --commit-user U --identifier I --version V F.bin...
 * read   --warehouse W --table DB.T
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
            case "read":
                return read(named);
            default:
                return null;
        }
    }

    private static String req(Map<String, String> named, String key) {
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
    private static Catalog catalog(Map<String, String> named) throws IOException {
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
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    private static Table table(Catalog catalog, Map<String, String> named) throws Exception {
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
            default:
                throw new IllegalArgumentException("--kind is append or pk, not " + kind);
        }
        try (Catalog catalog = catalog(named)) {
            catalog.createDatabase(id.getDatabaseName(), true);
            catalog.createTable(id, schema.build(), false);
        }
        System.out.println("created " + kind + " table " + id.getFullName());
        return 0;
    }

    // ------------------------------------------------------------------ write

    /** A worker: writes the rows, prepares the commit and serializes the messages to a file. */
    private static int write(Map<String, String> named) throws Exception {
        String[] range = req(named, "--rows").split(":");
        int from = Integer.parseInt(range[0]);
        int to = Integer.parseInt(range[1]);
        String prefix = named.getOrDefault("--value-prefix", "v");
        long identifier = Long.parseLong(req(named, "--identifier"));
        List<CommitMessage> messages;
        try (Catalog catalog = catalog(named)) {
            // a worker never compacts: the coordinators commit appends only
            Table table =
                    table(catalog, named).copy(Collections.singletonMap("write-only", "true"));
            StreamWriteBuilder builder =
                    table.newStreamWriteBuilder().withCommitUser(req(named, "--commit-user"));
            try (StreamTableWrite write = builder.newWrite()) {
                for (int i = from; i < to; i++) {
                    write.write(
                            GenericRow.of(
                                    i,
                                    BinaryString.fromString("p" + Math.floorMod(i, 3)),
                                    BinaryString.fromString(prefix + i)));
                }
                messages = write.prepareCommit(false, identifier);
            }
        }
        byte[] bytes = Codec.serializeList(messages);
        Files.write(Paths.get(req(named, "--out")), bytes);
        System.out.println(
                "wrote rows "
                        + from
                        + ".."
                        + to
                        + ": "
                        + messages.size()
                        + " message(s), version "
                        + Codec.currentVersion()
                        + ", "
                        + bytes.length
                        + " bytes");
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
