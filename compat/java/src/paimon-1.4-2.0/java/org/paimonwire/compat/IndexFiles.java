package org.paimonwire.compat;

import org.apache.paimon.index.IndexFileMeta;

/** IndexFileMeta from 1.4 on: with an external path and a GlobalIndexMeta (GlobalIndexes). */
final class IndexFiles {

    private IndexFiles() {}

    static IndexFileMeta build(Model.Index x) {
        return new IndexFileMeta(
                x.indexType,
                x.fileName,
                x.fileSize,
                x.rowCount,
                DeletionVectors.build(x),
                x.externalPath,
                x.globalIndex == null ? null : GlobalIndexes.build(x.globalIndex));
    }

    static void read(IndexFileMeta f, Model.Index x) {
        x.dvRanges = DeletionVectors.read(f.dvRanges());
        x.externalPath = f.externalPath();
        if (f.globalIndexMeta() != null) {
            x.globalIndex = GlobalIndexes.read(f.globalIndexMeta());
        }
    }
}
