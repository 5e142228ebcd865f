package dev.fulcrum.inference;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

import com.atlassian.oai.validator.report.LevelResolver;
import com.atlassian.oai.validator.report.MessageResolver;
import com.atlassian.oai.validator.report.ValidationReport;
import com.atlassian.oai.validator.schema.SchemaValidator;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;

/**
 * OpenAI's published OpenAPI document ({@code openai/openai-openapi} 2.3.0, pinned with its license in
 * {@code src/test/resources/openai-openapi/}), as a judge of answers: an answer body (or one streamed event) is checked
 * against the schema the document gives the operation's 200 answer of that media type, with the validator the suite
 * checks its own contracts with. Properties the document does not name are allowed, as JSON Schema and the OpenAI SDKs
 * allow them (Fulcrum's model objects carry {@code root} and {@code type}).
 * <p>
 * {@link #GAPS} is the one list of where OpenAI's own API answers otherwise than its document says, so that Fulcrum,
 * which answers as the API does, is not held to the document there; each with the reason. A violation is excused only
 * by a gap of its operation, and a gap that excuses nothing in a whole run fails the run ({@link #unusedGaps}), so the
 * list cannot outlive its reasons.
 */
final class OpenAiDocument {

    static final Path FILE = Path.of("src", "test", "resources", "openai-openapi", "openapi.yaml");

    /**
     * A place where OpenAI's API differs from its document: violations of the operation's answers whose message matches
     * {@code message} (a regular expression, searched).
     */
    record Gap(String operation, String message, String reason) {
    }

    static final List<Gap> GAPS = List.of(
            new Gap("POST /completions", "^text/event-stream$",
                    "The document gives /completions only an application/json answer, but with \"stream\": true "
                            + "OpenAI's API (and its SDKs, which read it) streams Server-Sent Events of "
                            + "CreateCompletionResponse objects, as for chat"),
            new Gap("POST /completions", "/choices/0/finish_reason.*null",
                    "A streamed completion's chunks before a choice's last have \"finish_reason\": null in OpenAI's "
                            + "API; the document's CreateCompletionResponse (its stream's chunks too) says a string"),
            // the logprobs object fails the document's anyOf only by null entries (no other violation inside it)
            new Gap("POST /completions",
                    "^\\[Path '/choices/\\d+/logprobs'\\] Instance failed to match at least one required schema "
                            + "among 2 \\[(\\S+/anyOf/0: Instance type \\(null\\) does not match any allowed "
                            + "primitive type \\(allowed: \\[[^\\]]*\\]\\), )+\\S+/anyOf/1: Instance type "
                            + "\\(object\\) does not match any allowed primitive type \\(allowed: \\[\"null\"\\]\\)\\]",
                    "With \"echo\" and \"logprobs\" the API scores the prompt: its first token, which nothing came "
                            + "before, has null in token_logprobs and top_logprobs (OpenAI's legacy models and vLLM "
                            + "alike); the document says a number and an object"),
            new Gap("POST /embeddings", "/data/\\d+/embedding.*instance type \\(string\\)",
                    "With \"encoding_format\": \"base64\" OpenAI's API answers each embedding as a base64 string "
                            + "(the SDKs ask for it by default and decode it); the document says an array of numbers"));

    private final OpenAPI api;
    private final SchemaValidator validator;
    private final Set<Gap> used = Collections.newSetFromMap(new ConcurrentHashMap<>());
    private final Map<String, Schema<?>> references = new ConcurrentHashMap<>();

    OpenAiDocument() {
        ParseOptions options = new ParseOptions();
        options.setResolve(false);
        var parsed = new OpenAPIV3Parser().readLocation(FILE.toAbsolutePath().toUri().toString(), null, options);
        if (parsed.getOpenAPI() == null) {
            throw new IllegalStateException("OpenAI's document does not parse: " + parsed.getMessages());
        }
        api = parsed.getOpenAPI();
        Set<Schema<?>> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        api.getComponents().getSchemas().values().forEach(schema -> bindType(schema, seen));
        api.getPaths().values().forEach(item -> item.readOperations().forEach(operation -> {
            if (operation.getResponses() != null) {
                operation.getResponses().values().forEach(response -> {
                    if (response.getContent() != null) {
                        response.getContent().values().forEach(media -> bindType(media.getSchema(), seen));
                    }
                });
            }
        }));
        // format is an annotation in JSON Schema 2020-12, a 3.1 document's dialect, not an assertion (the validator's
        // own check of "float" refuses decimals that a float only approximates, as every float's decimal is)
        validator = new SchemaValidator(api, new MessageResolver(LevelResolver.create()
                .withLevel(SchemaValidator.ADDITIONAL_PROPERTIES_KEY, ValidationReport.Level.IGNORE)
                .withLevel("validation.response.body.schema.additionalProperties", ValidationReport.Level.IGNORE)
                .withLevel("validation.response.body.schema.format", ValidationReport.Level.IGNORE).build()));
    }

    /**
     * The document's schemas as the validator (JSON Schema draft 4 with OpenAPI's keywords) reads what a 3.1 document
     * means: a 3.1 document's parsed schemas hold a single {@code type} in {@code types}, while the validator reads
     * {@code type} (the document has no schema of several types, so nothing is lost); and {@code discriminator} is
     * dropped: a hint for code generators beside {@code anyOf} / {@code oneOf}, which decide validity alone, and the
     * validator's own check of it refuses schemas of the document whose variants name the property through a
     * {@code $ref}.
     */
    @SuppressWarnings({ "rawtypes", "unchecked" })
    private static void bindType(Schema schema, Set<Schema<?>> seen) {
        if (schema == null || !seen.add(schema)) {
            return;
        }
        if (schema.getType() == null && schema.getTypes() != null && schema.getTypes().size() == 1) {
            schema.setType((String) schema.getTypes().iterator().next());
        }
        schema.setDiscriminator(null);
        if (schema.getProperties() != null) {
            ((Map<String, Schema>) schema.getProperties()).values().forEach(s -> bindType(s, seen));
        }
        bindType(schema.getItems(), seen);
        bindType(schema.getNot(), seen);
        if (schema.getAdditionalProperties() instanceof Schema additional) {
            bindType(additional, seen);
        }
        for (List<Schema> list : new List[] { schema.getAllOf(), schema.getAnyOf(), schema.getOneOf(),
                schema.getPrefixItems() }) {
            if (list != null) {
                list.forEach(s -> bindType(s, seen));
            }
        }
    }

    /**
     * The schema the document gives the 200 answer of {@code operation} ("POST /chat/completions") as {@code media}.
     */
    Schema<?> answerSchema(String operation, String media) {
        MediaType content = answers(operation).get(media);
        return content == null ? null : content.getSchema();
    }

    private Map<String, MediaType> answers(String operation) {
        String[] parts = operation.split(" ", 2);
        PathItem item = api.getPaths().get(parts[1]);
        if (item == null) {
            throw new IllegalArgumentException("OpenAI's document has no path " + parts[1]);
        }
        Operation op = item.readOperationsMap().get(PathItem.HttpMethod.valueOf(parts[0]));
        var ok = op == null ? null : op.getResponses().get("200");
        if (ok == null) {
            throw new IllegalArgumentException("OpenAI's document has no 200 answer of " + operation);
        }
        return ok.getContent() == null ? Map.of() : ok.getContent();
    }

    /** A component schema of the document, by name (the same instance each time: the validator keeps its work). */
    Schema<?> component(String name) {
        if (!api.getComponents().getSchemas().containsKey(name)) {
            throw new IllegalArgumentException("OpenAI's document has no schema " + name);
        }
        return references.computeIfAbsent(name, n -> new Schema<>().$ref("#/components/schemas/" + n));
    }

    /**
     * The schema of each Responses API stream event type ({@code response.created} and the rest), read from the
     * document's {@code ResponseStreamEvent}: its variants' {@code type} enums.
     */
    @SuppressWarnings("rawtypes")
    Map<String, String> responseEventSchemas() {
        Map<String, String> byType = new LinkedHashMap<>();
        Map<String, Schema> schemas = api.getComponents().getSchemas();
        for (Object each : schemas.get("ResponseStreamEvent").getAnyOf()) {
            String ref = ((Schema) each).get$ref();
            String name = ref.substring(ref.lastIndexOf('/') + 1);
            Schema type = (Schema) schemas.get(name).getProperties().get("type");
            if (type != null && type.getEnum() != null && type.getEnum().size() == 1) {
                byType.put(String.valueOf(type.getEnum().get(0)), name);
            }
        }
        return byType;
    }

    /**
     * What of {@code json} (an answer of {@code operation} as {@code media}, or one event of its stream) violates
     * {@code schema}, less what a gap of the operation excuses; also the media type itself when the document gives the
     * operation's answer no such media type.
     */
    List<String> violations(String operation, String media, Schema<?> schema, String json) {
        List<String> found = new ArrayList<>();
        if (!answers(operation).containsKey(media)) {
            found.add(media);
        }
        ValidationReport report = validator.validate(json, schema, "response.body");
        for (ValidationReport.Message message : report.getMessages()) {
            if (message.getLevel() == ValidationReport.Level.ERROR) {
                found.add(message.getMessage()
                        + (message.getAdditionalInfo().isEmpty() ? "" : " " + message.getAdditionalInfo()));
            }
        }
        List<String> left = new ArrayList<>();
        for (String violation : found) {
            Gap gap = GAPS.stream()
                    .filter(g -> g.operation().equals(operation)
                            && Pattern.compile(g.message(), Pattern.CASE_INSENSITIVE).matcher(violation).find())
                    .findFirst().orElse(null);
            if (gap == null) {
                left.add(violation);
            } else {
                used.add(gap);
            }
        }
        return left;
    }

    /** The gaps that excused nothing so far. */
    List<Gap> unusedGaps() {
        return GAPS.stream().filter(gap -> !used.contains(gap)).toList();
    }
}
