package org.paimonwire.compat;

import org.apache.paimon.stats.BinaryTableStats;

/** Stats of 0.5-0.7: BinaryTableStats with Long[] null counts. */
final class Stats {

    private Stats() {}

    static BinaryTableStats build(Model.Stats s) {
        return new BinaryTableStats(
                Rows.fromBytes(s.minValues), Rows.fromBytes(s.maxValues), s.nullCounts.clone());
    }

    static Model.Stats read(BinaryTableStats s) {
        return Adapter.stats(s.min(), s.max(), s.nullCounts().clone());
    }
}
