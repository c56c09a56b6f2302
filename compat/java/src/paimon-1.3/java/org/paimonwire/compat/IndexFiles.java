package org.paimonwire.compat;

import org.apache.paimon.index.IndexFileMeta;

/** IndexFileMeta of 1.3: with an external path. */
final class IndexFiles {

    private IndexFiles() {}

    static IndexFileMeta build(Model.Index x) {
        return new IndexFileMeta(
                x.indexType,
                x.fileName,
                x.fileSize,
                x.rowCount,
                DeletionVectors.build(x),
                x.externalPath);
    }

    static void read(IndexFileMeta f, Model.Index x) {
        x.dvRanges = DeletionVectors.read(f.dvRanges());
        x.externalPath = f.externalPath();
    }
}
