package org.paimonwire.compat;

import org.apache.paimon.data.BinaryArray;
import org.apache.paimon.stats.BinaryTableStats;

/** Stats of 0.8: BinaryTableStats with null counts in a BinaryArray. */
final class Stats {

    private Stats() {}

    static BinaryTableStats build(Model.Stats s) {
        return new BinaryTableStats(
                Rows.fromBytes(s.minValues),
                Rows.fromBytes(s.maxValues),
                BinaryArray.fromLongArray(s.nullCounts));
    }

    static Model.Stats read(BinaryTableStats s) {
        return Adapter.stats(s.minValues(), s.maxValues(), Adapter.nullCounts(s.nullCounts()));
    }
}
