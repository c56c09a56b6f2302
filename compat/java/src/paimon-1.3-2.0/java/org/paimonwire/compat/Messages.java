package org.paimonwire.compat;

import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;

/**
 * The increments of a CommitMessage from 1.3 on: DataIncrement and CompactIncrement, each with its
 * new and deleted index files (no IndexIncrement), and totalBuckets.
 */
final class Messages {

    private Messages() {}

    static CommitMessage build(Model.Msg m) {
        return new CommitMessageImpl(
                Rows.fromBytes(m.partition),
                m.bucket,
                m.totalBuckets,
                new DataIncrement(
                        Adapter.files(m.newFiles),
                        Adapter.files(m.deletedFiles),
                        Adapter.files(m.newChangelogFiles),
                        Adapter.indexes(m.newIndexFiles),
                        Adapter.indexes(m.deletedIndexFiles)),
                new CompactIncrement(
                        Adapter.files(m.compactBefore),
                        Adapter.files(m.compactAfter),
                        Adapter.files(m.compactChangelogFiles),
                        Adapter.indexes(m.compactNewIndexFiles),
                        Adapter.indexes(m.compactDeletedIndexFiles)));
    }

    static void read(CommitMessageImpl c, Model.Msg m) {
        m.totalBuckets = c.totalBuckets();
        m.deletedFiles = Adapter.readFiles(c.newFilesIncrement().deletedFiles());
        m.newIndexFiles = Adapter.readIndexes(c.newFilesIncrement().newIndexFiles());
        m.deletedIndexFiles = Adapter.readIndexes(c.newFilesIncrement().deletedIndexFiles());
        m.compactNewIndexFiles = Adapter.readIndexes(c.compactIncrement().newIndexFiles());
        m.compactDeletedIndexFiles = Adapter.readIndexes(c.compactIncrement().deletedIndexFiles());
    }
}
