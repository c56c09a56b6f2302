package org.paimonwire.compat;

import org.apache.paimon.data.BinaryArray;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.Function;

/**
 * Converts between the neutral {@link Model} and the Paimon classes of the release the harness is
 * built against. This file is compiled against every release, so it makes only the calls that every
 * release from 0.7 to 2.0 has in the same source form (some return a different class per release,
 * e.g. {@code CommitMessageImpl.newFilesIncrement()}: those are called through, never named).
 *
 * <p>What a release's API forces is in the release-specific classes, one of each per build, from
 * the source folders {@code pom.xml} selects for the release ({@code src/paimon-X.Y} for one
 * release family, {@code src/paimon-A-B} for every release from A to B): {@code Messages}
 * (the increments of a CommitMessage), {@code DataFiles}
 * (DataFileMeta), {@code Stats} (SimpleStats or BinaryTableStats) and {@code IndexFiles}
 * (IndexFileMeta).
 */
final class Adapter {

    private Adapter() {}

    /**
     * The model features the release has: what the serializer version it writes carries
     * ({@link Feature#ofWireVersion}, the same rule the reader side uses).
     */
    static EnumSet<Feature> features() {
        return Feature.ofWireVersion(Codec.currentVersion(), Codec.isLegacyLayoutRelease());
    }

    // ------------------------------------------------------------------ model -> Paimon

    /** The release's CommitMessage for one model message. */
    static CommitMessage build(Model.Msg m) {
        return Messages.build(m);
    }

    static List<DataFileMeta> files(List<Model.File> l) {
        List<DataFileMeta> out = new ArrayList<>();
        for (Model.File f : l) {
            out.add(DataFiles.build(f));
        }
        return out;
    }

    static List<IndexFileMeta> indexes(List<Model.Index> l) {
        List<IndexFileMeta> out = new ArrayList<>();
        for (Model.Index x : l) {
            out.add(IndexFiles.build(x));
        }
        return out;
    }

    /**
     * The deletion-vector ranges of an index file, keyed by data file name in model order, each
     * value made by {@code range}; null when the model has none.
     */
    static <V> LinkedHashMap<String, V> dvRanges(Model.Index x, Function<Model.Dv, V> range) {
        if (x.dvRanges == null) {
            return null;
        }
        LinkedHashMap<String, V> out = new LinkedHashMap<>();
        for (Model.Dv d : x.dvRanges) {
            out.put(d.dataFileName, range.apply(d));
        }
        return out;
    }

    /**
     * Releases up to 1.2 have one IndexIncrement per message: it holds the compact side's index
     * files when the compact increment has files, else the data side's (the rule Java 1.3+ uses
     * when it reads versions below 10). These are its new index files.
     */
    static List<IndexFileMeta> singleIncrementNewIndexes(Model.Msg m) {
        return indexes(m.compactFilesEmpty() ? m.newIndexFiles : m.compactNewIndexFiles);
    }

    /** The deleted index files of that IndexIncrement ({@link #singleIncrementNewIndexes}). */
    static List<IndexFileMeta> singleIncrementDeletedIndexes(Model.Msg m) {
        return indexes(m.compactFilesEmpty() ? m.deletedIndexFiles : m.compactDeletedIndexFiles);
    }

    // ------------------------------------------------------------------ Paimon -> model

    /** The model of one of the release's CommitMessages. */
    static Model.Msg read(CommitMessage cm) {
        CommitMessageImpl c = (CommitMessageImpl) cm;
        Model.Msg m = new Model.Msg();
        m.partition = Rows.toBytes(c.partition());
        m.bucket = c.bucket();
        // NewFilesIncrement up to 0.7, DataIncrement since 0.8: both have these two lists
        m.newFiles = readFiles(c.newFilesIncrement().newFiles());
        m.newChangelogFiles = readFiles(c.newFilesIncrement().changelogFiles());
        m.compactBefore = readFiles(c.compactIncrement().compactBefore());
        m.compactAfter = readFiles(c.compactIncrement().compactAfter());
        m.compactChangelogFiles = readFiles(c.compactIncrement().changelogFiles());
        Messages.read(c, m);
        return m;
    }

    /**
     * Puts the index files of a release's single IndexIncrement (up to 1.2) on the side of the
     * model {@link #singleIncrementNewIndexes} takes them from; the compact files must be read
     * already. {@code deleted} is null for releases without deleted index files.
     */
    static void readSingleIncrementIndexes(
            Model.Msg m, List<IndexFileMeta> created, List<IndexFileMeta> deleted) {
        if (m.compactFilesEmpty()) {
            m.newIndexFiles = readIndexes(created);
            if (deleted != null) {
                m.deletedIndexFiles = readIndexes(deleted);
            }
        } else {
            m.compactNewIndexFiles = readIndexes(created);
            if (deleted != null) {
                m.compactDeletedIndexFiles = readIndexes(deleted);
            }
        }
    }

    static List<Model.File> readFiles(List<DataFileMeta> l) {
        List<Model.File> out = new ArrayList<>();
        for (DataFileMeta f : l) {
            Model.File x = new Model.File();
            x.fileName = f.fileName();
            x.fileSize = f.fileSize();
            x.rowCount = f.rowCount();
            x.minKey = Rows.toBytes(f.minKey());
            x.maxKey = Rows.toBytes(f.maxKey());
            x.keyStats = Stats.read(f.keyStats());
            x.valueStats = Stats.read(f.valueStats());
            x.minSequenceNumber = f.minSequenceNumber();
            x.maxSequenceNumber = f.maxSequenceNumber();
            x.schemaId = f.schemaId();
            x.level = f.level();
            x.extraFiles = new ArrayList<>(f.extraFiles());
            x.creationTime = f.creationTime() == null ? null : f.creationTime().getMillisecond();
            DataFiles.read(f, x);
            out.add(x);
        }
        return out;
    }

    static List<Model.Index> readIndexes(List<IndexFileMeta> l) {
        List<Model.Index> out = new ArrayList<>();
        for (IndexFileMeta f : l) {
            Model.Index x = new Model.Index();
            x.indexType = f.indexType();
            x.fileName = f.fileName();
            x.fileSize = f.fileSize();
            x.rowCount = f.rowCount();
            IndexFiles.read(f, x);
            out.add(x);
        }
        return out;
    }

    /** Stats of the model from rows and per-field null counts (a null element: unknown). */
    static Model.Stats stats(BinaryRow min, BinaryRow max, Long[] nulls) {
        Model.Stats x = new Model.Stats();
        x.minValues = Rows.toBytes(min);
        x.maxValues = Rows.toBytes(max);
        x.nullCounts = nulls;
        return x;
    }

    /** The null counts of a BinaryArray of longs (the stats of 0.8 and later). */
    static Long[] nullCounts(BinaryArray nc) {
        Long[] out = new Long[nc.size()];
        for (int i = 0; i < nc.size(); i++) {
            out[i] = nc.isNullAt(i) ? null : nc.getLong(i);
        }
        return out;
    }

    /** A deletion-vector range of the model. */
    static Model.Dv dv(String dataFileName, int offset, int length, Long cardinality) {
        Model.Dv y = new Model.Dv();
        y.dataFileName = dataFileName;
        y.offset = offset;
        y.length = length;
        y.cardinality = cardinality;
        return y;
    }
}
