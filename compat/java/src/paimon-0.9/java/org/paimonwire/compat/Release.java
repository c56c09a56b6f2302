package org.paimonwire.compat;

import java.util.EnumSet;

/**
 * Paimon 0.9.x (writes version 3): SimpleStats (was BinaryTableStats), DataFileMeta.fileSource,
 * deleted index files in IndexIncrement. Deletion-vector ranges are Pair(offset, length), no
 * cardinality.
 */
final class Release {

    private Release() {}

    static EnumSet<Feature> features() {
        return EnumSet.of(
                Feature.DELETED_FILES,
                Feature.DELETE_ROW_COUNT_AND_EMBEDDED_INDEX,
                Feature.DV_RANGES,
                Feature.FILE_SOURCE,
                Feature.DELETED_INDEX_FILES);
    }
}
