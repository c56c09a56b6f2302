package org.paimonwire.compat;

import org.apache.paimon.index.GlobalIndexMeta;

/** GlobalIndexMeta of 2.0: with sourceMeta. */
final class GlobalIndexes {

    private GlobalIndexes() {}

    static GlobalIndexMeta build(Model.GlobalIndex g) {
        return new GlobalIndexMeta(
                g.rowRangeStart,
                g.rowRangeEnd,
                g.indexFieldId,
                g.extraFieldIds,
                g.indexMeta,
                g.sourceMeta);
    }

    static Model.GlobalIndex read(GlobalIndexMeta g) {
        Model.GlobalIndex y = new Model.GlobalIndex();
        y.rowRangeStart = g.rowRangeStart();
        y.rowRangeEnd = g.rowRangeEnd();
        y.indexFieldId = g.indexFieldId();
        y.extraFieldIds = g.extraFieldIds();
        y.indexMeta = g.indexMeta();
        y.sourceMeta = g.sourceMeta();
        return y;
    }
}
