package dev.fulcrum.platform.json;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.UriInfo;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;
import org.jboss.resteasy.reactive.server.WithFormRead;
import org.jboss.resteasy.reactive.server.core.ResteasyReactiveRequestContext;
import org.jboss.resteasy.reactive.server.core.multipart.FormData;
import org.jboss.resteasy.reactive.server.multipart.FormValue;
import org.jboss.resteasy.reactive.server.spi.ResteasyReactiveContainerRequestContext;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.KeyDeserializer;
import com.fasterxml.jackson.databind.Module;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.deser.std.JsonNodeDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.module.SimpleDeserializers;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The one rule for text PostgreSQL cannot store: the NUL character ({@code U+0000}), which it keeps in neither
 * {@code text} nor {@code jsonb}, and unpaired UTF-16 surrogates ({@code \ud800} without its pair), which the JDBC
 * driver would silently store as {@code ?}. No string a request gives may hold either, wherever it comes from: a JSON
 * request body (strings, object keys, nested values; see {@link #bodies()}), a path, query or form parameter
 * ({@link #parameters}), JSON text inside a string ({@link #json}: W&B's config, summary and file stream lines) or a
 * GraphQL string literal ({@code wandb/WandbGraphql}). Each refusal is a 422 of the interface naming the field, of type
 * {@value #TYPE} or {@value #SURROGATE_TYPE}.
 * <p>
 * JSON that is kept as JSON text (dataset rows, training trajectory groups) holds the character escaped and gives it
 * back as sent; such properties are marked {@code @JsonDeserialize(contentUsing = StorableText.JsonText.class)} in a
 * mix-in of their feature and are not checked.
 */
public class StorableText {

    public static final String TYPE = "string_nul";
    public static final String MESSAGE = "Strings may not contain the NUL character (\\u0000)";
    public static final String SURROGATE_TYPE = "string_surrogate";
    public static final String SURROGATE_MESSAGE = "Strings may not contain unpaired UTF-16 surrogates (\\ud800-\\udfff)";

    /** What is wrong with a string: its message and type. */
    public record Problem(String message, String type) {
    }

    private static final Problem NUL = new Problem(MESSAGE, TYPE);
    private static final Problem SURROGATE = new Problem(SURROGATE_MESSAGE, SURROGATE_TYPE);

    /** A refused string of a JSON body; its path is the field's location. */
    public static final class Refused extends MismatchedInputException {
        private final transient Problem problem;

        Refused(JsonParser parser, Problem problem) {
            super(parser, problem.message(), String.class);
            this.problem = problem;
        }

        public Problem problem() {
            return problem;
        }
    }

    /** Why the database cannot store {@code value}, or null when it can. */
    public static Problem problem(String value) {
        if (value == null) {
            return null;
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\0') {
                return NUL;
            }
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < value.length()
                        && Character.isLowSurrogate(value.charAt(i + 1))) {
                    i++;
                } else {
                    return SURROGATE;
                }
            }
        }
        return null;
    }

    /** 422 at {@code loc} when the database cannot store {@code value}. */
    private static void check(String value, Object... loc) {
        Problem problem = problem(value);
        if (problem != null) {
            throw ApiException.invalid(Violation.of(problem.message(), problem.type(), loc));
        }
    }

    /**
     * JSON text a client sent inside a string (W&B's config and summary, file stream lines), read as a tree; a 422 at
     * {@code loc} and the path inside when a string or key of it cannot be stored. Syntax errors are the caller's.
     */
    public static JsonNode json(ObjectMapper mapper, String text, Object... loc) throws JsonProcessingException {
        JsonNode value = mapper.readTree(text);
        List<Object> inside = new ArrayList<>();
        Problem problem = value == null ? null : find(value, inside);
        if (problem != null) {
            Collections.reverse(inside);
            List<Object> where = new ArrayList<>(List.of(loc));
            where.addAll(inside);
            throw ApiException.invalid(new Violation(where, problem.message(), problem.type()));
        }
        return value;
    }

    /**
     * Path, query and form parameters (after matching, so that they have their names, and after authentication): the
     * fields of URL-encoded forms (the console's) and the text fields and file names of multipart bodies, which are
     * read for it (after authentication, whose filters come first).
     */
    @ServerRequestFilter(priority = Priorities.USER)
    @WithFormRead
    public void parameters(UriInfo uri, ResteasyReactiveContainerRequestContext request) {
        check(uri.getPathParameters(), "path");
        check(uri.getQueryParameters(), "query");
        FormData form = request.getServerRequestContext() instanceof ResteasyReactiveRequestContext context
                ? context.getFormData()
                : null;
        if (form != null) {
            for (String name : form) {
                check(name, "body", name);
                for (FormValue value : form.get(name)) {
                    check(value.isFileItem() ? value.getFileName() : value.getValue(), "body", name);
                }
            }
        }
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
            Problem problem = find(value, inside);
            if (problem != null) {
                throw refused(p, problem, inside);
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
            Problem problem = problem(key);
            if (problem != null) {
                throw refused(ctxt.getParser(), problem, new ArrayList<>(List.of(key)));
            }
            return delegate.deserializeKey(key, ctxt);
        }
    }

    /** The exception for a string found at {@code inside} (innermost first) below where the parser is. */
    private static JsonMappingException refused(JsonParser p, Problem problem, List<Object> inside) {
        Refused refused = new Refused(p, problem);
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
     * Why the database cannot store a string or key of {@code value} (a string, tree, map or list), or null; when it
     * cannot, {@code path} gets where, innermost first.
     */
    private static Problem find(Object value, List<Object> path) {
        if (value instanceof String s) {
            return problem(s);
        }
        if (value instanceof JsonNode node) {
            if (node.isTextual()) {
                return problem(node.textValue());
            }
            if (node.isObject()) {
                for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> field = it.next();
                    Problem problem = firstOf(problem(field.getKey()), field.getValue(), path);
                    if (problem != null) {
                        path.add(field.getKey());
                        return problem;
                    }
                }
            } else if (node.isArray()) {
                return findItem(node.size(), node::get, path);
            }
            return null;
        }
        if (value instanceof Map<?, ?> map) {
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                Problem problem = firstOf(find(entry.getKey(), path), entry.getValue(), path);
                if (problem != null) {
                    path.add(String.valueOf(entry.getKey()));
                    return problem;
                }
            }
            return null;
        }
        if (value instanceof List<?> list) {
            return findItem(list.size(), list::get, path);
        }
        return null;
    }

    /** The first problem of the {@code size} items of a list or array, its index added to {@code path}. */
    private static Problem findItem(int size, IntFunction<Object> item, List<Object> path) {
        for (int i = 0; i < size; i++) {
            Problem problem = find(item.apply(i), path);
            if (problem != null) {
                path.add(i);
                return problem;
            }
        }
        return null;
    }

    /** The key's problem, else the value's. */
    private static Problem firstOf(Problem key, Object value, List<Object> path) {
        return key != null ? key : find(value, path);
    }
}
