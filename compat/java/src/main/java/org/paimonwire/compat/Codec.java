package org.paimonwire.compat;

import org.apache.paimon.io.DataInputDeserializer;
import org.apache.paimon.io.DataInputView;
import org.apache.paimon.io.DataOutputViewStreamWrapper;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageSerializer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;

/** Calls the release's own CommitMessageSerializer (list form: int count, then each message). */
final class Codec {

    private static final String LEGACY_V2 =
            "org.apache.paimon.table.sink.CommitMessageLegacyV2Serializer";

    private Codec() {}

    static int currentVersion() {
        return new CommitMessageSerializer().getVersion();
    }

    static byte[] serializeList(List<CommitMessage> messages) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        new CommitMessageSerializer().serializeList(messages, new DataOutputViewStreamWrapper(out));
        return out.toByteArray();
    }

    static final class Decoded {
        final List<CommitMessage> messages;
        final boolean legacyV2;

        Decoded(List<CommitMessage> messages, boolean legacyV2) {
            this.messages = messages;
            this.legacyV2 = legacyV2;
        }
    }

    /**
     * Deserializes a whole list payload; every byte must be consumed. For version 2 this does what
     * ManifestCommittableSerializer does: try the normal serializer and, if that fails, the
     * CommitMessageLegacyV2Serializer (0.5-0.7 layout) where the release has it. Two differences:
     * a normal parse that leaves trailing bytes also counts as a failure, and the attempts are
     * guided by a framing check (see {@link #framesAsV2}): Paimon reads row contents with unchecked
     * Unsafe accesses, so letting the normal serializer loose on legacy bytes can crash the JVM
     * (SIGSEGV in MemorySegment.getInt) instead of throwing.
     */
    static Decoded deserializeList(int version, byte[] bytes) throws IOException {
        Class<?> legacy = legacyClass();
        if (version != 2 || legacy == null) {
            return new Decoded(normal(version, bytes), isLegacyLayoutRelease());
        }
        boolean newLayout = framesAsV2(bytes, false);
        boolean legacyLayout = framesAsV2(bytes, true);
        if (!newLayout && !legacyLayout) {
            throw new IOException("v2 payload frames neither as the 0.8 nor as the legacy layout");
        }
        Exception first = null;
        if (newLayout) {
            try {
                return new Decoded(normal(version, bytes), false);
            } catch (Exception e) {
                if (!legacyLayout) {
                    throw e instanceof IOException ? (IOException) e : new IOException(e);
                }
                first = e;
            }
        }
        try {
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            Object s = legacy.getConstructor().newInstance();
            @SuppressWarnings("unchecked")
            List<CommitMessage> l =
                    (List<CommitMessage>)
                            legacy.getMethod("deserializeList", DataInputView.class).invoke(s, in);
            requireConsumed(in);
            return new Decoded(l, true);
        } catch (Exception e) {
            IOException io = new IOException("v2: legacy v2 deserialization failed", e);
            if (first != null) io.addSuppressed(first);
            throw io;
        }
    }

    private static List<CommitMessage> normal(int version, byte[] bytes) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        List<CommitMessage> l = new CommitMessageSerializer().deserializeList(version, in);
        requireConsumed(in);
        return l;
    }

    /**
     * Whether a version-2 list payload has the framing of the 0.8 layout (6 data-file lists + 1
     * index list per message, DataFileMeta rows of 15 fields, IndexFileMeta rows of 5) or of the
     * legacy layout (5 + 1, 13 and 4 fields). Reads only counts, lengths and bytes, with bounds
     * checks; each row must be at least as long as its fixed-length part.
     */
    static boolean framesAsV2(byte[] bytes, boolean legacyLayout) {
        int fileLists = legacyLayout ? 5 : 6;
        int fileRowMin = fixedPart(legacyLayout ? 13 : 15);
        int indexRowMin = fixedPart(legacyLayout ? 4 : 5);
        try {
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            int n = in.readInt();
            if (n < 0) return false;
            for (int i = 0; i < n; i++) {
                if (!skipRow(in, 4)) return false; // partition: arity + row
                in.readInt(); // bucket
                for (int l = 0; l < fileLists; l++) {
                    if (!skipRows(in, fileRowMin)) return false;
                }
                if (!skipRows(in, indexRowMin)) return false;
            }
            return in.available() == 0;
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static boolean skipRows(DataInputDeserializer in, int minLen) throws IOException {
        int count = in.readInt();
        if (count < 0) return false;
        for (int i = 0; i < count; i++) {
            if (!skipRow(in, minLen)) return false;
        }
        return true;
    }

    private static boolean skipRow(DataInputDeserializer in, int minLen) throws IOException {
        int len = in.readInt();
        if (len < minLen || len > in.available()) return false;
        in.skipBytesToRead(len);
        return true;
    }

    /** BinaryRow fixed-length part: null bits (with 8 header bits) + 8 bytes per field. */
    private static int fixedPart(int arity) {
        return ((arity + 63 + 8) / 64) * 8 + 8 * arity;
    }

    /** The 0.5-0.7 releases write version 2 in the legacy layout and have no LegacyV2 class. */
    static boolean isLegacyLayoutRelease() {
        return currentVersion() == 2 && legacyClass() == null;
    }

    private static Class<?> legacyClass() {
        try {
            return Class.forName(LEGACY_V2);
        } catch (ClassNotFoundException e) {
            return null;
        }
    }

    private static void requireConsumed(DataInputDeserializer in) throws IOException {
        if (in.available() != 0) {
            throw new IOException(in.available() + " trailing bytes after the message list");
        }
    }
}
