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
     * CommitMessageLegacyV2Serializer (0.5-0.7 layout) where the release has it. Unlike Java, a
     * normal parse that leaves trailing bytes also counts as a failure here.
     */
    static Decoded deserializeList(int version, byte[] bytes) throws IOException {
        try {
            DataInputDeserializer in = new DataInputDeserializer(bytes);
            List<CommitMessage> l = new CommitMessageSerializer().deserializeList(version, in);
            requireConsumed(in);
            return new Decoded(l, isLegacyLayoutRelease());
        } catch (Exception e) {
            Class<?> legacy = legacyClass();
            if (version != 2 || legacy == null) {
                throw e instanceof IOException ? (IOException) e : new IOException(e);
            }
            try {
                DataInputDeserializer in = new DataInputDeserializer(bytes);
                Object s = legacy.getConstructor().newInstance();
                @SuppressWarnings("unchecked")
                List<CommitMessage> l =
                        (List<CommitMessage>)
                                legacy.getMethod("deserializeList", DataInputView.class)
                                        .invoke(s, in);
                requireConsumed(in);
                return new Decoded(l, true);
            } catch (Exception e2) {
                IOException io = new IOException("v2: normal and legacy v2 deserialization failed", e);
                io.addSuppressed(e2);
                throw io;
            }
        }
    }

    /** The 0.5-0.7 releases write version 2 in the legacy layout and have no LegacyV2 class. */
    private static boolean isLegacyLayoutRelease() {
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
