package org.paimonwire.compat;

import org.apache.paimon.index.IndexFileMeta;

/** IndexFileMeta of 0.5-0.7: 4 fields, no deletion-vector ranges. */
final class IndexFiles {

    private IndexFiles() {}

    static IndexFileMeta build(Model.Index x) {
        return new IndexFileMeta(x.indexType, x.fileName, x.fileSize, x.rowCount);
    }

    /** Nothing beyond the 4 fields Adapter reads. */
    static void read(IndexFileMeta f, Model.Index x) {}
}
