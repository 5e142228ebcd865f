package dev.fulcrum.wandb;

import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.RegularExpressions;
import dev.fulcrum.platform.json.StorableText;
import dev.fulcrum.runs.RunFilter;
import dev.fulcrum.runs.RunFilter.And;
import dev.fulcrum.runs.RunFilter.Column;
import dev.fulcrum.runs.RunFilter.Condition;
import dev.fulcrum.runs.RunFilter.Field;
import dev.fulcrum.runs.RunFilter.Json;
import dev.fulcrum.runs.RunFilter.Op;
import dev.fulcrum.runs.RunFilter.Or;
import dev.fulcrum.runs.RunFilter.Order;

/**
 * The {@code filters} and {@code order} of {@code wandb.Api().runs(...)}: MongoDB-style JSON as the SDK sends it
 * ({@code {"state": "finished", "config.lr": {"$gt": 0.01}, "$or": [...]}}) read into a {@link RunFilter}, and
 * {@code "-created_at"} or {@code "+summary_metrics.loss"} into an {@link Order}. Anything else is refused, naming the
 * operator or key.
 */
final class WandbRunFilters {

    static final int MAX_DEPTH = 8;
    static final int MAX_CONDITIONS = 100;
    static final int MAX_VALUES = 1000;
    static final int MAX_PATH = 16;
    static final int MAX_KEY_LENGTH = 256;

    private static final Map<String, Op> OPERATORS = Map.of("$eq", Op.EQ, "$ne", Op.NE, "$gt", Op.GT, "$gte", Op.GTE,
            "$lt", Op.LT, "$lte", Op.LTE, "$in", Op.IN, "$nin", Op.NIN, "$exists", Op.EXISTS, "$regex", Op.REGEX);

    private int conditions;

    private WandbRunFilters() {
    }

    /** The filter of a {@code filters} JSON text; null or {@code {}} keeps every run. */
    static RunFilter parse(String filters) {
        if (filters == null || filters.isBlank()) {
            return new And(List.of());
        }
        JsonNode node;
        try {
            node = StorableText.json(SdkJson.MAPPER, filters, "filters");
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw invalid("filters must be a JSON object");
        }
        return new WandbRunFilters().object(node, 0);
    }

    /** The order of an {@code order} text: a field, {@code +} (ascending, the default) or {@code -} before it. */
    static Order order(String order) {
        if (order == null || order.isEmpty()) {
            return new Order(new Field(Column.CREATED_AT, List.of()), false);
        }
        boolean descending = order.startsWith("-");
        String key = order.startsWith("-") || order.startsWith("+") ? order.substring(1) : order;
        Field field = field(key, "order");
        if (field.column() == Column.TAGS) {
            throw invalid("Runs cannot be ordered by tags");
        }
        return new Order(field, descending);
    }

    private RunFilter object(JsonNode node, int depth) {
        if (node == null || !node.isObject()) {
            throw invalid("filters must be a JSON object (of keys and conditions, or $and and $or)");
        }
        if (depth > MAX_DEPTH) {
            throw invalid("filters nest at most " + MAX_DEPTH + " levels deep");
        }
        List<RunFilter> parts = new ArrayList<>();
        Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
        while (fields.hasNext()) {
            Map.Entry<String, JsonNode> entry = fields.next();
            String key = entry.getKey();
            if (key.equals("$and") || key.equals("$or")) {
                if (!entry.getValue().isArray()) {
                    throw invalid(key + " takes a list of filters");
                }
                List<RunFilter> inner = new ArrayList<>();
                for (JsonNode part : entry.getValue()) {
                    inner.add(object(part, depth + 1));
                }
                parts.add(key.equals("$and") ? new And(inner) : new Or(inner));
            } else if (key.startsWith("$")) {
                throw invalid("Unsupported filter operator " + key + " (supported: $and, $or)");
            } else {
                parts.addAll(conditions(field(key, "filters"), entry.getValue()));
            }
        }
        return parts.size() == 1 ? parts.get(0) : new And(parts);
    }

    /** The conditions on one field: an object of operators, or a value (equality). */
    private List<RunFilter> conditions(Field field, JsonNode given) {
        List<RunFilter> parts = new ArrayList<>();
        boolean operators = given.isObject() && given.size() > 0 && given.fieldNames().next().startsWith("$");
        if (!operators) {
            parts.add(condition(field, Op.EQ, given, "$eq"));
            return parts;
        }
        Iterator<Map.Entry<String, JsonNode>> entries = given.fields();
        while (entries.hasNext()) {
            Map.Entry<String, JsonNode> entry = entries.next();
            Op op = OPERATORS.get(entry.getKey());
            if (op == null) {
                throw invalid("Unsupported filter operator " + entry.getKey() + " (supported: "
                        + String.join(", ", OPERATORS.keySet().stream().sorted().toList()) + ")");
            }
            parts.add(condition(field, op, entry.getValue(), entry.getKey()));
        }
        return parts;
    }

    private Condition condition(Field field, Op op, JsonNode value, String name) {
        if (++conditions > MAX_CONDITIONS) {
            throw invalid("filters hold at most " + MAX_CONDITIONS + " conditions");
        }
        Column column = field.column();
        switch (op) {
            case EXISTS -> {
                if (!value.isBoolean()) {
                    throw invalid("$exists takes true or false");
                }
                return new Condition(field, op, value.booleanValue());
            }
            case REGEX -> {
                if (!value.isTextual() || column == Column.CREATED_AT || column == Column.UPDATED_AT) {
                    throw invalid("$regex takes a string and applies to names, states, tags, config and summary");
                }
                return new Condition(field, op, RegularExpressions.compile(text(value), "query", "filters"));
            }
            case IN, NIN -> {
                if (column == Column.CREATED_AT || column == Column.UPDATED_AT) {
                    throw invalid(name + " does not apply to times");
                }
                if (!value.isArray() || value.size() > MAX_VALUES) {
                    throw invalid(name + " takes a list of at most " + MAX_VALUES + " values");
                }
                List<Object> values = new ArrayList<>();
                for (JsonNode item : value) {
                    values.add(value(field, item, name, false));
                }
                return new Condition(field, op, values);
            }
            default -> {
                boolean ordered = op != Op.EQ && op != Op.NE;
                if (column == Column.TAGS && (ordered || !value.isTextual())) {
                    throw invalid("tags take a string, $in, $nin, $ne, $exists or $regex");
                }
                if (ordered && !(value.isNumber() && column.json()) && !value.isTextual()) {
                    throw invalid(name + " compares with a number or a string");
                }
                return new Condition(field, op, value(field, value, name, true));
            }
        }
    }

    /** A value as the field holds it: JSON for config and summary, a time, or a string. */
    private static Object value(Field field, JsonNode value, String name, boolean nullable) {
        if (value.isNull() && nullable && !field.column().json()) {
            return null;
        }
        if (field.column().json()) {
            checkJson(value);
            if (value.isNumber()
                    && (name.equals("$gt") || name.equals("$gte") || name.equals("$lt") || name.equals("$lte"))) {
                return value.decimalValue();
            }
            if (value.isTextual() && name.matches("\\$[gl]te?")) {
                return text(value);
            }
            return value.isNull() && name.matches("\\$(eq|ne)") ? null : new Json(SdkJson.write(value));
        }
        if (!value.isTextual()) {
            throw invalid(name + " on " + field.column().name().toLowerCase() + " takes strings");
        }
        String text = text(value);
        if (field.column() == Column.CREATED_AT || field.column() == Column.UPDATED_AT) {
            return time(text);
        }
        return text;
    }

    private static OffsetDateTime time(String text) {
        try {
            return OffsetDateTime.parse(text);
        } catch (DateTimeParseException e) {
            try {
                return LocalDateTime.parse(text).atOffset(ZoneOffset.UTC);
            } catch (DateTimeParseException again) {
                throw invalid("Times are ISO-8601 date-times, such as 2026-01-31T12:00:00Z: " + text);
            }
        }
    }

    /** A finite JSON value (its strings were checked as the filter was read). */
    private static void checkJson(JsonNode value) {
        if (value.isNumber() && !Double.isFinite(value.doubleValue())) {
            throw invalid("Numbers in filters must be finite");
        }
        value.elements().forEachRemaining(WandbRunFilters::checkJson);
    }

    private static String text(JsonNode value) {
        return value.textValue();
    }

    /** The field a key names: a run field, or a path into the config or summary. */
    static Field field(String key, String where) {
        if (key.length() > MAX_KEY_LENGTH) {
            throw invalid("Keys in " + where + " are at most " + MAX_KEY_LENGTH + " characters");
        }
        Column column = switch (key) {
            case "name", "id" -> Column.NAME;
            case "display_name", "displayName" -> Column.DISPLAY_NAME;
            case "state" -> Column.STATE;
            case "tags" -> Column.TAGS;
            case "created_at", "createdAt" -> Column.CREATED_AT;
            case "heartbeat_at", "heartbeatAt", "updated_at", "updatedAt" -> Column.UPDATED_AT;
            default -> null;
        };
        if (column != null) {
            return new Field(column, List.of());
        }
        for (String prefix : List.of("config.", "summary_metrics.", "summaryMetrics.")) {
            if (key.startsWith(prefix) && key.length() > prefix.length()) {
                List<String> path = new ArrayList<>(Arrays.asList(key.substring(prefix.length()).split("\\.", -1)));
                // W&B's config keeps each value as {"value": ...}: config.lr.value is the value of lr
                if (prefix.equals("config.") && path.size() > 1 && path.get(path.size() - 1).equals("value")) {
                    path.remove(path.size() - 1);
                }
                if (path.size() > MAX_PATH || path.contains("")) {
                    throw invalid("Invalid key in " + where + ": " + key);
                }
                return new Field(prefix.equals("config.") ? Column.CONFIG : Column.SUMMARY, List.copyOf(path));
            }
        }
        throw invalid("Unsupported key in " + where + ": " + key + " (supported: name, display_name, state, tags,"
                + " created_at, heartbeat_at, config.<key>, summary_metrics.<key>)");
    }

    private static ApiException invalid(String message) {
        return ApiException.invalid(Violation.of(message, "value_error", "query", "filters"));
    }
}
