package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.lang.reflect.AnnotatedArrayType;
import java.lang.reflect.AnnotatedElement;
import java.lang.reflect.AnnotatedParameterizedType;
import java.lang.reflect.AnnotatedType;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Parameter;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

/**
 * Only the models a request carries keep the contract's Bean Validation constraints: Hibernate Validator builds the
 * metadata of every constrained class at start-up, and the models that are only ever answers are never validated. The
 * request models are listed in src/main/openapi-templates/request-models.openapi-generator-ignore, which the *-answers
 * executions of pom.xml leave alone when they generate the other models again without constraints. A request model
 * missing from that list would lose its validation without a sound: this test derives the list from openapi/ again.
 */
class RequestModelsTest {

    private static final Path LIST = Path.of("src", "main", "openapi-templates",
            "request-models.openapi-generator-ignore");
    private static final Path GENERATED = Path.of("target", "generated-sources", "openapi", "src", "gen", "java");
    private static final Set<String> METHODS = Set.of("get", "put", "post", "delete", "patch", "head", "options");

    @Test
    void theListedRequestModelsAreEveryModelThatARequestCarries() throws IOException {
        Set<String> derived = new TreeSet<>();
        YAMLMapper yaml = new YAMLMapper();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(Path.of("openapi"), "*.yaml")) {
            for (Path file : files) {
                String document = file.getFileName().toString().replaceAll("\\.yaml$", "");
                Set<String> carried = carriedByRequests(yaml.readTree(file.toFile()));
                JsonNode schemas = yaml.readTree(file.toFile()).path("components").path("schemas");
                for (String model : models(document)) {
                    if (carried.contains(model) || (!schemas.has(model) && inlineInAny(model, carried, schemas))) {
                        derived.add("**/dev/fulcrum/" + document + "/api/model/" + model + ".java");
                    }
                }
            }
        }
        Set<String> listed = new TreeSet<>();
        for (String line : Files.readAllLines(LIST)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                listed.add(line.trim());
            }
        }

        assertFalse(derived.isEmpty(), "request models are found in openapi/");
        assertEquals(derived, listed, "the request models in " + LIST);
    }

    @Test
    void theModelsThatAreOnlyAnswersCarryNoConstraint() throws IOException, ClassNotFoundException {
        Set<String> listed = new HashSet<>();
        for (String line : Files.readAllLines(LIST)) {
            if (!line.isBlank() && !line.startsWith("#")) {
                listed.add(line.trim().replaceAll("^\\*\\*/", "").replaceAll("\\.java$", "").replace('/', '.'));
            }
        }
        List<String> answers;
        try (Stream<Path> files = Files.walk(GENERATED)) {
            answers = files.filter(file -> file.getParent().endsWith(Path.of("api", "model")))
                    .map(file -> GENERATED.relativize(file).toString().replaceAll("\\.java$", "").replace('/', '.'))
                    .filter(name -> !listed.contains(name)).sorted().toList();
        }
        List<String> constrained = new ArrayList<>();
        for (String name : answers) {
            if (constrained(Class.forName(name))) {
                constrained.add(name);
            }
        }

        assertFalse(answers.isEmpty(), "answer models are generated into " + GENERATED);
        assertEquals(List.of(), constrained);
    }

    /** The schemas that a request body or parameter refers to, directly or through other components. */
    private static Set<String> carriedByRequests(JsonNode document) {
        Set<String> seeds = new HashSet<>();
        for (Iterator<Map.Entry<String, JsonNode>> paths = document.path("paths").fields(); paths.hasNext();) {
            for (Iterator<Map.Entry<String, JsonNode>> it = paths.next().getValue().fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> entry = it.next();
                if (entry.getKey().equals("parameters")) {
                    references(entry.getValue(), seeds);
                } else if (METHODS.contains(entry.getKey())) {
                    references(entry.getValue().path("parameters"), seeds);
                    references(entry.getValue().path("requestBody"), seeds);
                }
            }
        }
        JsonNode components = document.path("components");
        Set<String> carried = new HashSet<>();
        Deque<String> pending = new ArrayDeque<>(seeds);
        while (!pending.isEmpty()) {
            String name = pending.pop();
            if (carried.add(name)) {
                Set<String> further = new HashSet<>();
                for (String kind : List.of("schemas", "requestBodies", "parameters")) {
                    references(components.path(kind).path(name), further);
                }
                pending.addAll(further);
            }
        }
        return carried;
    }

    /** The component names that {@code node} refers to: {@code $ref}s and discriminator mappings. */
    private static void references(JsonNode node, Set<String> names) {
        if (node.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> field = it.next();
                if (field.getKey().equals("$ref") && field.getValue().isTextual()) {
                    names.add(lastSegment(field.getValue().asText()));
                } else if (field.getKey().equals("mapping") && field.getValue().isObject()) {
                    field.getValue().elements().forEachRemaining(target -> names.add(lastSegment(target.asText())));
                } else {
                    references(field.getValue(), names);
                }
            }
        } else if (node.isArray()) {
            node.elements().forEachRemaining(element -> references(element, names));
        }
    }

    private static String lastSegment(String reference) {
        return reference.substring(reference.lastIndexOf('/') + 1);
    }

    /** An inline model is named after the schema it is written in (InferenceChatRequestStop, ProblemErrorsInner). */
    private static boolean inlineInAny(String model, Set<String> carried, JsonNode schemas) {
        return carried.stream().anyMatch(schema -> schemas.has(schema) && model.startsWith(schema));
    }

    private static List<String> models(String document) throws IOException {
        Path directory = GENERATED.resolve(Path.of("dev", "fulcrum", document, "api", "model"));
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(file -> file.getFileName().toString().replaceAll("\\.java$", "")).toList();
        }
    }

    private static boolean constrained(Class<?> model) {
        List<AnnotatedElement> elements = new ArrayList<>(Arrays.asList(model.getDeclaredFields()));
        List<AnnotatedType> types = new ArrayList<>();
        for (Field field : model.getDeclaredFields()) {
            types.add(field.getAnnotatedType());
        }
        List<Executable> executables = new ArrayList<>(Arrays.asList(model.getDeclaredMethods()));
        executables.addAll(Arrays.asList(model.getDeclaredConstructors()));
        for (Executable executable : executables) {
            elements.add(executable);
            types.add(executable.getAnnotatedReturnType());
            for (Parameter parameter : executable.getParameters()) {
                elements.add(parameter);
                types.add(parameter.getAnnotatedType());
            }
        }
        return elements.stream().anyMatch(RequestModelsTest::validation) || types.stream().anyMatch(type -> {
            Deque<AnnotatedType> pending = new ArrayDeque<>(List.of(type));
            while (!pending.isEmpty()) {
                AnnotatedType next = pending.pop();
                if (validation(next)) {
                    return true;
                }
                if (next instanceof AnnotatedParameterizedType parameterized) {
                    pending.addAll(Arrays.asList(parameterized.getAnnotatedActualTypeArguments()));
                } else if (next instanceof AnnotatedArrayType array) {
                    pending.add(array.getAnnotatedGenericComponentType());
                }
            }
            return false;
        });
    }

    private static boolean validation(AnnotatedElement element) {
        return Arrays.stream(element.getAnnotations())
                .anyMatch(annotation -> annotation.annotationType().getName().startsWith("jakarta.validation."));
    }
}
