package org.paimonwire.compat;

import java.util.EnumSet;

/**
 * Paimon 1.3.x (writes version 10): DataFileMeta became an interface (DataFileMeta.create) with
 * firstRowId and writeCols; IndexIncrement is gone: DataIncrement and CompactIncrement each carry
 * new and deleted index files; IndexFileMeta has an external path.
 */
final class Release {

    private Release() {}

    static EnumSet<Feature> features() {
        return EnumSet.complementOf(
                EnumSet.of(Feature.GLOBAL_INDEX, Feature.GLOBAL_INDEX_SOURCE_META));
    }
}
