package org.paimonwire.compat;

import org.apache.paimon.data.Timestamp;
import org.apache.paimon.io.DataFileMeta;

/** DataFileMeta of 0.5-0.7: 13 fields. */
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
                Timestamp.fromEpochMillis(f.creationTime));
    }

    /** The fields the release has beyond the 13 of 0.7 (which Adapter reads). */
    static void read(DataFileMeta f, Model.File x) {}
}
