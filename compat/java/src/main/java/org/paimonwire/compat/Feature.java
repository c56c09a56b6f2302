package org.paimonwire.compat;

import java.util.EnumSet;
import java.util.List;

/**
 * What a release's model (or a wire version) can carry beyond the 0.7 baseline (partition, bucket,
 * new/changelog/compact files, new index files; 13-field DataFileMeta; 4-field IndexFileMeta).
 */
enum Feature {
    DELETED_FILES,
    DELETE_ROW_COUNT_AND_EMBEDDED_INDEX,
    DV_RANGES,
    FILE_SOURCE,
    DELETED_INDEX_FILES,
    VALUE_STATS_COLS,
    DV_CARDINALITY,
    DATA_FILE_EXTERNAL_PATH,
    TOTAL_BUCKETS,
    FIRST_ROW_ID,
    WRITE_COLS,
    INDEX_EXTERNAL_PATH,
    /** Separate index-file lists in DataIncrement and CompactIncrement (v10+). */
    INDEX_SPLIT,
    GLOBAL_INDEX,
    GLOBAL_INDEX_SOURCE_META;

    /**
     * What CommitMessageSerializer version {@code v} carries on the wire, as the 2.0.0 reader
     * decodes it. {@code legacyV2} selects the 0.5-0.7 layout of version 2.
     */
    static EnumSet<Feature> ofWireVersion(int v, boolean legacyV2) {
        EnumSet<Feature> s = EnumSet.noneOf(Feature.class);
        if (v <= 1 || (v == 2 && legacyV2)) {
            return s;
        }
        s.addAll(List.of(DELETED_FILES, DELETE_ROW_COUNT_AND_EMBEDDED_INDEX, DV_RANGES));
        if (v >= 3) s.addAll(List.of(FILE_SOURCE, DELETED_INDEX_FILES));
        if (v >= 4) s.add(VALUE_STATS_COLS);
        if (v >= 5) s.add(DV_CARDINALITY);
        if (v >= 6) s.add(DATA_FILE_EXTERNAL_PATH);
        if (v >= 7) s.add(TOTAL_BUCKETS);
        if (v >= 8) s.add(FIRST_ROW_ID);
        if (v >= 9) s.addAll(List.of(WRITE_COLS, INDEX_EXTERNAL_PATH));
        if (v >= 10) s.add(INDEX_SPLIT);
        if (v >= 11) s.add(GLOBAL_INDEX);
        if (v >= 12) s.add(GLOBAL_INDEX_SOURCE_META);
        return s;
    }
}
