package org.paimonwire.compat;

import java.util.EnumSet;

/**
 * Paimon 0.5-0.7 (writes version 2 in the legacy layout): NewFilesIncrement (new and changelog
 * files, no deleted files), 13-field DataFileMeta with BinaryTableStats holding Long[] null
 * counts, 4-field IndexFileMeta (no deletion-vector ranges), an IndexIncrement of new index files
 * only. The conversion is Adapter; this release's own calls are in this folder.
 */
final class Release {

    private Release() {}

    static EnumSet<Feature> features() {
        return EnumSet.noneOf(Feature.class);
    }
}
