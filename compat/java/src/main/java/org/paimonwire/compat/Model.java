package org.paimonwire.compat;

import java.util.ArrayList;
import java.util.List;

/**
 * A release-independent model of one CommitMessage. Every field of every release is here; a
 * release's adapter converts between this model and that release's Paimon classes. Rows (partition,
 * keys, stats min/max) are kept as the bytes of {@code SerializationUtils.serializeBinaryRow}.
 */
final class Model {

    private Model() {}

    static final class Msg {
        byte[] partition;
        int bucket;
        Integer totalBuckets;
        List<File> newFiles = new ArrayList<>();
        List<File> deletedFiles = new ArrayList<>();
        List<File> newChangelogFiles = new ArrayList<>();
        List<Index> newIndexFiles = new ArrayList<>();
        List<Index> deletedIndexFiles = new ArrayList<>();
        List<File> compactBefore = new ArrayList<>();
        List<File> compactAfter = new ArrayList<>();
        List<File> compactChangelogFiles = new ArrayList<>();
        List<Index> compactNewIndexFiles = new ArrayList<>();
        List<Index> compactDeletedIndexFiles = new ArrayList<>();

        boolean compactFilesEmpty() {
            return compactBefore.isEmpty()
                    && compactAfter.isEmpty()
                    && compactChangelogFiles.isEmpty();
        }
    }

    static final class File {
        String fileName;
        long fileSize;
        long rowCount;
        byte[] minKey;
        byte[] maxKey;
        Stats keyStats;
        Stats valueStats;
        long minSequenceNumber;
        long maxSequenceNumber;
        long schemaId;
        int level;
        List<String> extraFiles = new ArrayList<>();
        Long creationTime; // epoch millis
        Long deleteRowCount;
        byte[] embeddedIndex;
        Integer fileSource; // FileSource byte value
        List<String> valueStatsCols;
        String externalPath;
        Long firstRowId;
        List<String> writeCols;
        List<Long> columnMaxSequenceNumbers; // no released version has it
    }

    static final class Stats {
        byte[] minValues;
        byte[] maxValues;
        Long[] nullCounts;
    }

    static final class Index {
        String indexType;
        String fileName;
        long fileSize;
        long rowCount;
        List<Dv> dvRanges;
        String externalPath;
        GlobalIndex globalIndex;
    }

    static final class Dv {
        String dataFileName;
        int offset;
        int length;
        Long cardinality;
    }

    static final class GlobalIndex {
        long rowRangeStart;
        long rowRangeEnd;
        int indexFieldId;
        int[] extraFieldIds;
        byte[] indexMeta;
        byte[] sourceMeta;
    }
}
