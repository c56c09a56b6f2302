package org.paimonwire.compat;

import org.apache.paimon.data.BinaryArray;
import org.apache.paimon.stats.SimpleStats;

/** Stats from 0.9 on: SimpleStats (BinaryTableStats renamed). */
final class Stats {

    private Stats() {}

    static SimpleStats build(Model.Stats s) {
        return new SimpleStats(
                Rows.fromBytes(s.minValues),
                Rows.fromBytes(s.maxValues),
                BinaryArray.fromLongArray(s.nullCounts));
    }

    static Model.Stats read(SimpleStats s) {
        return Adapter.stats(s.minValues(), s.maxValues(), Adapter.nullCounts(s.nullCounts()));
    }
}
