package dev.fulcrum.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;

/**
 * Every operation of every document in {@code openapi/}, with its $refs resolved: what a test needs to call it and to
 * judge its answers without knowing the operation in advance.
 */
public final class ContractOperations {

    /** The error body each interface answers with. */
    public enum ErrorShape {
        /** FastAPI's {@code {"detail": ...}} (datasets, training). */
        DETAIL,
        /** OpenAI's {@code {"error": {...}}} (inference). */
        OPENAI,
        /** RFC 9457 problem details (the management API). */
        PROBLEM,
        /** GraphQL's {@code {"errors": [{"message": ...}]}} (the W&B protocol). */
        GRAPHQL
    }

    public record Param(String name, String in, Schema<?> schema, boolean required) {
    }

    public record Operation(String document, String method, String path, String id, List<Param> params, String bodyType,
            Schema<?> body, MediaType bodyMedia, Set<String> statuses, ErrorShape errorShape) {

        /** Whether the document names this status among the operation's responses. */
        public boolean documents(int status) {
            return statuses.contains(String.valueOf(status)) || statuses.contains("default")
                    || statuses.contains(status / 100 + "XX");
        }

        public List<Param> params(String in) {
            return params.stream().filter(p -> p.in().equals(in)).toList();
        }

        @Override
        public String toString() {
            return document + " " + id + " (" + method + " " + path + ")";
        }
    }

    private ContractOperations() {
    }

    /** The operations of every openapi/*.yaml, document by document in name order, each in document order. */
    public static List<Operation> all() {
        List<Operation> operations = new ArrayList<>();
        try (Stream<Path> files = Files.list(Path.of("openapi"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
                operations.addAll(of(file));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return operations;
    }

    static List<Operation> of(Path file) {
        ParseOptions options = new ParseOptions();
        options.setResolve(true);
        options.setResolveFully(true);
        OpenAPI api = new OpenAPIV3Parser().read(file.toAbsolutePath().toString(), null, options);
        if (api == null || api.getPaths() == null) {
            throw new IllegalStateException("Cannot read " + file);
        }
        String document = file.getFileName().toString().replace(".yaml", "");
        List<Operation> operations = new ArrayList<>();
        api.getPaths().forEach((path, item) -> item.readOperationsMap().forEach((method, op) -> {
            List<Param> params = new ArrayList<>();
            addParams(params, item.getParameters());
            addParams(params, op.getParameters());
            String bodyType = null;
            Schema<?> body = null;
            MediaType media = null;
            if (op.getRequestBody() != null && op.getRequestBody().getContent() != null) {
                Map.Entry<String, MediaType> first = op.getRequestBody().getContent().entrySet().iterator().next();
                bodyType = first.getKey();
                media = first.getValue();
                body = media.getSchema();
            }
            Set<String> statuses = new LinkedHashSet<>(op.getResponses().keySet());
            operations.add(new Operation(document, method.name(), path, op.getOperationId(), List.copyOf(params),
                    bodyType, body, media, statuses, errorShape(api, op)));
        }));
        return operations;
    }

    private static void addParams(List<Param> params, List<Parameter> declared) {
        if (declared == null) {
            return;
        }
        for (Parameter p : declared) {
            params.removeIf(existing -> existing.name().equals(p.getName()) && existing.in().equals(p.getIn()));
            params.add(new Param(p.getName(), p.getIn(), p.getSchema(), Boolean.TRUE.equals(p.getRequired())));
        }
    }

    /**
     * The shape of the operation's documented client errors; for an operation that documents none (it has no input to
     * refuse), the shape its tag declares ({@code x-error-shape}), which the server uses for whatever it does refuse.
     */
    private static ErrorShape errorShape(OpenAPI api, io.swagger.v3.oas.models.Operation op) {
        ErrorShape documented = errorShape(op.getResponses());
        if (documented != null) {
            return documented;
        }
        String tag = op.getTags() == null || op.getTags().isEmpty() ? null : op.getTags().get(0);
        return api.getTags().stream().filter(t -> t.getName().equals(tag) && t.getExtensions() != null)
                .map(t -> t.getExtensions().get("x-error-shape")).filter(java.util.Objects::nonNull).findFirst()
                .map(shape -> ErrorShape.valueOf(shape.toString().toUpperCase(java.util.Locale.ROOT)))
                .orElseThrow(() -> new IllegalStateException(
                        "No documented client error and no x-error-shape on the" + " tag of " + op.getOperationId()));
    }

    /** The shape of the operation's documented client errors, or null when it documents none. */
    private static ErrorShape errorShape(Map<String, ApiResponse> responses) {
        for (Map.Entry<String, ApiResponse> response : responses.entrySet()) {
            Content content = response.getValue().getContent();
            if (!response.getKey().startsWith("4") || content == null) {
                continue;
            }
            for (Map.Entry<String, MediaType> media : content.entrySet()) {
                if (media.getKey().contains("problem")) {
                    return ErrorShape.PROBLEM;
                }
                Schema<?> schema = media.getValue().getSchema();
                if (schema != null && schema.getProperties() != null) {
                    if (schema.getProperties().containsKey("error")) {
                        return ErrorShape.OPENAI;
                    }
                    if (schema.getProperties().containsKey("detail")) {
                        return ErrorShape.DETAIL;
                    }
                    if (schema.getProperties().containsKey("errors")) {
                        return ErrorShape.GRAPHQL;
                    }
                }
            }
        }
        return null;
    }

    /** The JSON type a schema describes (the first non-null one of an OpenAPI 3.1 type list). */
    public static String type(Schema<?> schema) {
        if (schema == null) {
            return null;
        }
        if (schema.getType() != null) {
            return schema.getType();
        }
        if (schema.getTypes() != null) {
            for (String type : schema.getTypes()) {
                if (!"null".equals(type)) {
                    return type;
                }
            }
        }
        if (schema.getProperties() != null || schema.getAllOf() != null) {
            return "object";
        }
        if (schema.getItems() != null) {
            return "array";
        }
        if (schema.getOneOf() != null && !schema.getOneOf().isEmpty()) {
            return type(schema.getOneOf().get(0));
        }
        if (schema.getAnyOf() != null && !schema.getAnyOf().isEmpty()) {
            return type(schema.getAnyOf().get(0));
        }
        return null;
    }
}
