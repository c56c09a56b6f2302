package org.paimonwire.compat;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.fs.Path;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypes;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * Tables whose rows Paimon Java 2.0 assigns to fixed buckets, one per key type, so the Rust side
 * (compat/rust {@code check-buckets}) can recompute each row's bucket with paimon-wire's {@code
 * BucketRouter} and compare it with the bucket Java wrote the row into.
 *
 * <p>Database {@code buckets}: one append table {@code k_<type>} per key type ({@code id INT NOT
 * NULL, k TYPE}, {@code bucket = 7}, {@code bucket-key = k}, about one value in twenty null), a
 * primary-key table {@code pk_composite} (partition {@code pt}, primary key {@code (pt, a, b)},
 * so the bucket key is the trimmed primary key {@code (a, b)}, {@code bucket = 5}), and tables
 * for the {@code mod} and {@code hive} bucket functions. Values are random from the seed, with
 * each type's edge values first.
 */
final class BucketTables {

    private BucketTables() {}

    /** A key type, its table name, and a generator of its values. */
    private static final class KeyType {
        final String name;
        final DataType type;
        final Function<Random, Object> value;
        final Object[] edges;

        KeyType(String name, DataType type, Function<Random, Object> value, Object... edges) {
            this.name = name;
            this.type = type;
            this.value = value;
            this.edges = edges;
        }
    }

    private static BinaryString str(Random r, int minLen, int maxLen) {
        int len = minLen + r.nextInt(maxLen - minLen + 1);
        StringBuilder b = new StringBuilder();
        String alphabet = "abcxyzAZ09 _-é漢";
        for (int i = 0; i < len; i++) {
            b.append(alphabet.charAt(r.nextInt(alphabet.length())));
        }
        return BinaryString.fromString(b.toString());
    }

    private static byte[] bytes(Random r, int minLen, int maxLen) {
        byte[] b = new byte[minLen + r.nextInt(maxLen - minLen + 1)];
        r.nextBytes(b);
        return b;
    }

    private static Decimal decimal(Random r, int precision, int scale) {
        BigInteger unscaled = new BigInteger(precision * 3, r);
        BigInteger limit = BigInteger.TEN.pow(precision);
        unscaled = unscaled.mod(limit);
        if (r.nextBoolean()) {
            unscaled = unscaled.negate();
        }
        return Decimal.fromBigDecimal(new BigDecimal(unscaled, scale), precision, scale);
    }

    private static Timestamp timestamp(Random r, int precision) {
        long millis = r.nextLong() % 4_102_444_800_000L; // within +-2100
        int nanos = 0;
        if (precision > 3) {
            int step = (int) Math.pow(10, 9 - precision);
            nanos = (r.nextInt(1_000_000) / step) * step;
        }
        if (precision == 0) {
            millis = Math.floorDiv(millis, 1000) * 1000;
        }
        return Timestamp.fromEpochMillis(millis, nanos);
    }

    private static List<KeyType> keyTypes() {
        List<KeyType> t = new ArrayList<>();
        t.add(new KeyType("boolean", DataTypes.BOOLEAN(), Random::nextBoolean, true, false));
        t.add(
                new KeyType(
                        "tinyint",
                        DataTypes.TINYINT(),
                        r -> (byte) r.nextInt(),
                        Byte.MIN_VALUE,
                        Byte.MAX_VALUE,
                        (byte) 0));
        t.add(
                new KeyType(
                        "smallint",
                        DataTypes.SMALLINT(),
                        r -> (short) r.nextInt(),
                        Short.MIN_VALUE,
                        Short.MAX_VALUE,
                        (short) 0));
        t.add(
                new KeyType(
                        "int",
                        DataTypes.INT(),
                        Random::nextInt,
                        Integer.MIN_VALUE,
                        Integer.MAX_VALUE,
                        0,
                        -1));
        t.add(
                new KeyType(
                        "bigint",
                        DataTypes.BIGINT(),
                        Random::nextLong,
                        Long.MIN_VALUE,
                        Long.MAX_VALUE,
                        0L,
                        -1L));
        t.add(
                new KeyType(
                        "float",
                        DataTypes.FLOAT(),
                        r -> (float) (r.nextGaussian() * 1e6),
                        0.0f,
                        -0.0f,
                        Float.MAX_VALUE,
                        Float.MIN_VALUE,
                        Float.NEGATIVE_INFINITY,
                        Float.NaN));
        t.add(
                new KeyType(
                        "double",
                        DataTypes.DOUBLE(),
                        r -> r.nextGaussian() * 1e12,
                        0.0d,
                        -0.0d,
                        Double.MAX_VALUE,
                        Double.MIN_VALUE,
                        Double.POSITIVE_INFINITY,
                        Double.NaN));
        t.add(new KeyType("decimal_5_2", DataTypes.DECIMAL(5, 2), r -> decimal(r, 5, 2)));
        t.add(new KeyType("decimal_18_6", DataTypes.DECIMAL(18, 6), r -> decimal(r, 18, 6)));
        t.add(new KeyType("decimal_30_8", DataTypes.DECIMAL(30, 8), r -> decimal(r, 30, 8)));
        t.add(new KeyType("decimal_38_0", DataTypes.DECIMAL(38, 0), r -> decimal(r, 38, 0)));
        t.add(new KeyType("char_4", DataTypes.CHAR(4), r -> str(r, 4, 4)));
        t.add(
                new KeyType(
                        "varchar_12",
                        DataTypes.VARCHAR(12),
                        r -> str(r, 0, 12),
                        BinaryString.fromString("")));
        t.add(
                new KeyType(
                        "string",
                        DataTypes.STRING(),
                        r -> str(r, 0, 40),
                        BinaryString.fromString(""),
                        BinaryString.fromString("1234567"),
                        BinaryString.fromString("12345678")));
        t.add(new KeyType("binary_3", DataTypes.BINARY(3), r -> bytes(r, 3, 3)));
        t.add(new KeyType("varbinary_9", DataTypes.VARBINARY(9), r -> bytes(r, 0, 9)));
        t.add(new KeyType("bytes", DataTypes.BYTES(), r -> bytes(r, 0, 30), (Object) new byte[0]));
        t.add(
                new KeyType(
                        "date",
                        DataTypes.DATE(),
                        r -> r.nextInt(200_000) - 100_000,
                        0,
                        -1,
                        2_932_896));
        t.add(
                new KeyType(
                        "time",
                        DataTypes.TIME(),
                        r -> r.nextInt(86_400) * 1000,
                        0,
                        86_399_000));
        t.add(new KeyType("timestamp_0", DataTypes.TIMESTAMP(0), r -> timestamp(r, 0)));
        t.add(new KeyType("timestamp_3", DataTypes.TIMESTAMP(3), r -> timestamp(r, 3)));
        t.add(new KeyType("timestamp_6", DataTypes.TIMESTAMP(6), r -> timestamp(r, 6)));
        t.add(new KeyType("timestamp_9", DataTypes.TIMESTAMP(9), r -> timestamp(r, 9)));
        t.add(
                new KeyType(
                        "timestamp_ltz_3",
                        DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(3),
                        r -> timestamp(r, 3)));
        t.add(
                new KeyType(
                        "timestamp_ltz_6",
                        DataTypes.TIMESTAMP_WITH_LOCAL_TIME_ZONE(6),
                        r -> timestamp(r, 6)));
        return t;
    }

    static int create(String warehouse, Map<String, String> named) throws Exception {
        int rows = Integer.parseInt(named.getOrDefault("--rows", "300"));
        long seed = Long.parseLong(named.getOrDefault("--seed", "16"));
        int tables = 0;
        try (Catalog catalog =
                CatalogFactory.createCatalog(CatalogContext.create(new Path(warehouse)))) {
            catalog.createDatabase("buckets", true);
            for (KeyType k : keyTypes()) {
                Random r = new Random(seed + k.name.hashCode());
                Identifier id = Identifier.create("buckets", "k_" + k.name);
                Schema schema =
                        Schema.newBuilder()
                                .column("id", DataTypes.INT().notNull())
                                .column("k", k.type)
                                .option("bucket", "7")
                                .option("bucket-key", "k")
                                .option("file.format", "parquet")
                                .build();
                List<GenericRow> data = new ArrayList<>();
                for (int i = 0; i < rows; i++) {
                    Object v;
                    if (i < k.edges.length) {
                        v = k.edges[i];
                    } else if (i == k.edges.length || r.nextInt(20) == 0) {
                        v = null;
                    } else {
                        v = k.value.apply(r);
                    }
                    data.add(GenericRow.of(i, v));
                }
                writeTable(catalog, id, schema, data);
                tables++;
            }

            Random r = new Random(seed);
            List<GenericRow> pk = new ArrayList<>();
            for (int i = 0; i < rows; i++) {
                pk.add(
                        GenericRow.of(
                                BinaryString.fromString("p" + (i % 3)),
                                r.nextInt(),
                                str(r, 0, 20),
                                (long) i));
            }
            writeTable(
                    catalog,
                    Identifier.create("buckets", "pk_composite"),
                    Schema.newBuilder()
                            .column("pt", DataTypes.STRING().notNull())
                            .column("a", DataTypes.INT().notNull())
                            .column("b", DataTypes.STRING().notNull())
                            .column("v", DataTypes.BIGINT())
                            .partitionKeys("pt")
                            .primaryKey("pt", "a", "b")
                            .option("bucket", "5")
                            .option("file.format", "parquet")
                            .build(),
                    pk);
            tables++;

            List<GenericRow> mod = new ArrayList<>();
            for (int i = 0; i < rows; i++) {
                mod.add(GenericRow.of(i, i == 0 ? null : r.nextLong()));
            }
            writeTable(
                    catalog,
                    Identifier.create("buckets", "mod_bigint"),
                    Schema.newBuilder()
                            .column("id", DataTypes.INT().notNull())
                            .column("k", DataTypes.BIGINT())
                            .option("bucket", "6")
                            .option("bucket-key", "k")
                            .option("bucket-function.type", "mod")
                            .option("file.format", "parquet")
                            .build(),
                    mod);
            tables++;

            List<GenericRow> hive = new ArrayList<>();
            for (int i = 0; i < rows; i++) {
                hive.add(
                        GenericRow.of(
                                i, i == 0 ? null : r.nextInt(), i == 1 ? null : str(r, 0, 10)));
            }
            writeTable(
                    catalog,
                    Identifier.create("buckets", "hive_int_string"),
                    Schema.newBuilder()
                            .column("id", DataTypes.INT().notNull())
                            .column("a", DataTypes.INT())
                            .column("b", DataTypes.STRING())
                            .option("bucket", "4")
                            .option("bucket-key", "a,b")
                            .option("bucket-function.type", "hive")
                            .option("file.format", "parquet")
                            .build(),
                    hive);
            tables++;
        }
        System.out.println("bucket tables " + tables + ", rows each " + rows);
        return 0;
    }

    private static void writeTable(
            Catalog catalog, Identifier id, Schema schema, List<GenericRow> rows)
            throws Exception {
        catalog.createTable(id, schema, false);
        Table table = catalog.getTable(id);
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        List<CommitMessage> messages;
        try (BatchTableWrite write = builder.newWrite()) {
            for (GenericRow row : rows) {
                write.write(row);
            }
            messages = write.prepareCommit();
        }
        try (BatchTableCommit commit = builder.newCommit()) {
            commit.commit(messages);
        }
    }
}
