package org.paimonwire.compat;

import org.apache.paimon.index.DeletionVectorMeta;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Deletion-vector ranges from 1.0 on: DeletionVectorMeta (with cardinality), keyed by data file
 * name (IndexFileMeta.deletionVectorMetas() up to 1.2, dvRanges() since 1.3).
 */
final class DeletionVectors {

    private DeletionVectors() {}

    static LinkedHashMap<String, DeletionVectorMeta> build(Model.Index x) {
        return Adapter.dvRanges(
                x, d -> new DeletionVectorMeta(d.dataFileName, d.offset, d.length, d.cardinality));
    }

    /** The ranges of the model, null for none. */
    static List<Model.Dv> read(Map<String, DeletionVectorMeta> ranges) {
        if (ranges == null) {
            return null;
        }
        List<Model.Dv> out = new ArrayList<>();
        for (DeletionVectorMeta d : ranges.values()) {
            out.add(Adapter.dv(d.dataFileName(), d.offset(), d.length(), d.cardinality()));
        }
        return out;
    }
}
