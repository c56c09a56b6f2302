package org.paimonwire.compat;

import org.apache.paimon.data.Timestamp;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.manifest.FileSource;

/** DataFileMeta of 0.9: 16 fields (fileSource). */
final class DataFiles {

    private DataFiles() {}

    static DataFileMeta build(Model.File f) {
        return new DataFileMeta(
                f.fileName,
                f.fileSize,
                f.rowCount,
                Rows.fromBytes(f.minKey),
                Rows.fromBytes(f.maxKey),
                Stats.build(f.keyStats),
                Stats.build(f.valueStats),
                f.minSequenceNumber,
                f.maxSequenceNumber,
                f.schemaId,
                f.level,
                f.extraFiles,
                Timestamp.fromEpochMillis(f.creationTime),
                f.deleteRowCount,
                f.embeddedIndex,
                f.fileSource == null ? null : FileSource.fromByteValue(f.fileSource.byteValue()));
    }

    /** The fields the release has beyond the 13 of 0.7 (which Adapter reads). */
    static void read(DataFileMeta f, Model.File x) {
        x.deleteRowCount = f.deleteRowCount().orElse(null);
        x.embeddedIndex = f.embeddedIndex();
        x.fileSource = f.fileSource().map(s -> (int) s.toByteValue()).orElse(null);
    }
}
