package dev.fulcrum.platform;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.UriInfo;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.KeyDeserializer;
import com.fasterxml.jackson.databind.Module;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.deser.std.JsonNodeDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.module.SimpleDeserializers;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.ApiException.Violation;

/**
 * The one rule for the NUL character ({@code U+0000}): PostgreSQL stores it in neither {@code text} nor {@code jsonb},
 * so no string a request gives may hold it, wherever it comes from: a JSON request body (strings, object keys, nested
 * values; see {@link #bodies()}), a path or query parameter ({@link #parameters}) or a multipart text field
 * ({@link #check(String, Object...)}). Each refusal is a 422 of the interface naming the field, of type {@value #TYPE}.
 * <p>
 * JSON that is kept as JSON text (dataset rows, training trajectory groups) holds the character escaped and gives it
 * back as sent; such properties are marked {@code @JsonDeserialize(contentUsing = NulCharacters.JsonText.class)} in a
 * mix-in of their feature and are not checked.
 */
public class NulCharacters {

    public static final String TYPE = "string_nul";
    public static final String MESSAGE = "Strings may not contain the NUL character (\\u0000)";

    /** A refused string of a JSON body; its path is the field's location. */
    public static final class Refused extends MismatchedInputException {
        Refused(JsonParser parser) {
            super(parser, MESSAGE, String.class);
        }
    }

    /** 422 at {@code loc} when {@code value} holds a NUL character. */
    public static void check(String value, Object... loc) {
        if (value != null && value.indexOf('\0') >= 0) {
            throw ApiException.invalid(Violation.of(MESSAGE, TYPE, loc));
        }
    }

    /** 422 at {@code loc} and the path inside {@code value} of the first string or key holding a NUL character. */
    public static void check(JsonNode value, Object... loc) {
        List<Object> inside = new ArrayList<>();
        if (value != null && find(value, inside)) {
            Collections.reverse(inside);
            List<Object> where = new ArrayList<>(List.of(loc));
            where.addAll(inside);
            throw ApiException.invalid(new Violation(where, MESSAGE, TYPE));
        }
    }

    /** Path and query parameters (after matching, so that they have their names, and after authentication). */
    @ServerRequestFilter(priority = Priorities.USER)
    public void parameters(UriInfo uri) {
        check(uri.getPathParameters(), "path");
        check(uri.getQueryParameters(), "query");
    }

    private static void check(MultivaluedMap<String, String> parameters, String where) {
        for (Map.Entry<String, List<String>> parameter : parameters.entrySet()) {
            check(parameter.getKey(), where, parameter.getKey());
            for (String value : parameter.getValue()) {
                check(value, where, parameter.getKey());
            }
        }
    }

    /**
     * The module of the request body mapper ({@link RequestJson}): every {@code String}, {@code Map} key, tree
     * ({@link JsonNode}) and untyped value ({@code Object}) is checked as it is read.
     */
    static Module bodies() {
        SimpleModule module = new SimpleModule("fulcrum-nul-characters");
        module.setDeserializerModifier(new BeanDeserializerModifier() {
            @Override
            public JsonDeserializer<?> modifyDeserializer(DeserializationConfig config, BeanDescription description,
                    JsonDeserializer<?> deserializer) {
                Class<?> type = description.getBeanClass();
                return type == String.class || type == Object.class ? new Checked(deserializer) : deserializer;
            }

            @Override
            public KeyDeserializer modifyKeyDeserializer(DeserializationConfig config, JavaType type,
                    KeyDeserializer deserializer) {
                return type.hasRawClass(String.class) ? new CheckedKey(deserializer) : deserializer;
            }
        });
        module.setDeserializers(new SimpleDeserializers() {
            @Override
            public JsonDeserializer<?> findTreeNodeDeserializer(Class<? extends JsonNode> nodeType,
                    DeserializationConfig config, BeanDescription description) {
                return new Checked(JsonNodeDeserializer.getDeserializer(nodeType));
            }
        });
        return module;
    }

    /** Reads a JSON object kept as JSON text, where the character is allowed. */
    public static final class JsonText extends StdDeserializer<ObjectNode> {
        public JsonText() {
            super(ObjectNode.class);
        }

        @Override
        @SuppressWarnings("unchecked")
        public ObjectNode deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            return ((JsonDeserializer<ObjectNode>) JsonNodeDeserializer.getDeserializer(ObjectNode.class))
                    .deserialize(p, ctxt);
        }
    }

    private static final class Checked extends DelegatingDeserializer {
        Checked(JsonDeserializer<?> delegate) {
            super(delegate);
        }

        @Override
        protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> delegate) {
            return new Checked(delegate);
        }

        @Override
        public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            Object value = super.deserialize(p, ctxt);
            List<Object> inside = new ArrayList<>();
            if (find(value, inside)) {
                throw refused(p, inside);
            }
            return value;
        }
    }

    private static final class CheckedKey extends KeyDeserializer {
        private final KeyDeserializer delegate;

        CheckedKey(KeyDeserializer delegate) {
            this.delegate = delegate;
        }

        @Override
        public Object deserializeKey(String key, DeserializationContext ctxt) throws IOException {
            if (key != null && key.indexOf('\0') >= 0) {
                throw refused(ctxt.getParser(), new ArrayList<>(List.of(key)));
            }
            return delegate.deserializeKey(key, ctxt);
        }
    }

    /** The exception for a NUL found at {@code inside} (innermost first) below where the parser is. */
    private static JsonMappingException refused(JsonParser p, List<Object> inside) {
        Refused refused = new Refused(p);
        for (Object part : inside) {
            if (part instanceof Integer index) {
                refused.prependPath(new JsonMappingException.Reference(null, index));
            } else {
                refused.prependPath(new JsonMappingException.Reference(null, (String) part));
            }
        }
        return refused;
    }

    /**
     * Whether {@code value} (a string, tree, map or list) holds a NUL character; if so {@code path} gets where,
     * innermost first.
     */
    private static boolean find(Object value, List<Object> path) {
        if (value instanceof String s) {
            return s.indexOf('\0') >= 0;
        }
        if (value instanceof JsonNode node) {
            if (node.isTextual()) {
                return node.textValue().indexOf('\0') >= 0;
            }
            if (node.isObject()) {
                for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> field = it.next();
                    if (field.getKey().indexOf('\0') >= 0 || find(field.getValue(), path)) {
                        path.add(field.getKey());
                        return true;
                    }
                }
            } else if (node.isArray()) {
                for (int i = 0; i < node.size(); i++) {
                    if (find(node.get(i), path)) {
                        path.add(i);
                        return true;
                    }
                }
            }
            return false;
        }
        if (value instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                if (find(entry.getKey(), path) || find(entry.getValue(), path)) {
                    path.add(String.valueOf(entry.getKey()));
                    return true;
                }
            }
            return false;
        }
        if (value instanceof List<?> list) {
            for (int i = 0; i < list.size(); i++) {
                if (find(list.get(i), path)) {
                    path.add(i);
                    return true;
                }
            }
        }
        return false;
    }
}
