package org.paimonwire.compat;

import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryRowWriter;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.utils.SerializationUtils;

import java.util.Random;

/** Builds real Paimon BinaryRows and returns their serializeBinaryRow bytes. */
final class Rows {

    private Rows() {}

    enum Kind {
        INT,
        BIGINT,
        STRING_SHORT,
        STRING_LONG,
        DOUBLE,
        BOOLEAN,
        NULL
    }

    static final Kind[] PARTITION_KINDS = {
        Kind.INT, Kind.BIGINT, Kind.STRING_SHORT, Kind.STRING_LONG, Kind.NULL
    };
    static final Kind[] VALUE_KINDS = {
        Kind.INT, Kind.BIGINT, Kind.STRING_SHORT, Kind.STRING_LONG, Kind.DOUBLE, Kind.BOOLEAN,
        Kind.NULL
    };

    static byte[] empty() {
        return SerializationUtils.serializeBinaryRow(build(new Kind[0], new Object[0]));
    }

    /** Random field kinds for a row of the given arity. */
    static Kind[] kinds(Random r, int arity, Kind[] choices) {
        Kind[] k = new Kind[arity];
        for (int i = 0; i < arity; i++) {
            k[i] = choices[r.nextInt(choices.length)];
        }
        return k;
    }

    /** A row of the given kinds with random values; returns serialized bytes. */
    static byte[] random(Random r, Kind[] kinds) {
        Object[] values = new Object[kinds.length];
        for (int i = 0; i < kinds.length; i++) {
            values[i] = value(r, kinds[i]);
        }
        return SerializationUtils.serializeBinaryRow(build(kinds, values));
    }

    private static Object value(Random r, Kind kind) {
        switch (kind) {
            case INT:
                return r.nextInt(4) == 0 ? r.nextInt() : r.nextInt(1000) - 100;
            case BIGINT:
                return r.nextInt(4) == 0 ? r.nextLong() : (long) r.nextInt(100000);
            case STRING_SHORT:
                return Gen.string(r, 0, 7);
            case STRING_LONG:
                return Gen.string(r, 8, 40);
            case DOUBLE:
                return r.nextInt(8) == 0 ? -0.0d : (r.nextDouble() - 0.5) * 1e6;
            case BOOLEAN:
                return r.nextBoolean();
            default:
                return null;
        }
    }

    static BinaryRow build(Kind[] kinds, Object[] values) {
        BinaryRow row = new BinaryRow(kinds.length);
        BinaryRowWriter w = new BinaryRowWriter(row);
        for (int i = 0; i < kinds.length; i++) {
            Object v = values[i];
            if (v == null) {
                w.setNullAt(i);
                continue;
            }
            switch (kinds[i]) {
                case INT:
                    w.writeInt(i, (Integer) v);
                    break;
                case BIGINT:
                    w.writeLong(i, (Long) v);
                    break;
                case STRING_SHORT:
                case STRING_LONG:
                    w.writeString(i, BinaryString.fromString((String) v));
                    break;
                case DOUBLE:
                    w.writeDouble(i, (Double) v);
                    break;
                case BOOLEAN:
                    w.writeBoolean(i, (Boolean) v);
                    break;
                default:
                    w.setNullAt(i);
            }
        }
        w.complete();
        return row;
    }

    static BinaryRow fromBytes(byte[] bytes) {
        return SerializationUtils.deserializeBinaryRow(bytes);
    }

    static byte[] toBytes(BinaryRow row) {
        return SerializationUtils.serializeBinaryRow(row);
    }
}
