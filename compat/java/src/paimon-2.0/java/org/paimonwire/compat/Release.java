package org.paimonwire.compat;

import java.util.EnumSet;

/** Paimon 2.0.x (writes version 12): like 1.4 plus GlobalIndexMeta.sourceMeta. */
final class Release {

    private Release() {}

    static EnumSet<Feature> features() {
        return EnumSet.allOf(Feature.class);
    }
}
