package dev.fulcrum.traces;

import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.Set;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.database.NativeSql;

/**
 * A stored call as Weave's readers expect it: the columns asked for, stored JSON written out as it is, and
 * {@code summary.weave} with the status, trace name and latency the hosted server derives.
 */
final class CallJson {

    /** The columns of a call as {@link #write} reads them, from its first column on. */
    static final String COLUMNS = """
            c.id, c.op_name, c.display_name, c.trace_id, c.parent_id, c.thread_id, c.turn_id, c.started_at,
            c.ended_at, c.exception, c.attributes, c.inputs, c.output, c.summary, c.wb_user_id, c.wb_run_id,
            c.wb_run_step, c.wb_run_step_end, c.deleted_at""";

    /** How many columns {@link #COLUMNS} names. */
    static final int COUNT = 19;

    private final ObjectMapper json;

    CallJson(ObjectMapper json) {
        this.json = json;
    }

    /**
     * One call of {@link #COLUMNS}, starting at column {@code first} of the row, the {@code columns} asked for;
     * {@code feedback}, a JSON list or null, goes into {@code summary.weave.feedback}.
     */
    void write(NativeSql.Cursor r, int first, String projectId, Set<String> columns, String feedback, JsonGenerator out)
            throws SQLException, IOException {
        String opName = r.string(first + 1);
        String displayName = r.string(first + 2);
        OffsetDateTime startedAt = r.time(first + 7);
        OffsetDateTime endedAt = r.time(first + 8);
        String exception = r.string(first + 9);
        out.writeStartObject();
        out.writeStringField("id", r.string(first));
        out.writeStringField("project_id", projectId);
        out.writeStringField("op_name", opName);
        if (columns.contains("display_name")) {
            out.writeStringField("display_name", displayName);
        }
        out.writeStringField("trace_id", r.string(first + 3));
        text(out, columns, "parent_id", r, first + 4);
        text(out, columns, "thread_id", r, first + 5);
        text(out, columns, "turn_id", r, first + 6);
        time(out, "started_at", startedAt);
        if (columns.contains("ended_at")) {
            time(out, "ended_at", endedAt);
        }
        if (columns.contains("exception")) {
            out.writeStringField("exception", exception);
        }
        raw(out, columns, "attributes", r.string(first + 10), "{}");
        raw(out, columns, "inputs", r.string(first + 11), "{}");
        raw(out, columns, "output", r.string(first + 12), "null");
        if (columns.contains("summary")) {
            out.writeFieldName("summary");
            summary(out, r.string(first + 13), opName, displayName, startedAt, endedAt, exception, feedback);
        }
        text(out, columns, "wb_user_id", r, first + 14);
        text(out, columns, "wb_run_id", r, first + 15);
        number(out, columns, "wb_run_step", r, first + 16);
        number(out, columns, "wb_run_step_end", r, first + 17);
        if (columns.contains("deleted_at")) {
            time(out, "deleted_at", r.time(first + 18));
        }
        out.writeEndObject();
    }

    /**
     * The stored summary with {@code weave} added. An object without a {@code "weave"} anywhere in its text (what the
     * SDKs send) is written as stored, the derived object spliced in before its closing brace; anything else is merged
     * as a tree (a stored {@code weave} object keeps its other keys, a stored non-object is replaced).
     */
    private void summary(JsonGenerator out, String stored, String opName, String displayName, OffsetDateTime startedAt,
            OffsetDateTime endedAt, String exception, String feedback) throws IOException {
        String status = exception != null ? "error" : endedAt == null ? "running" : "success";
        String traceName = displayName != null ? displayName : opShortName(opName);
        Long latency = endedAt != null && startedAt != null ? Duration.between(startedAt, endedAt).toMillis() : null;
        int close = stored == null ? -1 : stored.stripTrailing().length() - 1;
        String open = stored == null ? "" : stored.stripLeading();
        if (stored == null || (close >= 0 && stored.charAt(close) == '}' && open.startsWith("{")
                && !stored.contains("\"weave\""))) {
            StringBuilder text = new StringBuilder(stored == null ? 64 : stored.length() + 64);
            if (stored == null || stored.substring(stored.indexOf('{') + 1, close).isBlank()) {
                text.append('{');
            } else {
                text.append(stored, 0, close).append(',');
            }
            text.append("\"weave\":{\"status\":\"").append(status).append("\",\"trace_name\":");
            if (traceName == null) {
                text.append("null");
            } else {
                text.append('"').append(JsonStringEncoder.getInstance().quoteAsString(traceName)).append('"');
            }
            if (latency != null) {
                text.append(",\"latency_ms\":").append(latency);
            }
            if (feedback != null) {
                text.append(",\"feedback\":").append(feedback);
            }
            out.writeRawValue(text.append("}}").toString());
            return;
        }
        JsonNode tree = json.readTree(stored);
        ObjectNode summary = tree != null && tree.isObject() ? (ObjectNode) tree : json.createObjectNode();
        ObjectNode weave = summary.has("weave") && summary.get("weave").isObject() ? (ObjectNode) summary.get("weave")
                : summary.putObject("weave");
        weave.put("status", status);
        weave.put("trace_name", traceName);
        if (latency != null) {
            weave.put("latency_ms", latency);
        }
        if (feedback != null) {
            weave.set("feedback", json.readTree(feedback));
        }
        out.writeTree(summary);
    }

    /** {@code weave:///e/p/op/name:digest} is {@code name}; a plain name is itself. */
    static String opShortName(String opName) {
        if (opName == null) {
            return null;
        }
        int slash = opName.lastIndexOf('/');
        String tail = slash >= 0 ? opName.substring(slash + 1) : opName;
        int colon = opName.startsWith("weave:") ? tail.lastIndexOf(':') : -1;
        return colon > 0 ? tail.substring(0, colon) : tail;
    }

    private static void text(JsonGenerator out, Set<String> columns, String field, NativeSql.Cursor r, int column)
            throws SQLException, IOException {
        if (columns.contains(field)) {
            out.writeStringField(field, r.string(column));
        }
    }

    private static void number(JsonGenerator out, Set<String> columns, String field, NativeSql.Cursor r, int column)
            throws SQLException, IOException {
        if (columns.contains(field)) {
            Long value = r.longValue(column);
            out.writeFieldName(field);
            if (value == null) {
                out.writeNull();
            } else {
                out.writeNumber(value);
            }
        }
    }

    private static void raw(JsonGenerator out, Set<String> columns, String field, String value, String absent)
            throws IOException {
        if (columns.contains(field)) {
            out.writeFieldName(field);
            out.writeRawValue(value == null ? absent : value);
        }
    }

    private static void time(JsonGenerator out, String field, OffsetDateTime value) throws IOException {
        out.writeStringField(field, value == null ? null : value.toInstant().toString());
    }
}
