package org.paimonwire.compat;

import org.apache.paimon.index.IndexFileMeta;
import org.apache.paimon.utils.Pair;

import java.util.ArrayList;
import java.util.Map;

/** IndexFileMeta of 0.8 and 0.9: deletion-vector ranges as Pair(offset, length), no cardinality. */
final class IndexFiles {

    private IndexFiles() {}

    static IndexFileMeta build(Model.Index x) {
        return new IndexFileMeta(
                x.indexType,
                x.fileName,
                x.fileSize,
                x.rowCount,
                Adapter.dvRanges(x, d -> Pair.of(d.offset, d.length)));
    }

    static void read(IndexFileMeta f, Model.Index x) {
        if (f.deletionVectorsRanges() != null) {
            x.dvRanges = new ArrayList<>();
            for (Map.Entry<String, Pair<Integer, Integer>> e :
                    f.deletionVectorsRanges().entrySet()) {
                x.dvRanges.add(
                        Adapter.dv(
                                e.getKey(), e.getValue().getLeft(), e.getValue().getRight(), null));
            }
        }
    }
}
