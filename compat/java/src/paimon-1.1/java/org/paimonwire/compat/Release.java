package org.paimonwire.compat;

import java.util.EnumSet;

/** Paimon 1.1.x and 1.2.x (write version 7): like 1.0 plus CommitMessage.totalBuckets. */
final class Release {

    private Release() {}

    static EnumSet<Feature> features() {
        return EnumSet.of(
                Feature.DELETED_FILES,
                Feature.DELETE_ROW_COUNT_AND_EMBEDDED_INDEX,
                Feature.DV_RANGES,
                Feature.FILE_SOURCE,
                Feature.DELETED_INDEX_FILES,
                Feature.VALUE_STATS_COLS,
                Feature.DV_CARDINALITY,
                Feature.DATA_FILE_EXTERNAL_PATH,
                Feature.TOTAL_BUCKETS);
    }
}
