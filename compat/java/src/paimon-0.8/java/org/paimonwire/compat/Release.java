package org.paimonwire.compat;

import java.util.EnumSet;

/**
 * Paimon 0.8.x (writes version 2, new layout): DataIncrement (was NewFilesIncrement) with deleted
 * files; DataFileMeta.deleteRowCount and embeddedIndex; stats are BinaryTableStats of BinaryArray
 * null counts; IndexFileMeta has deletion-vector ranges as Pair(offset, length); IndexIncrement
 * has new index files only.
 */
final class Release {

    private Release() {}

    static EnumSet<Feature> features() {
        return EnumSet.of(
                Feature.DELETED_FILES,
                Feature.DELETE_ROW_COUNT_AND_EMBEDDED_INDEX,
                Feature.DV_RANGES);
    }
}
