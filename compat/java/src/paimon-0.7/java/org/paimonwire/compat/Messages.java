package org.paimonwire.compat;

import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.IndexIncrement;
import org.apache.paimon.io.NewFilesIncrement;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;

/**
 * The increments of a CommitMessage in 0.5-0.7: NewFilesIncrement (no deleted files),
 * CompactIncrement, and one IndexIncrement of new index files.
 */
final class Messages {

    private Messages() {}

    static CommitMessage build(Model.Msg m) {
        return new CommitMessageImpl(
                Rows.fromBytes(m.partition),
                m.bucket,
                new NewFilesIncrement(
                        Adapter.files(m.newFiles), Adapter.files(m.newChangelogFiles)),
                new CompactIncrement(
                        Adapter.files(m.compactBefore),
                        Adapter.files(m.compactAfter),
                        Adapter.files(m.compactChangelogFiles)),
                new IndexIncrement(Adapter.singleIncrementNewIndexes(m)));
    }

    static void read(CommitMessageImpl c, Model.Msg m) {
        Adapter.readSingleIncrementIndexes(m, c.indexIncrement().newIndexFiles(), null);
    }
}
