package org.paimonwire.compat;

import org.apache.paimon.index.IndexFileMeta;

/** IndexFileMeta of 1.0-1.2: deletion-vector ranges as DeletionVectorMeta. */
final class IndexFiles {

    private IndexFiles() {}

    static IndexFileMeta build(Model.Index x) {
        return new IndexFileMeta(
                x.indexType, x.fileName, x.fileSize, x.rowCount, DeletionVectors.build(x));
    }

    static void read(IndexFileMeta f, Model.Index x) {
        x.dvRanges = DeletionVectors.read(f.deletionVectorMetas());
    }
}
