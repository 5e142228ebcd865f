package dev.fulcrum.platform.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

/**
 * Which error shape each operation answers in, as the published documents ({@code openapi/*.yaml}) declare it: every
 * tag names its shape ({@code x-error-shape}: {@code detail}, {@code openai}, {@code problem} or {@code graphql}), and
 * an operation whose security lists {@code basicAuth} accepts HTTP Basic. A request belongs to the operation at its
 * path (all operations of a path share a shape, which {@code ErrorShapesTest} checks), so a request refused before a
 * resource method was chosen (405, 415, a body-size 413 of a pre-matching filter, a 414) answers in the same shape as
 * the resource would. The documents are read once, when the first error needs them.
 */
final class ErrorShapes {

    enum Dialect {
        /** FastAPI's {@code {"detail": ...}}. */
        DETAIL,
        /** OpenAI's {@code {"error": {...}}} ({@link dev.fulcrum.platform.errors.OpenAiError}). */
        OPENAI,
        /** RFC 9457 problem details. */
        PROBLEM,
        /** GraphQL's {@code {"errors": [{"message": ...}]}} (the W&B protocol). */
        GRAPHQL
    }

    /** The published documents, as served from {@code META-INF/resources/openapi/} (the files of {@code openapi/}). */
    static final List<String> DOCUMENTS = List.of("accounts", "artifacts", "automations", "datasets", "events",
            "inference", "runs", "tinker", "training", "wandb");

    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options");

    /**
     * An operation of a published document: its method, path, the media types of the bodies it reads, its error shape
     * and whether it accepts HTTP Basic.
     */
    record Operation(String method, String template, Pattern path, List<String> consumes, Dialect dialect,
            boolean basic) {
    }

    private static final class Published {
        static final List<Operation> OPERATIONS = read();
        /** The operations whose request body is a file: every media type they read is neither JSON nor a form. */
        static final List<Operation> FILE_BODIES = OPERATIONS.stream()
                .filter(o -> !o.consumes().isEmpty() && o.consumes().stream()
                        .noneMatch(t -> t.contains("json") || t.startsWith("multipart/") || t.contains("form")))
                .toList();
    }

    private ErrorShapes() {
    }

    /**
     * The operation at a request's path (the first of its methods), or null for a path no document has (an unknown
     * path).
     */
    static Operation at(String path) {
        String p = normalized(path);
        for (Operation o : Published.OPERATIONS) {
            if (o.path().matcher(p).matches()) {
                return o;
            }
        }
        return null;
    }

    static Dialect dialect(Operation operation, String path) {
        return operation != null ? operation.dialect() : byPrefix(normalized(path));
    }

    static boolean acceptsBasic(Operation operation, String path) {
        return operation != null ? operation.basic() : isDatasets(normalized(path));
    }

    /** The datasets API's paths, Weave's trace-server paths among them. */
    static boolean isDatasets(String p) {
        return p.startsWith("/v2/") || p.startsWith("/table/") || p.startsWith("/obj/") || p.startsWith("/objs/")
                || p.startsWith("/call/") || p.startsWith("/calls/") || p.startsWith("/feedback/")
                || p.startsWith("/file/") || p.startsWith("/cost/") || p.equals("/server_info");
    }

    /** The media types the operation at {@code method} and {@code path} reads, empty when there is none. */
    static List<String> consumes(String method, String path) {
        String p = normalized(path);
        return Published.OPERATIONS.stream()
                .filter(o -> o.method().equalsIgnoreCase(method) && o.path().matcher(p).matches())
                .map(Operation::consumes).findFirst().orElse(List.of());
    }

    /**
     * Whether the operation at {@code method} and {@code path} reads a file as its body (its contract names only such
     * media types, e.g. {@code application/octet-stream}), whatever type the request declares.
     */
    static boolean readsFile(String method, String path) {
        String p = normalized(path);
        for (Operation o : Published.FILE_BODIES) {
            if (o.method().equalsIgnoreCase(method) && o.path().matcher(p).matches()) {
                return true;
            }
        }
        return false;
    }

    /** Every operation of the published documents. */
    static List<Operation> operations() {
        return Published.OPERATIONS;
    }

    /**
     * Only for a path no generated interface has: the shape of the interface whose paths it extends, so that a client
     * mistyping a datasets URL still reads a FastAPI error.
     */
    private static Dialect byPrefix(String p) {
        if (p.startsWith("/files/") || p.startsWith("/sdk/")) {
            return Dialect.GRAPHQL; // the W&B protocol's other paths
        }
        if (isDatasets(p) || p.startsWith("/v1/preview/") || p.startsWith("/v1/health") || p.startsWith("/tinker/")
                || p.startsWith("/v1/system-check")) {
            return Dialect.DETAIL;
        }
        return p.startsWith("/v1/") ? Dialect.OPENAI : Dialect.PROBLEM;
    }

    static String normalized(String path) {
        String p = path == null || path.isEmpty() ? "/" : path.startsWith("/") ? path : "/" + path;
        return p.length() > 1 && p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
    }

    private static List<Operation> read() {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
        List<Operation> operations = new ArrayList<>();
        for (String name : DOCUMENTS) {
            String resource = "META-INF/resources/openapi/" + name + ".yaml";
            try (InputStream in = Thread.currentThread().getContextClassLoader().getResourceAsStream(resource)) {
                if (in == null) {
                    throw new IllegalStateException(resource + " is missing");
                }
                read(yaml.readTree(in), resource, operations);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return List.copyOf(operations);
    }

    private static void read(JsonNode document, String resource, List<Operation> operations) {
        Map<String, Dialect> shapes = new HashMap<>();
        for (JsonNode tag : document.path("tags")) {
            String shape = tag.path("x-error-shape").asText("");
            if (shape.isEmpty()) {
                throw new IllegalStateException(
                        resource + ": tag " + tag.path("name").asText() + " has no x-error-shape");
            }
            shapes.put(tag.path("name").asText(), Dialect.valueOf(shape.toUpperCase(Locale.ROOT)));
        }
        boolean basicByDefault = listsBasic(document.path("security"));
        for (Iterator<Map.Entry<String, JsonNode>> paths = document.path("paths").fields(); paths.hasNext();) {
            Map.Entry<String, JsonNode> path = paths.next();
            for (Iterator<Map.Entry<String, JsonNode>> ops = path.getValue().fields(); ops.hasNext();) {
                Map.Entry<String, JsonNode> op = ops.next();
                if (!METHODS.contains(op.getKey())) {
                    continue;
                }
                String tag = op.getValue().path("tags").path(0).asText();
                Dialect dialect = shapes.get(tag);
                if (dialect == null) {
                    throw new IllegalStateException(
                            resource + ": " + op.getKey() + " " + path.getKey() + " has no tag with an x-error-shape");
                }
                List<String> consumes = new ArrayList<>();
                op.getValue().path("requestBody").path("content").fieldNames().forEachRemaining(consumes::add);
                JsonNode security = op.getValue().get("security");
                String template = normalized(path.getKey());
                operations.add(new Operation(op.getKey().toUpperCase(Locale.ROOT), template, regex(template),
                        List.copyOf(consumes), dialect, security == null ? basicByDefault : listsBasic(security)));
            }
        }
    }

    private static boolean listsBasic(JsonNode security) {
        for (JsonNode requirement : security) {
            if (requirement.has("basicAuth")) {
                return true;
            }
        }
        return false;
    }

    /** A path template's parameters ({@code {name}}) match one segment each. */
    private static Pattern regex(String template) {
        StringBuilder regex = new StringBuilder();
        for (String part : template.split("\\{[^}]+}", -1)) {
            if (!regex.isEmpty()) {
                regex.append("[^/]+");
            }
            regex.append(Pattern.quote(part));
        }
        return Pattern.compile(regex.toString());
    }
}
