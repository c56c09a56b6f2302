package org.paimonwire.compat;

import java.util.EnumSet;

/**
 * Paimon 1.4.x (writes version 11): like 1.3 plus IndexFileMeta.globalIndexMeta (GlobalIndexMeta
 * without sourceMeta, which 2.0 adds).
 */
final class Release {

    private Release() {}

    static EnumSet<Feature> features() {
        return EnumSet.complementOf(EnumSet.of(Feature.GLOBAL_INDEX_SOURCE_META));
    }
}
