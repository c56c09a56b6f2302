package org.paimonwire.compat;

import org.apache.paimon.index.GlobalIndexMeta;

/** GlobalIndexMeta of 1.4: without sourceMeta. */
final class GlobalIndexes {

    private GlobalIndexes() {}

    static GlobalIndexMeta build(Model.GlobalIndex g) {
        return new GlobalIndexMeta(
                g.rowRangeStart,
                g.rowRangeEnd,
                g.indexFieldId,
                g.extraFieldIds,
                g.indexMeta);
    }

    static Model.GlobalIndex read(GlobalIndexMeta g) {
        Model.GlobalIndex y = new Model.GlobalIndex();
        y.rowRangeStart = g.rowRangeStart();
        y.rowRangeEnd = g.rowRangeEnd();
        y.indexFieldId = g.indexFieldId();
        y.extraFieldIds = g.extraFieldIds();
        y.indexMeta = g.indexMeta();
        return y;
    }
}
