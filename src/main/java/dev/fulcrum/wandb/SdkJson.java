package dev.fulcrum.wandb;

import java.util.Iterator;
import java.util.Map;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.StorableText;

/**
 * The JSON the SDK sends inside strings (GraphQL's {@code JSONString}, file stream lines) and the W&B forms of what the
 * runs service stores: the SDK writes {@code NaN} and {@code Infinity}, which the store does not keep, and wraps each
 * config value as {@code {"value": v, "desc": ...}}, which the store keeps unwrapped (as the runs API shows it).
 */
final class SdkJson {

    static final ObjectMapper MAPPER = JsonMapper.builder().enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS).build();

    private SdkJson() {
    }

    /** JSON the server wrote itself (never a client's text). */
    static JsonNode read(String text) {
        try {
            return MAPPER.readTree(text);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A JSON object from a string a client sent; a 422 naming {@code field} when it is not one, or when a string of it
     * cannot be stored ({@link StorableText}).
     */
    static ObjectNode object(String text, String field) {
        try {
            JsonNode node = StorableText.json(MAPPER, text, "body", field);
            if (node == null || node.isNull()) {
                return JsonNodeFactory.instance.objectNode();
            }
            if (!node.isObject()) {
                throw ApiException.invalid(Violation.of("Must be a JSON object", "dict_type", "body", field));
            }
            return (ObjectNode) node;
        } catch (JsonProcessingException e) {
            throw ApiException.invalid(
                    Violation.of("Must be a JSON object: " + e.getOriginalMessage(), "json_invalid", "body", field));
        }
    }

    /** The object without its non-finite numbers ({@code NaN}, {@code Infinity}), at any depth. */
    static ObjectNode finite(ObjectNode object) {
        for (Iterator<Map.Entry<String, JsonNode>> it = object.fields(); it.hasNext();) {
            JsonNode value = it.next().getValue();
            if (value.isFloatingPointNumber() && !Double.isFinite(value.doubleValue())) {
                it.remove();
            } else if (value.isObject()) {
                finite((ObjectNode) value);
            }
        }
        return object;
    }

    /** A history row as the runs service stores it: its numbers only (media and other values are not kept). */
    static ObjectNode numbers(ObjectNode row) {
        ObjectNode kept = JsonNodeFactory.instance.objectNode();
        row.fields().forEachRemaining(field -> {
            JsonNode value = field.getValue();
            if (value.isNumber() && (!value.isFloatingPointNumber() || Double.isFinite(value.doubleValue()))
                    && !field.getKey().isEmpty() && field.getKey().length() <= 256) {
                kept.set(field.getKey(), value);
            }
        });
        return kept;
    }

    /**
     * A history row's values that are not numbers (the SDK's media objects, strings, booleans, nested values), which
     * the runs service keeps beside the row's numbers; keys the numbers would not take are left out.
     */
    static ObjectNode media(ObjectNode row) {
        ObjectNode kept = JsonNodeFactory.instance.objectNode();
        row.fields().forEachRemaining(field -> {
            JsonNode value = field.getValue();
            if (!value.isNumber() && !value.isNull() && !field.getKey().isEmpty() && field.getKey().length() <= 256) {
                kept.set(field.getKey(), value);
            }
        });
        return kept;
    }

    /** W&B's config form unwrapped: {@code {"k": {"value": v, "desc": d}}} becomes {@code {"k": v}}. */
    static ObjectNode unwrapConfig(ObjectNode config) {
        ObjectNode plain = JsonNodeFactory.instance.objectNode();
        config.fields().forEachRemaining(field -> {
            JsonNode value = field.getValue();
            plain.set(field.getKey(), value.isObject() && value.has("value") ? value.get("value") : value);
        });
        return plain;
    }

    /** The stored config in W&B's form. */
    static ObjectNode wrapConfig(ObjectNode config) {
        ObjectNode wrapped = JsonNodeFactory.instance.objectNode();
        config.fields().forEachRemaining(field -> {
            ObjectNode value = wrapped.putObject(field.getKey());
            value.set("value", field.getValue());
            value.putNull("desc");
        });
        return wrapped;
    }

    static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
