package dev.fulcrum.automations;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import com.fasterxml.jackson.databind.util.RawValue;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.JsonInput;

/**
 * A webhook payload with variables. The text must be JSON; variables are substituted only inside JSON string values and
 * the result is serialized again, so a value can never end a string, add a field or change the structure: it always
 * ends up as (part of) one string. Object keys are taken literally.
 * <p>
 * Two forms reference a variable: {@code ${name}} (any name without <code>}</code>, e.g. {@code ${project_name}},
 * {@code ${artifact_metadata.my key}}, {@code ${ACCESS_TOKEN}}) and {@code $NAME} for a secret, where {@code NAME}
 * matches {@code [A-Z_][A-Z0-9_]*} and runs as far as it can. A {@code $} followed by anything else is literal text.
 * <p>
 * Immutable and thread-safe.
 */
public final class PayloadTemplate {

    /** <code>${name}</code> or {@code $NAME}. */
    static final Pattern REFERENCE = Pattern.compile("\\$\\{([^}]+)}|\\$([A-Z_][A-Z0-9_]*)");

    private static final ObjectMapper JSON = JsonInput.configure(new ObjectMapper());

    private final String text;
    private final JsonNode tree;
    private final Set<String> variables;

    private PayloadTemplate(String text, JsonNode tree) {
        this.text = text;
        this.tree = tree;
        Set<String> found = new LinkedHashSet<>();
        collect(tree, found);
        this.variables = Collections.unmodifiableSet(found);
    }

    /** Parses a payload; a text that is not JSON is a 422 problem at {@code body.payload}. */
    public static PayloadTemplate parse(String text) {
        return parse(text, "body", "payload");
    }

    /**
     * Parses a payload; a text that is not JSON, is nested deeper than {@link JsonInput#MAX_NESTING_DEPTH} or has a
     * number too large for a double is a 422 problem at {@code loc}. Numbers keep the text they were written with.
     */
    public static PayloadTemplate parse(String text, Object... loc) {
        if (text == null || text.isBlank()) {
            throw ApiException.invalid(Violation.of("The payload is empty; it must be JSON", "payload_empty", loc));
        }
        try (JsonParser parser = JSON.getFactory().createParser(text)) {
            parser.nextToken();
            JsonNode tree = read(parser, loc);
            if (parser.nextToken() != null) {
                throw ApiException.invalid(Violation.of("The payload is not JSON: more follows its value" + at(parser),
                        "payload_json", loc));
            }
            return new PayloadTemplate(text, tree);
        } catch (JsonProcessingException e) {
            throw ApiException.invalid(Violation.of("The payload is not JSON: " + e.getOriginalMessage()
                    + (e.getLocation() == null ? "" : at(e.getLocation())), "payload_json", loc));
        } catch (IOException e) {
            throw new UncheckedIOException("A string cannot be read", e);
        }
    }

    /**
     * The value at the parser's token. Numbers are kept as their text (a receiver gets every digit as written); a
     * floating point number beyond the range of a double is refused, as most receivers would read it as an infinity.
     * The depth is bounded by the parser's constraints.
     */
    private static JsonNode read(JsonParser parser, Object... loc) throws IOException {
        JsonToken token = parser.currentToken();
        if (token == null) {
            throw ApiException.invalid(Violation.of("The payload is not JSON: it ends early", "payload_json", loc));
        }
        switch (token) {
            case START_OBJECT -> {
                ObjectNode object = JsonNodeFactory.instance.objectNode();
                while (parser.nextToken() == JsonToken.FIELD_NAME) {
                    String name = parser.currentName();
                    parser.nextToken();
                    object.set(name, read(parser, loc));
                }
                return object;
            }
            case START_ARRAY -> {
                ArrayNode array = JsonNodeFactory.instance.arrayNode();
                while (parser.nextToken() != JsonToken.END_ARRAY) {
                    array.add(read(parser, loc));
                }
                return array;
            }
            case VALUE_STRING -> {
                return TextNode.valueOf(parser.getText());
            }
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
                if (token == JsonToken.VALUE_NUMBER_FLOAT && Double.isInfinite(parser.getDoubleValue())) {
                    throw ApiException.invalid(Violation.of(
                            "The payload has a number beyond the range of a double: " + parser.getText() + at(parser),
                            "finite_number", loc));
                }
                return JsonNodeFactory.instance.rawValueNode(new RawValue(parser.getText()));
            }
            case VALUE_TRUE, VALUE_FALSE -> {
                return BooleanNode.valueOf(token == JsonToken.VALUE_TRUE);
            }
            case VALUE_NULL -> {
                return NullNode.instance;
            }
            default -> throw ApiException.invalid(
                    Violation.of("The payload is not JSON: unexpected " + token + at(parser), "payload_json", loc));
        }
    }

    private static String at(JsonParser parser) {
        return at(parser.currentTokenLocation());
    }

    private static String at(JsonLocation location) {
        return " (line " + location.getLineNr() + ", column " + location.getColumnNr() + ")";
    }

    /** The template as written. */
    public String text() {
        return text;
    }

    /** Every variable the template references, in order of first use, by name ({@code project_name}, {@code TOKEN}). */
    public Set<String> variables() {
        return variables;
    }

    /**
     * 422 problem at {@code loc} listing, sorted, the referenced variables that are not in {@code available} (unknown
     * variables, secrets that are not granted or do not exist).
     */
    public void requireAvailable(Collection<String> available, Object... loc) {
        Set<String> missing = new TreeSet<>(variables);
        missing.removeAll(available);
        if (!missing.isEmpty()) {
            throw ApiException.invalid(Violation.of(
                    "The payload references unknown variables or unavailable secrets: " + String.join(", ", missing),
                    "payload_variables", loc));
        }
    }

    /**
     * The payload with every variable replaced by its value, as compact JSON. A variable missing from {@code values} is
     * a 422 problem at {@code body.payload} listing all missing ones.
     */
    public String render(Map<String, String> values) {
        requireAvailable(values.keySet(), "body", "payload");
        try {
            return JSON.writeValueAsString(substitute(tree, values));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A JSON tree does not serialize", e);
        }
    }

    /** The variables one string references, by name. */
    static Set<String> variablesOf(String text) {
        Set<String> found = new java.util.LinkedHashSet<>();
        collect(TextNode.valueOf(text), found);
        return found;
    }

    private static void collect(JsonNode node, Set<String> found) {
        if (node.isTextual()) {
            Matcher m = REFERENCE.matcher(node.textValue());
            while (m.find()) {
                found.add(m.group(1) != null ? m.group(1) : m.group(2));
            }
        } else {
            for (JsonNode child : node) {
                collect(child, found);
            }
        }
    }

    private static JsonNode substitute(JsonNode node, Map<String, String> values) {
        if (node.isTextual()) {
            return TextNode.valueOf(substitute(node.textValue(), values));
        }
        if (node.isObject()) {
            ObjectNode copy = JsonNodeFactory.instance.objectNode();
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> field = it.next();
                copy.set(field.getKey(), substitute(field.getValue(), values));
            }
            return copy;
        }
        if (node.isArray()) {
            ArrayNode copy = JsonNodeFactory.instance.arrayNode(node.size());
            for (JsonNode item : node) {
                copy.add(substitute(item, values));
            }
            return copy;
        }
        return node;
    }

    /** One string with its references replaced; the values are taken literally (no second round of substitution). */
    static String substitute(String text, Map<String, String> values) {
        Matcher m = REFERENCE.matcher(text);
        if (!m.find()) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length() + 32);
        int last = 0;
        do {
            out.append(text, last, m.start());
            String value = values.get(m.group(1) != null ? m.group(1) : m.group(2));
            out.append(value == null ? "" : value);
            last = m.end();
        } while (m.find());
        return out.append(text, last, text.length()).toString();
    }
}
