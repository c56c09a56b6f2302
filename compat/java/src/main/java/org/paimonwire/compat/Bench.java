package org.paimonwire.compat;

import org.apache.paimon.io.DataInputDeserializer;
import org.apache.paimon.io.DataOutputSerializer;
import org.apache.paimon.io.DataOutputViewStreamWrapper;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageSerializer;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;

/**
 * Throughput of the release's own {@code CommitMessageSerializer} on list payloads, JIT-warmed.
 *
 * <p>For each payload file and operation: a warm-up loop of at least {@code --warmup-seconds}
 * (so that C2 has compiled the serializer), then {@code --iterations} measured iterations, each
 * repeating the operation until at least {@code --min-iteration-ms} have passed. The reported
 * time per operation is the median over the iterations (min and max beside it). Garbage
 * collection is part of the time, as it is part of a real coordinator's time.
 *
 * <p>Operations:
 *
 * <ul>
 *   <li>{@code decode}: {@code deserializeList(version, new DataInputDeserializer(bytes))}, with
 *       the check that every byte is used.
 *   <li>{@code encode-stream}: {@code serializeList} into a {@code DataOutputViewStreamWrapper}
 *       over a {@code ByteArrayOutputStream}, then {@code toByteArray()}; what Paimon's own
 *       {@code CommitMessageSerializer.serialize} and {@code ManifestCommittableSerializer} do.
 *   <li>{@code encode-buffer}: {@code serializeList} into a fresh {@code DataOutputSerializer},
 *       keeping its buffer without a final copy (Paimon's fastest output view).
 *   <li>{@code encode-reuse}: {@code serializeList} into one {@code DataOutputSerializer} reused
 *       across operations ({@code clear()} before each), so no output memory is allocated.
 * </ul>
 *
 * <p>Output, one line per file and operation on stdout (details on stderr):
 *
 * <pre>
 * bench release=R version=V file=F op=OP bytes=N messages=M median_ns=T min_ns=T max_ns=T
 * </pre>
 */
final class Bench {

    /** Keeps results alive so the JIT cannot drop the work. */
    private static volatile long sink;

    private Bench() {}

    interface Op {
        /** Runs the operation once and returns a number that depends on its result. */
        long run() throws IOException;
    }

    static int run(int version, double warmupSeconds, int iterations, long minIterationMs, List<String> files)
            throws IOException {
        CommitMessageSerializer serializer = new CommitMessageSerializer();
        for (String file : files) {
            byte[] bytes = Files.readAllBytes(Paths.get(file));
            List<CommitMessage> messages = decode(serializer, version, bytes);
            String name = Paths.get(file).getFileName().toString();
            Op decode = () -> decode(serializer, version, bytes).size();
            Op encodeStream =
                    () -> {
                        ByteArrayOutputStream out = new ByteArrayOutputStream();
                        serializer.serializeList(messages, new DataOutputViewStreamWrapper(out));
                        return out.toByteArray().length;
                    };
            Op encodeBuffer =
                    () -> {
                        DataOutputSerializer out = new DataOutputSerializer(4096);
                        serializer.serializeList(messages, out);
                        return out.length() + out.getSharedBuffer().length;
                    };
            DataOutputSerializer reused = new DataOutputSerializer(4096);
            Op encodeReuse =
                    () -> {
                        reused.clear();
                        serializer.serializeList(messages, reused);
                        return reused.length();
                    };
            // The encoders must reproduce the payload, or the comparison is meaningless.
            ByteArrayOutputStream check = new ByteArrayOutputStream();
            serializer.serializeList(messages, new DataOutputViewStreamWrapper(check));
            if (version == serializer.getVersion() && !Arrays.equals(check.toByteArray(), bytes)) {
                System.err.println(name + ": re-encoding does not reproduce the payload");
                return 1;
            }
            String[] names = {"decode", "encode-stream", "encode-buffer", "encode-reuse"};
            Op[] ops = {decode, encodeStream, encodeBuffer, encodeReuse};
            for (int i = 0; i < ops.length; i++) {
                long[] nanos = measure(ops[i], warmupSeconds, iterations, minIterationMs);
                System.out.println(
                        "bench release="
                                + Harness.release()
                                + " version="
                                + version
                                + " file="
                                + name
                                + " op="
                                + names[i]
                                + " bytes="
                                + bytes.length
                                + " messages="
                                + messages.size()
                                + " median_ns="
                                + nanos[0]
                                + " min_ns="
                                + nanos[1]
                                + " max_ns="
                                + nanos[2]);
                System.out.flush();
                System.err.printf(
                        "%s %s: %.1f MB/s, %.0f messages/s (median of %d)%n",
                        name,
                        names[i],
                        bytes.length / (double) nanos[0] * 1e3,
                        messages.size() / (nanos[0] / 1e9),
                        iterations);
            }
        }
        return 0;
    }

    private static List<CommitMessage> decode(
            CommitMessageSerializer serializer, int version, byte[] bytes) throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        List<CommitMessage> messages = serializer.deserializeList(version, in);
        if (in.available() != 0) {
            throw new IOException(in.available() + " trailing bytes after the message list");
        }
        return messages;
    }

    /** Median, min and max nanoseconds per operation over the measured iterations. */
    private static long[] measure(Op op, double warmupSeconds, int iterations, long minIterationMs)
            throws IOException {
        long warmupEnd = System.nanoTime() + (long) (warmupSeconds * 1e9);
        int warmupRuns = 0;
        while (warmupRuns < 5 || System.nanoTime() < warmupEnd) {
            sink += op.run();
            warmupRuns++;
        }
        System.gc();
        long[] perOp = new long[iterations];
        long minIterationNanos = minIterationMs * 1_000_000L;
        for (int i = 0; i < iterations; i++) {
            long start = System.nanoTime();
            long elapsed;
            int reps = 0;
            do {
                sink += op.run();
                reps++;
                elapsed = System.nanoTime() - start;
            } while (elapsed < minIterationNanos);
            perOp[i] = elapsed / reps;
        }
        Arrays.sort(perOp);
        return new long[] {perOp[iterations / 2], perOp[0], perOp[iterations - 1]};
    }
}
