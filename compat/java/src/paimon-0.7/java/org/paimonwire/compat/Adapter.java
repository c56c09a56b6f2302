package org.paimonwire.compat;

import org.apache.paimon.data.Timestamp;
import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.IndexIncrement;
import org.apache.paimon.io.NewFilesIncrement;
import org.apache.paimon.stats.BinaryTableStats;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * Paimon 0.5-0.7 (writes version 2 in the legacy layout). NewFilesIncrement (new + changelog
 * files, no deleted files); 13-field DataFileMeta with BinaryTableStats holding Long[] null counts;
 * 4-field IndexFileMeta (no deletion-vector ranges); IndexIncrement has new index files only,
 * mapped to the compact side of the canonical schema when the compact increment has files, else to
 * the data side.
 */
final class Adapter {

    private Adapter() {}

    static EnumSet<Feature> features() {
        return EnumSet.noneOf(Feature.class);
    }

    // ------------------------------------------------------------------ model -> Paimon

    static CommitMessage build(Model.Msg m) {
        boolean compactSide = !m.compactFilesEmpty();
        return new CommitMessageImpl(
                Rows.fromBytes(m.partition),
                m.bucket,
                new NewFilesIncrement(files(m.newFiles), files(m.newChangelogFiles)),
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
                            Timestamp.fromEpochMillis(f.creationTime)));
        }
        return out;
    }

    private static BinaryTableStats stats(Model.Stats s) {
        return new BinaryTableStats(
                Rows.fromBytes(s.minValues), Rows.fromBytes(s.maxValues), s.nullCounts.clone());
    }

    private static List<IndexFileMeta> indexes(List<Model.Index> l) {
        List<IndexFileMeta> out = new ArrayList<>();
        for (Model.Index x : l) {
            out.add(new IndexFileMeta(x.indexType, x.fileName, x.fileSize, x.rowCount));
        }
        return out;
    }

    // ------------------------------------------------------------------ Paimon -> model

    static Model.Msg read(CommitMessage cm) {
        CommitMessageImpl c = (CommitMessageImpl) cm;
        Model.Msg m = new Model.Msg();
        m.partition = Rows.toBytes(c.partition());
        m.bucket = c.bucket();
        m.totalBuckets = null; // not in the 0.7 model
        NewFilesIncrement d = c.newFilesIncrement();
        m.newFiles = readFiles(d.newFiles());
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
            out.add(x);
        }
        return out;
    }

    private static Model.Stats readStats(BinaryTableStats s) {
        Model.Stats x = new Model.Stats();
        x.minValues = Rows.toBytes(s.min());
        x.maxValues = Rows.toBytes(s.max());
        x.nullCounts = s.nullCounts().clone();
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
            out.add(x);
        }
        return out;
    }
}
