package org.paimonwire.compat;

import java.util.EnumSet;

/**
 * Paimon 1.0.x (writes version 6): like 0.9 plus DataFileMeta.valueStatsCols and externalPath, and
 * DeletionVectorMeta (with cardinality) for the deletion-vector ranges.
 */
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
                Feature.DATA_FILE_EXTERNAL_PATH);
    }
}
