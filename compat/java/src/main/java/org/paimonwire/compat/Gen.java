package org.paimonwire.compat;

import org.paimonwire.compat.Model.Dv;
import org.paimonwire.compat.Model.File;
import org.paimonwire.compat.Model.GlobalIndex;
import org.paimonwire.compat.Model.Index;
import org.paimonwire.compat.Model.Msg;
import org.paimonwire.compat.Model.Stats;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Deterministic pseudo-random CommitMessages. The generator always draws every field of the newest
 * model (so the random stream, and hence the messages, are the same for every release); {@link
 * #mask} then removes what a release's model (or a wire version) cannot carry.
 *
 * <p>Shapes: {@code normal}: message 0 is all-empty with an empty (arity 0) partition, message 1
 * has every list non-empty, the rest are random; {@code large}: every message holds about 50 data
 * files plus index files.
 */
final class Gen {

    enum Shape {
        NORMAL,
        LARGE
    }

    /** Characters for strings: ASCII, 2-, 3- and 4-byte UTF-8. */
    private static final String[] ALPHABET = {
        "a", "b", "c", "x", "y", "z", "0", "1", "7", "-", "_", ".", "/", "A", "Q", " ", "é", "ß",
        "ü", "Ω", "中", "文", "ぱ", "\uD83D\uDE00", "\u20AC"
    };

    private static final String[] INDEX_TYPES = {"HASH", "DELETION_VECTORS", "BTREE", "bitmap"};

    private final Random r;
    private final Shape shape;

    private Gen(long seed, Shape shape) {
        this.r = new Random(seed);
        this.shape = shape;
    }

    static List<Msg> generate(long seed, int count, Shape shape) {
        Gen g = new Gen(seed, shape);
        List<Msg> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            out.add(g.message(i));
        }
        return out;
    }

    // ------------------------------------------------------------------ strings / numbers

    static String string(Random r, int minLen, int maxLen) {
        int len = minLen + r.nextInt(maxLen - minLen + 1);
        boolean ascii = r.nextInt(3) != 0;
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < len; i++) {
            String c = ALPHABET[r.nextInt(ascii ? 16 : ALPHABET.length)];
            sb.append(c);
        }
        return sb.toString();
    }

    private String str() {
        // 0..40 chars: both <=7-byte (inline in BinaryRow) and longer strings occur
        return r.nextInt(3) == 0 ? string(r, 0, 7) : string(r, 8, 40);
    }

    private long anyLong() {
        switch (r.nextInt(4)) {
            case 0:
                return r.nextLong();
            case 1:
                return r.nextInt(10);
            default:
                return r.nextInt(Integer.MAX_VALUE) * (long) (1 + r.nextInt(100));
        }
    }

    private boolean isNull() {
        return r.nextInt(10) < 3;
    }

    private byte[] bytes(int maxLen) {
        byte[] b = new byte[r.nextInt(maxLen + 1)];
        r.nextBytes(b);
        return b;
    }

    private List<String> strings(int max) {
        int n = r.nextInt(max + 1);
        List<String> l = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            l.add(str());
        }
        return l;
    }

    private <T> List<T> list(int size, Supplier<T> f) {
        List<T> l = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            l.add(f.get());
        }
        return l;
    }

    /** 0 about 40% of the time, else 1..3; in "full" mode always 1..3. */
    private int size(boolean full) {
        if (full) {
            return 1 + r.nextInt(3);
        }
        return r.nextInt(10) < 4 ? 0 : 1 + r.nextInt(3);
    }

    // ------------------------------------------------------------------ messages

    private Msg message(int index) {
        Msg m = new Msg();
        boolean empty = shape == Shape.NORMAL && index == 0;
        boolean full = shape == Shape.NORMAL && index == 1;
        m.partition =
                empty ? Rows.empty() : Rows.random(r, Rows.kinds(r, r.nextInt(4), Rows.PARTITION_KINDS));
        m.bucket = r.nextInt(8) == 0 ? -1 - r.nextInt(2) : r.nextInt(128);
        Integer totalBuckets = isNull() ? null : 1 + r.nextInt(1024);
        m.totalBuckets = totalBuckets;
        if (empty) {
            return m;
        }
        if (shape == Shape.LARGE) {
            m.newFiles = list(18 + r.nextInt(5), this::file);
            m.deletedFiles = list(4 + r.nextInt(3), this::file);
            m.newChangelogFiles = list(4 + r.nextInt(3), this::file);
            m.newIndexFiles = list(2 + r.nextInt(2), this::index);
            m.deletedIndexFiles = list(1 + r.nextInt(2), this::index);
            m.compactBefore = list(8 + r.nextInt(4), this::file);
            m.compactAfter = list(6 + r.nextInt(3), this::file);
            m.compactChangelogFiles = list(2 + r.nextInt(2), this::file);
            m.compactNewIndexFiles = list(2 + r.nextInt(2), this::index);
            m.compactDeletedIndexFiles = list(1 + r.nextInt(2), this::index);
            return m;
        }
        m.newFiles = list(size(full), this::file);
        m.deletedFiles = list(size(full), this::file);
        m.newChangelogFiles = list(size(full), this::file);
        m.newIndexFiles = list(size(full), this::index);
        m.deletedIndexFiles = list(size(full), this::index);
        // a third of the messages are pure appends (no compaction), so that releases with a single
        // pair of index lists (<= 1.2) put index files on the data side too
        boolean compact = full || r.nextInt(3) != 0;
        m.compactBefore = list(compact ? size(full) : 0, this::file);
        m.compactAfter = list(compact ? size(full) : 0, this::file);
        m.compactChangelogFiles = list(compact ? size(full) : 0, this::file);
        m.compactNewIndexFiles = list(size(full), this::index);
        m.compactDeletedIndexFiles = list(size(full), this::index);
        return m;
    }

    private Stats stats() {
        Stats s = new Stats();
        int arity = r.nextInt(8) == 0 ? 0 : r.nextInt(5);
        Rows.Kind[] kinds = Rows.kinds(r, arity, Rows.VALUE_KINDS);
        s.minValues = Rows.random(r, kinds);
        s.maxValues = Rows.random(r, kinds);
        s.nullCounts = new Long[arity];
        for (int i = 0; i < arity; i++) {
            s.nullCounts[i] = r.nextInt(5) == 0 ? null : (long) r.nextInt(1000);
        }
        return s;
    }

    private File file() {
        File f = new File();
        f.fileName = str();
        f.fileSize = anyLong();
        f.rowCount = anyLong();
        Rows.Kind[] keyKinds = Rows.kinds(r, r.nextInt(4), Rows.VALUE_KINDS);
        f.minKey = Rows.random(r, keyKinds);
        f.maxKey = Rows.random(r, keyKinds);
        f.keyStats = stats();
        f.valueStats = stats();
        f.minSequenceNumber = anyLong();
        f.maxSequenceNumber = anyLong();
        f.schemaId = r.nextInt(4) == 0 ? anyLong() : r.nextInt(10);
        f.level = r.nextInt(8) == 0 ? r.nextInt() : r.nextInt(6);
        f.extraFiles = strings(3);
        // millisecond precision; mostly 2000..2100, sometimes before 1970
        long ms = 946684800000L + (long) (r.nextDouble() * 3155760000000L);
        f.creationTime = r.nextInt(10) == 0 ? -ms / 100 : ms;
        f.deleteRowCount = isNull() ? null : anyLong();
        f.embeddedIndex = isNull() ? null : bytes(40);
        f.fileSource = isNull() ? null : r.nextInt(2);
        f.valueStatsCols = isNull() ? null : strings(4);
        f.externalPath = isNull() ? null : str();
        f.firstRowId = isNull() ? null : anyLong();
        f.writeCols = isNull() ? null : strings(4);
        f.columnMaxSequenceNumbers = null;
        return f;
    }

    private Index index() {
        Index x = new Index();
        x.indexType = r.nextInt(5) == 0 ? str() : INDEX_TYPES[r.nextInt(INDEX_TYPES.length)];
        x.fileName = str();
        x.fileSize = anyLong();
        x.rowCount = anyLong();
        if (isNull()) {
            x.dvRanges = null;
        } else {
            // DV ranges are keyed by data file name in Java (LinkedHashMap): keep names unique
            int n = r.nextInt(4);
            Set<String> seen = new HashSet<>();
            x.dvRanges = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                Dv d = new Dv();
                d.dataFileName = str() + "#" + i;
                d.offset = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(100000);
                d.length = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(100000);
                d.cardinality = isNull() ? null : anyLong();
                if (seen.add(d.dataFileName)) {
                    x.dvRanges.add(d);
                }
            }
        }
        x.externalPath = isNull() ? null : str();
        if (isNull()) {
            x.globalIndex = null;
        } else {
            GlobalIndex gi = new GlobalIndex();
            gi.rowRangeStart = anyLong();
            gi.rowRangeEnd = anyLong();
            gi.indexFieldId = r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(100);
            if (isNull()) {
                gi.extraFieldIds = null;
            } else {
                gi.extraFieldIds = new int[r.nextInt(4)];
                for (int i = 0; i < gi.extraFieldIds.length; i++) {
                    gi.extraFieldIds[i] = r.nextInt(100);
                }
            }
            gi.indexMeta = isNull() ? null : bytes(40);
            gi.sourceMeta = isNull() ? null : bytes(40);
            x.globalIndex = gi;
        }
        return x;
    }

    // ------------------------------------------------------------------ masking

    /** Drops (in place) whatever {@code f} cannot carry; returns the same list. */
    static List<Msg> mask(List<Msg> msgs, Set<Feature> f) {
        for (Msg m : msgs) {
            if (!f.contains(Feature.TOTAL_BUCKETS)) m.totalBuckets = null;
            if (!f.contains(Feature.DELETED_FILES)) m.deletedFiles = new ArrayList<>();
            if (!f.contains(Feature.DELETED_INDEX_FILES)) {
                m.deletedIndexFiles = new ArrayList<>();
                m.compactDeletedIndexFiles = new ArrayList<>();
            }
            if (!f.contains(Feature.INDEX_SPLIT)) {
                // one pair of index lists: readers put it on the compact side if the compact
                // increment has files, else on the data side; keep only that side
                if (m.compactFilesEmpty()) {
                    m.compactNewIndexFiles = new ArrayList<>();
                    m.compactDeletedIndexFiles = new ArrayList<>();
                } else {
                    m.newIndexFiles = new ArrayList<>();
                    m.deletedIndexFiles = new ArrayList<>();
                }
            }
            for (List<File> files :
                    List.of(
                            m.newFiles,
                            m.deletedFiles,
                            m.newChangelogFiles,
                            m.compactBefore,
                            m.compactAfter,
                            m.compactChangelogFiles)) {
                for (File x : files) {
                    maskFile(x, f);
                }
            }
            for (List<Index> idx :
                    List.of(
                            m.newIndexFiles,
                            m.deletedIndexFiles,
                            m.compactNewIndexFiles,
                            m.compactDeletedIndexFiles)) {
                for (Index x : idx) {
                    maskIndex(x, f);
                }
            }
        }
        return msgs;
    }

    private static void maskFile(File x, Set<Feature> f) {
        if (!f.contains(Feature.DELETE_ROW_COUNT_AND_EMBEDDED_INDEX)) {
            x.deleteRowCount = null;
            x.embeddedIndex = null;
        }
        if (!f.contains(Feature.FILE_SOURCE)) x.fileSource = null;
        if (!f.contains(Feature.VALUE_STATS_COLS)) x.valueStatsCols = null;
        if (!f.contains(Feature.DATA_FILE_EXTERNAL_PATH)) x.externalPath = null;
        if (!f.contains(Feature.FIRST_ROW_ID)) x.firstRowId = null;
        if (!f.contains(Feature.WRITE_COLS)) x.writeCols = null;
        x.columnMaxSequenceNumbers = null;
    }

    private static void maskIndex(Index x, Set<Feature> f) {
        if (!f.contains(Feature.DV_RANGES)) {
            x.dvRanges = null;
        } else if (!f.contains(Feature.DV_CARDINALITY) && x.dvRanges != null) {
            for (Dv d : x.dvRanges) {
                d.cardinality = null;
            }
        }
        if (!f.contains(Feature.INDEX_EXTERNAL_PATH)) x.externalPath = null;
        if (!f.contains(Feature.GLOBAL_INDEX)) {
            x.globalIndex = null;
        } else if (!f.contains(Feature.GLOBAL_INDEX_SOURCE_META) && x.globalIndex != null) {
            x.globalIndex.sourceMeta = null;
        }
    }
}
