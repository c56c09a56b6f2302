package org.paimonwire.compat;

import org.paimonwire.compat.Model.Dv;
import org.paimonwire.compat.Model.File;
import org.paimonwire.compat.Model.GlobalIndex;
import org.paimonwire.compat.Model.Index;
import org.paimonwire.compat.Model.Msg;
import org.paimonwire.compat.Model.Stats;

import java.util.List;

/** The canonical JSON dump (see compat/java/README.md). A tiny writer, no dependencies. */
final class Json {

    private final StringBuilder sb = new StringBuilder();
    private final String indentUnit;
    private int depth;
    private boolean first = true;

    private Json(boolean pretty) {
        this.indentUnit = pretty ? "  " : null;
    }

    static String dump(List<Msg> msgs) {
        Json j = new Json(true);
        j.open('[');
        for (Msg m : msgs) {
            j.element();
            j.msg(m);
        }
        j.close(']');
        j.sb.append('\n');
        return j.sb.toString();
    }

    // ------------------------------------------------------------------ schema

    private void msg(Msg m) {
        open('{');
        key("partition").hex(m.partition);
        key("bucket").num(m.bucket);
        key("total_buckets").num(m.totalBuckets);
        key("check_from_snapshot").raw("null");
        key("new_files").files(m.newFiles);
        key("deleted_files").files(m.deletedFiles);
        key("new_changelog_files").files(m.newChangelogFiles);
        key("new_index_files").indexes(m.newIndexFiles);
        key("deleted_index_files").indexes(m.deletedIndexFiles);
        key("compact_before").files(m.compactBefore);
        key("compact_after").files(m.compactAfter);
        key("compact_changelog_files").files(m.compactChangelogFiles);
        key("compact_new_index_files").indexes(m.compactNewIndexFiles);
        key("compact_deleted_index_files").indexes(m.compactDeletedIndexFiles);
        close('}');
    }

    private Json files(List<File> files) {
        open('[');
        for (File f : files) {
            element();
            file(f);
        }
        close(']');
        return this;
    }

    private void file(File f) {
        open('{');
        key("file_name").str(f.fileName);
        key("file_size").num(f.fileSize);
        key("row_count").num(f.rowCount);
        key("min_key").hex(f.minKey);
        key("max_key").hex(f.maxKey);
        key("key_stats").stats(f.keyStats);
        key("value_stats").stats(f.valueStats);
        key("min_sequence_number").num(f.minSequenceNumber);
        key("max_sequence_number").num(f.maxSequenceNumber);
        key("schema_id").num(f.schemaId);
        key("level").num(f.level);
        key("extra_files").strs(f.extraFiles);
        key("creation_time").num(f.creationTime);
        key("delete_row_count").num(f.deleteRowCount);
        key("embedded_index").hex(f.embeddedIndex);
        key("file_source").num(f.fileSource);
        key("value_stats_cols").strs(f.valueStatsCols);
        key("external_path").str(f.externalPath);
        key("first_row_id").num(f.firstRowId);
        key("write_cols").strs(f.writeCols);
        key("column_max_sequence_numbers").longs(f.columnMaxSequenceNumbers);
        close('}');
    }

    private Json stats(Stats s) {
        open('{');
        key("min_values").hex(s.minValues);
        key("max_values").hex(s.maxValues);
        key("null_counts").raw(inlineLongs(s.nullCounts));
        close('}');
        return this;
    }

    private Json indexes(List<Index> list) {
        open('[');
        for (Index x : list) {
            element();
            index(x);
        }
        close(']');
        return this;
    }

    private void index(Index x) {
        open('{');
        key("index_type").str(x.indexType);
        key("file_name").str(x.fileName);
        key("file_size").num(x.fileSize);
        key("row_count").num(x.rowCount);
        key("deletion_vectors_ranges");
        if (x.dvRanges == null) {
            raw("null");
        } else {
            open('[');
            for (Dv d : x.dvRanges) {
                element();
                open('{');
                key("data_file_name").str(d.dataFileName);
                key("offset").num(d.offset);
                key("length").num(d.length);
                key("cardinality").num(d.cardinality);
                close('}');
            }
            close(']');
        }
        key("external_path").str(x.externalPath);
        key("global_index_meta");
        GlobalIndex g = x.globalIndex;
        if (g == null) {
            raw("null");
        } else {
            open('{');
            key("row_range_start").num(g.rowRangeStart);
            key("row_range_end").num(g.rowRangeEnd);
            key("index_field_id").num(g.indexFieldId);
            key("extra_field_ids");
            if (g.extraFieldIds == null) {
                raw("null");
            } else {
                StringBuilder b = new StringBuilder("[");
                for (int i = 0; i < g.extraFieldIds.length; i++) {
                    b.append(i == 0 ? "" : ", ").append(g.extraFieldIds[i]);
                }
                raw(b.append(']').toString());
            }
            key("index_meta").hex(g.indexMeta);
            key("source_meta").hex(g.sourceMeta);
            close('}');
        }
        close('}');
    }

    // ------------------------------------------------------------------ primitives

    private void newline() {
        if (indentUnit != null) {
            sb.append('\n');
            for (int i = 0; i < depth; i++) {
                sb.append(indentUnit);
            }
        }
    }

    private void open(char c) {
        sb.append(c);
        depth++;
        first = true;
    }

    private void close(char c) {
        depth--;
        if (!first) {
            newline();
        }
        sb.append(c);
        first = false;
    }

    private void element() {
        if (!first) {
            sb.append(',');
        }
        first = false;
        newline();
    }

    private Json key(String k) {
        element();
        quote(k);
        sb.append(indentUnit != null ? ": " : ":");
        return this;
    }

    private Json raw(String s) {
        sb.append(s);
        return this;
    }

    private Json num(Number n) {
        sb.append(n == null ? "null" : n.toString());
        return this;
    }

    private Json str(String s) {
        if (s == null) {
            sb.append("null");
        } else {
            quote(s);
        }
        return this;
    }

    private Json strs(List<String> l) {
        if (l == null) {
            sb.append("null");
            return this;
        }
        sb.append('[');
        for (int i = 0; i < l.size(); i++) {
            if (i > 0) sb.append(", ");
            quote(l.get(i));
        }
        sb.append(']');
        return this;
    }

    private Json longs(List<Long> l) {
        return raw(l == null ? "null" : inlineLongs(l.toArray(new Long[0])));
    }

    private static String inlineLongs(Long[] a) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < a.length; i++) {
            b.append(i == 0 ? "" : ", ").append(a[i] == null ? "null" : a[i].toString());
        }
        return b.append(']').toString();
    }

    private Json hex(byte[] b) {
        if (b == null) {
            sb.append("null");
            return this;
        }
        sb.append('"');
        for (byte x : b) {
            sb.append(Character.forDigit((x >> 4) & 0xF, 16)).append(Character.forDigit(x & 0xF, 16));
        }
        sb.append('"');
        return this;
    }

    /** JSON string; non-ASCII is written as raw UTF-8 (the file is UTF-8). */
    private void quote(String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"':
                    sb.append("\\\"");
                    break;
                case '\\':
                    sb.append("\\\\");
                    break;
                case '\n':
                    sb.append("\\n");
                    break;
                case '\r':
                    sb.append("\\r");
                    break;
                case '\t':
                    sb.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }
}
