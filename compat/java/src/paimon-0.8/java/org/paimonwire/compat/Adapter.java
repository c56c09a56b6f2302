package org.paimonwire.compat;

import org.apache.paimon.data.BinaryArray;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.io.IndexIncrement;
import org.apache.paimon.stats.BinaryTableStats;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.utils.Pair;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Paimon 0.8.x (writes version 2, new layout). DataIncrement (was NewFilesIncrement) with deleted
 * files; DataFileMeta.deleteRowCount and embeddedIndex; stats are BinaryTableStats; IndexFileMeta
 * has deletion-vector ranges as Pair(offset, length). IndexIncrement has new index files only; it
 * is mapped to the compact side of the canonical schema when the compact increment has files, else
 * to the data side.
 */
final class Adapter {

    private Adapter() {}

    static EnumSet<Feature> features() {
        return EnumSet.of(
                Feature.DELETED_FILES,
                Feature.DELETE_ROW_COUNT_AND_EMBEDDED_INDEX,
                Feature.DV_RANGES);
    }

    // ------------------------------------------------------------------ model -> Paimon

    static CommitMessage build(Model.Msg m) {
        boolean compactSide = !m.compactFilesEmpty();
        return new CommitMessageImpl(
                Rows.fromBytes(m.partition),
                m.bucket,
                new DataIncrement(
                        files(m.newFiles), files(m.deletedFiles), files(m.newChangelogFiles)),
                new CompactIncrement(
                        files(m.compactBefore),
                        files(m.compactAfter),
                        files(m.compactChangelogFiles)),
                new IndexIncrement(
                        indexes(compactSide ? m.compactNewIndexFiles : m.newIndexFiles)));
    }

    private static List<DataFileMeta> files(List<Model.File> l) {
        List<DataFileMeta> out = new ArrayList<>();
        for (Model.File f : l) {
            out.add(
                    new DataFileMeta(
                            f.fileName,
                            f.fileSize,
                            f.rowCount,
                            Rows.fromBytes(f.minKey),
                            Rows.fromBytes(f.maxKey),
                            stats(f.keyStats),
                            stats(f.valueStats),
                            f.minSequenceNumber,
                            f.maxSequenceNumber,
                            f.schemaId,
                            f.level,
                            f.extraFiles,
                            Timestamp.fromEpochMillis(f.creationTime),
                            f.deleteRowCount,
                            f.embeddedIndex));
        }
        return out;
    }

    private static BinaryTableStats stats(Model.Stats s) {
        return new BinaryTableStats(
                Rows.fromBytes(s.minValues),
                Rows.fromBytes(s.maxValues),
                BinaryArray.fromLongArray(s.nullCounts));
    }

    private static List<IndexFileMeta> indexes(List<Model.Index> l) {
        List<IndexFileMeta> out = new ArrayList<>();
        for (Model.Index x : l) {
            LinkedHashMap<String, Pair<Integer, Integer>> dv = null;
            if (x.dvRanges != null) {
                dv = new LinkedHashMap<>();
                for (Model.Dv d : x.dvRanges) {
                    dv.put(d.dataFileName, Pair.of(d.offset, d.length));
                }
            }
            out.add(new IndexFileMeta(x.indexType, x.fileName, x.fileSize, x.rowCount, dv));
        }
        return out;
    }

    // ------------------------------------------------------------------ Paimon -> model

    static Model.Msg read(CommitMessage cm) {
        CommitMessageImpl c = (CommitMessageImpl) cm;
        Model.Msg m = new Model.Msg();
        m.partition = Rows.toBytes(c.partition());
        m.bucket = c.bucket();
        m.totalBuckets = null; // not in the 0.8 model
        DataIncrement d = c.newFilesIncrement();
        m.newFiles = readFiles(d.newFiles());
        m.deletedFiles = readFiles(d.deletedFiles());
        m.newChangelogFiles = readFiles(d.changelogFiles());
        CompactIncrement ci = c.compactIncrement();
        m.compactBefore = readFiles(ci.compactBefore());
        m.compactAfter = readFiles(ci.compactAfter());
        m.compactChangelogFiles = readFiles(ci.changelogFiles());
        IndexIncrement ii = c.indexIncrement();
        if (m.compactFilesEmpty()) {
            m.newIndexFiles = readIndexes(ii.newIndexFiles());
        } else {
            m.compactNewIndexFiles = readIndexes(ii.newIndexFiles());
        }
        return m;
    }

    private static List<Model.File> readFiles(List<DataFileMeta> l) {
        List<Model.File> out = new ArrayList<>();
        for (DataFileMeta f : l) {
            Model.File x = new Model.File();
            x.fileName = f.fileName();
            x.fileSize = f.fileSize();
            x.rowCount = f.rowCount();
            x.minKey = Rows.toBytes(f.minKey());
            x.maxKey = Rows.toBytes(f.maxKey());
            x.keyStats = readStats(f.keyStats());
            x.valueStats = readStats(f.valueStats());
            x.minSequenceNumber = f.minSequenceNumber();
            x.maxSequenceNumber = f.maxSequenceNumber();
            x.schemaId = f.schemaId();
            x.level = f.level();
            x.extraFiles = new ArrayList<>(f.extraFiles());
            x.creationTime = f.creationTime() == null ? null : f.creationTime().getMillisecond();
            x.deleteRowCount = f.deleteRowCount().orElse(null);
            x.embeddedIndex = f.embeddedIndex();
            out.add(x);
        }
        return out;
    }

    private static Model.Stats readStats(BinaryTableStats s) {
        Model.Stats x = new Model.Stats();
        x.minValues = Rows.toBytes(s.minValues());
        x.maxValues = Rows.toBytes(s.maxValues());
        BinaryArray nc = s.nullCounts();
        x.nullCounts = new Long[nc.size()];
        for (int i = 0; i < nc.size(); i++) {
            x.nullCounts[i] = nc.isNullAt(i) ? null : nc.getLong(i);
        }
        return x;
    }

    private static List<Model.Index> readIndexes(List<IndexFileMeta> l) {
        List<Model.Index> out = new ArrayList<>();
        for (IndexFileMeta f : l) {
            Model.Index x = new Model.Index();
            x.indexType = f.indexType();
            x.fileName = f.fileName();
            x.fileSize = f.fileSize();
            x.rowCount = f.rowCount();
            if (f.deletionVectorsRanges() != null) {
                x.dvRanges = new ArrayList<>();
                for (Map.Entry<String, Pair<Integer, Integer>> e :
                        f.deletionVectorsRanges().entrySet()) {
                    Model.Dv y = new Model.Dv();
                    y.dataFileName = e.getKey();
                    y.offset = e.getValue().getLeft();
                    y.length = e.getValue().getRight();
                    y.cardinality = null;
                    x.dvRanges.add(y);
                }
            }
            out.add(x);
        }
        return out;
    }
}
