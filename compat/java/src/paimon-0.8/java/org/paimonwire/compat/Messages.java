package org.paimonwire.compat;

import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.io.IndexIncrement;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;

/**
 * The increments of a CommitMessage in 0.8: DataIncrement with deleted files, CompactIncrement,
 * and one IndexIncrement of new index files.
 */
final class Messages {

    private Messages() {}

    static CommitMessage build(Model.Msg m) {
        return new CommitMessageImpl(
                Rows.fromBytes(m.partition),
                m.bucket,
                new DataIncrement(
                        Adapter.files(m.newFiles),
                        Adapter.files(m.deletedFiles),
                        Adapter.files(m.newChangelogFiles)),
                new CompactIncrement(
                        Adapter.files(m.compactBefore),
                        Adapter.files(m.compactAfter),
                        Adapter.files(m.compactChangelogFiles)),
                new IndexIncrement(Adapter.singleIncrementNewIndexes(m)));
    }

    static void read(CommitMessageImpl c, Model.Msg m) {
        m.deletedFiles = Adapter.readFiles(c.newFilesIncrement().deletedFiles());
        Adapter.readSingleIncrementIndexes(m, c.indexIncrement().newIndexFiles(), null);
    }
}
