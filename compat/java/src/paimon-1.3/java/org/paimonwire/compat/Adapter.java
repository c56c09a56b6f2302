package org.paimonwire.compat;

import org.apache.paimon.data.BinaryArray;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.index.DeletionVectorMeta;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.FileSource;
import org.apache.paimon.stats.SimpleStats;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Paimon 1.3.x (writes version 10). DataFileMeta became an interface (DataFileMeta.create) with
 * firstRowId and writeCols; IndexIncrement is gone: DataIncrement and CompactIncrement each carry
 * new/deleted index files; IndexFileMeta has an external path.
 */
final class Adapter {

    private Adapter() {}

    static EnumSet<Feature> features() {
        return EnumSet.complementOf(
                EnumSet.of(Feature.GLOBAL_INDEX, Feature.GLOBAL_INDEX_SOURCE_META));
    }

    // ------------------------------------------------------------------ model -> Paimon

    static CommitMessage build(Model.Msg m) {
        return new CommitMessageImpl(
                Rows.fromBytes(m.partition),
                m.bucket,
                m.totalBuckets,
                new DataIncrement(
                        files(m.newFiles),
                        files(m.deletedFiles),
                        files(m.newChangelogFiles),
                        indexes(m.newIndexFiles),
                        indexes(m.deletedIndexFiles)),
                new CompactIncrement(
                        files(m.compactBefore),
                        files(m.compactAfter),
                        files(m.compactChangelogFiles),
                        indexes(m.compactNewIndexFiles),
                        indexes(m.compactDeletedIndexFiles)));
    }

    private static List<DataFileMeta> files(List<Model.File> l) {
        List<DataFileMeta> out = new ArrayList<>();
        for (Model.File f : l) {
            out.add(
                    DataFileMeta.create(
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
                            f.embeddedIndex,
                            f.fileSource == null
                                    ? null
                                    : FileSource.fromByteValue(f.fileSource.byteValue()),
                            f.valueStatsCols,
                            f.externalPath,
                            f.firstRowId,
                            f.writeCols));
        }
        return out;
    }

    private static SimpleStats stats(Model.Stats s) {
        return new SimpleStats(
                Rows.fromBytes(s.minValues),
                Rows.fromBytes(s.maxValues),
                BinaryArray.fromLongArray(s.nullCounts));
    }

    private static List<IndexFileMeta> indexes(List<Model.Index> l) {
        List<IndexFileMeta> out = new ArrayList<>();
        for (Model.Index x : l) {
            LinkedHashMap<String, DeletionVectorMeta> dv = null;
            if (x.dvRanges != null) {
                dv = new LinkedHashMap<>();
                for (Model.Dv d : x.dvRanges) {
                    dv.put(
                            d.dataFileName,
                            new DeletionVectorMeta(
                                    d.dataFileName, d.offset, d.length, d.cardinality));
                }
            }
            out.add(
                    new IndexFileMeta(
                            x.indexType,
                            x.fileName,
                            x.fileSize,
                            x.rowCount,
                            dv,
                            x.externalPath));
        }
        return out;
    }

    // ------------------------------------------------------------------ Paimon -> model

    static Model.Msg read(CommitMessage cm) {
        CommitMessageImpl c = (CommitMessageImpl) cm;
        Model.Msg m = new Model.Msg();
        m.partition = Rows.toBytes(c.partition());
        m.bucket = c.bucket();
        m.totalBuckets = c.totalBuckets();
        DataIncrement d = c.newFilesIncrement();
        m.newFiles = readFiles(d.newFiles());
        m.deletedFiles = readFiles(d.deletedFiles());
        m.newChangelogFiles = readFiles(d.changelogFiles());
        m.newIndexFiles = readIndexes(d.newIndexFiles());
        m.deletedIndexFiles = readIndexes(d.deletedIndexFiles());
        CompactIncrement ci = c.compactIncrement();
        m.compactBefore = readFiles(ci.compactBefore());
        m.compactAfter = readFiles(ci.compactAfter());
        m.compactChangelogFiles = readFiles(ci.changelogFiles());
        m.compactNewIndexFiles = readIndexes(ci.newIndexFiles());
        m.compactDeletedIndexFiles = readIndexes(ci.deletedIndexFiles());
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
            x.fileSource = f.fileSource().map(s -> (int) s.toByteValue()).orElse(null);
            x.valueStatsCols = f.valueStatsCols();
            x.externalPath = f.externalPath().orElse(null);
            x.firstRowId = f.firstRowId();
            x.writeCols = f.writeCols();
            x.columnMaxSequenceNumbers = null;
            out.add(x);
        }
        return out;
    }

    private static Model.Stats readStats(SimpleStats s) {
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
            if (f.dvRanges() != null) {
                x.dvRanges = new ArrayList<>();
                for (DeletionVectorMeta d : f.dvRanges().values()) {
                    Model.Dv y = new Model.Dv();
                    y.dataFileName = d.dataFileName();
                    y.offset = d.offset();
                    y.length = d.length();
                    y.cardinality = d.cardinality();
                    x.dvRanges.add(y);
                }
            }
            x.externalPath = f.externalPath();
            out.add(x);
        }
        return out;
    }
}
