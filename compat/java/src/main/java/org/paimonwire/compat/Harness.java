package org.paimonwire.compat;

import org.apache.paimon.table.sink.CommitMessage;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Command line entry point. Compiled and run against one Paimon release (see pom.xml).
 *
 * <pre>
 * info
 * generate --seed S --count N [--shape normal|large] --out-bin F.bin --out-json F.json
 * dump --version V [--out-dir DIR] F.bin [F2.bin ...]
 * verify --version V --seed S --count N [--shape normal|large] F.bin [F2.bin ...]
 * verify --batch LIST          (LIST lines: "VERSION SEED COUNT SHAPE FILE", '#' comments)
 * reserialize --version V IN.bin OUT.bin
 * bench --version V [--warmup-seconds S] [--iterations N] [--min-iteration-ms MS] F.bin ...
 * commit-bench --kind append|pk [--version V] [--warmup-seconds S] [--iterations N] DIR   (2.0.0)
 * </pre>
 */
public final class Harness {

    private Harness() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage();
        }
        String cmd = args[0];
        Args a = new Args(args);
        int rc;
        switch (cmd) {
            case "info":
                System.out.println(
                        "release "
                                + release()
                                + " writes version "
                                + Codec.currentVersion()
                                + " model "
                                + Adapter.features());
                rc = 0;
                break;
            case "generate":
                rc = generate(a);
                break;
            case "dump":
                rc = dump(a);
                break;
            case "verify":
                rc = verify(a);
                break;
            case "files":
                rc = files(a);
                break;
            case "reserialize":
                rc = reserialize(a);
                break;
            case "bench":
                rc =
                        Bench.run(
                                Integer.parseInt(a.req("--version")),
                                Double.parseDouble(a.opt("--warmup-seconds", "5")),
                                Integer.parseInt(a.opt("--iterations", "10")),
                                Long.parseLong(a.opt("--min-iteration-ms", "300")),
                                a.positional);
                break;
            case "commit-bench": // CommitBench.java, 2.0 only: the coordinator end to end
                rc = releaseCommand("org.paimonwire.compat.CommitBench", cmd, a);
                break;
            default:
                rc = releaseCommand("org.paimonwire.compat.TableOps", cmd, a);
        }
        System.out.flush();
        System.exit(rc);
    }

    private static void usage() {
        System.err.println(
                "usage: info | generate --seed S --count N [--shape normal|large] --out-bin F"
                        + " --out-json F | dump --version V [--out-dir D] F... | verify --version V"
                        + " --seed S --count N [--shape X] F... | verify --batch LIST |"
                        + " reserialize --version V IN OUT | files --version V F... | bench --version V [--warmup-seconds S]"
                        + " [--iterations N] [--min-iteration-ms MS] F...");
        System.exit(2);
    }

    static String release() {
        try (InputStream in = Harness.class.getResourceAsStream("/paimon-wire-compat.properties")) {
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("paimon.version");
        } catch (Exception e) {
            return "unknown";
        }
    }

    // ------------------------------------------------------------------ generate

    /** The messages for (seed, count, shape) as this release's Paimon objects. */
    static List<CommitMessage> expected(
            long seed, int count, Gen.Shape shape, EnumSet<Feature> extraMask) {
        EnumSet<Feature> f = EnumSet.copyOf(Adapter.features());
        f.retainAll(extraMask);
        List<CommitMessage> out = new ArrayList<>();
        for (Model.Msg m : Gen.mask(Gen.generate(seed, count, shape), f)) {
            out.add(Adapter.build(m));
        }
        return out;
    }

    private static int generate(Args a) throws IOException {
        long seed = Long.parseLong(a.req("--seed"));
        int count = Integer.parseInt(a.req("--count"));
        Gen.Shape shape = Gen.Shape.valueOf(a.opt("--shape", "normal").toUpperCase());
        List<CommitMessage> msgs = expected(seed, count, shape, EnumSet.allOf(Feature.class));
        byte[] bytes = Codec.serializeList(msgs);
        int version = Codec.currentVersion();
        List<CommitMessage> back = Codec.deserializeList(version, bytes).messages;
        for (int i = 0; i < msgs.size(); i++) {
            if (!msgs.get(i).equals(back.get(i))) {
                System.err.println("round trip changed message " + i);
                System.err.println("built:   " + msgs.get(i));
                System.err.println("decoded: " + back.get(i));
                return 1;
            }
        }
        Files.write(Paths.get(a.req("--out-bin")), bytes);
        Files.write(Paths.get(a.req("--out-json")), dumpJson(back).getBytes(StandardCharsets.UTF_8));
        System.out.println(
                "release "
                        + release()
                        + " wrote version "
                        + version
                        + ": "
                        + msgs.size()
                        + " messages, "
                        + bytes.length
                        + " bytes");
        return 0;
    }

    static String dumpJson(List<CommitMessage> msgs) {
        List<Model.Msg> models = new ArrayList<>();
        for (CommitMessage m : msgs) {
            models.add(Adapter.read(m));
        }
        return Json.dump(models);
    }

    // ------------------------------------------------------------------ dump

    private static int dump(Args a) throws IOException {
        int version = Integer.parseInt(a.req("--version"));
        String outDir = a.opt("--out-dir", null);
        int rc = 0;
        for (String file : a.positional) {
            try {
                byte[] bytes = Files.readAllBytes(Paths.get(file));
                String json = dumpJson(Codec.deserializeList(version, bytes).messages);
                if (outDir == null) {
                    System.out.print(json);
                } else {
                    String name = Paths.get(file).getFileName().toString().replaceAll("\\.bin$", "");
                    Path out = Paths.get(outDir, name + ".json");
                    Files.write(out, json.getBytes(StandardCharsets.UTF_8));
                }
            } catch (Exception e) {
                System.err.println("dump failed for " + file + ": " + e);
                rc = 1;
            }
        }
        return rc;
    }

    // ------------------------------------------------------------------ files

    /**
     * files --version V F.bin...: deserializes each payload with this release's
     * deserializeList and prints every file it names as {@code LIST<TAB>BUCKET<TAB>NAME}, then
     * {@code payload F messages M files N} per payload and {@code total messages M files N}.
     */
    private static int files(Args a) throws IOException {
        int version = Integer.parseInt(a.req("--version"));
        long totalMessages = 0;
        long totalFiles = 0;
        StringBuilder out = new StringBuilder();
        for (String file : a.positional) {
            List<CommitMessage> messages;
            try {
                messages = Codec.deserializeList(version, Files.readAllBytes(Paths.get(file))).messages;
            } catch (Exception e) {
                System.err.println("files: cannot deserialize " + file + ": " + e);
                return 1;
            }
            long files = 0;
            for (CommitMessage cm : messages) {
                Model.Msg m = Adapter.read(cm);
                files += listFiles(out, "new_files", m.bucket, m.newFiles);
                files += listFiles(out, "deleted_files", m.bucket, m.deletedFiles);
                files += listFiles(out, "new_changelog_files", m.bucket, m.newChangelogFiles);
                files += listFiles(out, "compact_before", m.bucket, m.compactBefore);
                files += listFiles(out, "compact_after", m.bucket, m.compactAfter);
                files += listFiles(out, "compact_changelog_files", m.bucket, m.compactChangelogFiles);
            }
            out.append("payload ").append(file).append(" messages ").append(messages.size())
                    .append(" files ").append(files).append('\n');
            totalMessages += messages.size();
            totalFiles += files;
            System.out.print(out);
            out.setLength(0);
        }
        System.out.println("total messages " + totalMessages + " files " + totalFiles);
        return 0;
    }

    private static int listFiles(StringBuilder out, String list, int bucket, List<Model.File> files) {
        for (Model.File f : files) {
            out.append(list).append('\t').append(bucket).append('\t').append(f.fileName).append('\n');
        }
        return files.size();
    }

    // ------------------------------------------------------------------ verify

    private static int verify(Args a) throws IOException {
        List<String[]> jobs = new ArrayList<>();
        String batch = a.opt("--batch", null);
        if (batch != null) {
            for (String line : Files.readAllLines(Paths.get(batch))) {
                line = line.trim();
                if (!line.isEmpty() && !line.startsWith("#")) {
                    jobs.add(line.split("\\s+", 5));
                }
            }
        } else {
            for (String file : a.positional) {
                jobs.add(
                        new String[] {
                            a.req("--version"),
                            a.req("--seed"),
                            a.req("--count"),
                            a.opt("--shape", "normal"),
                            file
                        });
            }
        }
        // one "PASS|FAIL release version file" line per file on stdout; details go to stdout for
        // a single command-line job and to stderr in batch mode
        PrintStream detail = batch != null ? System.err : System.out;
        int failed = 0;
        for (String[] j : jobs) {
            boolean ok =
                    verifyOne(
                            detail,
                            Integer.parseInt(j[0]),
                            Long.parseLong(j[1]),
                            Integer.parseInt(j[2]),
                            Gen.Shape.valueOf(j[3].toUpperCase()),
                            j[4]);
            System.out.println((ok ? "PASS " : "FAIL ") + release() + " " + j[0] + " " + j[4]);
            if (!ok) failed++;
        }
        return failed == 0 ? 0 : 1;
    }

    private static boolean verifyOne(
            PrintStream out, int version, long seed, int count, Gen.Shape shape, String file) {
        List<CommitMessage> actual;
        boolean legacy;
        try {
            Codec.Decoded d = Codec.deserializeList(version, Files.readAllBytes(Paths.get(file)));
            actual = d.messages;
            legacy = d.legacyV2;
        } catch (Exception e) {
            out.println("  " + file + ": cannot deserialize at version " + version + ": " + e);
            return false;
        }
        // a payload of an older version than the release writes can only carry what that version
        // carries: compare with the messages masked accordingly
        List<CommitMessage> expected =
                expected(seed, count, shape, Feature.ofWireVersion(version, legacy));
        if (actual.size() != expected.size()) {
            out.println(
                    "  " + file + ": " + actual.size() + " messages, expected " + expected.size());
            return false;
        }
        for (int i = 0; i < expected.size(); i++) {
            if (!expected.get(i).equals(actual.get(i))) {
                out.println("  " + file + ": first difference at message " + i);
                out.println("  expected:");
                out.print(dumpJson(List.of(expected.get(i))));
                out.println("  actual:");
                out.print(dumpJson(List.of(actual.get(i))));
                return false;
            }
        }
        out.println("OK " + expected.size() + " messages");
        return true;
    }

    // ------------------------------------------------------------------ reserialize

    private static int reserialize(Args a) throws IOException {
        int version = Integer.parseInt(a.req("--version"));
        if (a.positional.size() != 2) usage();
        byte[] in = Files.readAllBytes(Paths.get(a.positional.get(0)));
        byte[] out = Codec.serializeList(Codec.deserializeList(version, in).messages);
        Files.write(Paths.get(a.positional.get(1)), out);
        System.out.println("wrote version " + Codec.currentVersion() + ", " + out.length + " bytes");
        return 0;
    }

    // ------------------------------------------------------------------ table commands

    /**
     * Runs a command of a release-specific class (TableOps, CommitBench), if the release has it,
     * or prints usage.
     */
    private static int releaseCommand(String className, String cmd, Args a) throws Exception {
        Class<?> ops;
        try {
            ops = Class.forName(className);
        } catch (ClassNotFoundException e) {
            usage();
            return 2;
        }
        Object rc;
        try {
            rc =
                    ops.getDeclaredMethod("run", String.class, Map.class, List.class)
                            .invoke(null, cmd, a.named, a.positional);
        } catch (java.lang.reflect.InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IllegalArgumentException) {
                System.err.println(cause.getMessage());
                usage();
            }
            throw cause instanceof Exception ? (Exception) cause : e;
        }
        if (rc == null) {
            usage();
            return 2;
        }
        return (Integer) rc;
    }

    // ------------------------------------------------------------------ args

    private static final class Args {
        final Map<String, String> named = new HashMap<>();
        final List<String> positional = new ArrayList<>();

        Args(String[] args) {
            for (int i = 1; i < args.length; i++) {
                if (args[i].startsWith("--")) {
                    if (i + 1 >= args.length) usage();
                    named.put(args[i], args[++i]);
                } else {
                    positional.add(args[i]);
                }
            }
        }

        String req(String k) {
            String v = named.get(k);
            if (v == null) {
                System.err.println("missing " + k);
                usage();
            }
            return v;
        }

        String opt(String k, String d) {
            return named.getOrDefault(k, d);
        }
    }
}
