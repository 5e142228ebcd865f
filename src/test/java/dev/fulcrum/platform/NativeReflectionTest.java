package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Every model generated from openapi/*.yaml is registered for reflection, so that a native executable reads and writes
 * it: resources return them inside a {@code Response}, which Quarkus cannot see through, and mappers build them by
 * hand. The generator puts the annotation on each model (pom.xml, {@code additionalModelTypeAnnotations}).
 */
class NativeReflectionTest {

    private static final Path GENERATED = Path.of("target", "generated-sources", "openapi", "src", "gen", "java");

    @Test
    void everyGeneratedModelIsRegisteredForReflection() throws IOException {
        List<String> generated;
        try (Stream<Path> files = Files.walk(GENERATED)) {
            generated = files.filter(file -> file.getParent().endsWith(Path.of("api", "model")))
                    .map(file -> GENERATED.relativize(file).toString().replaceAll("\\.java$", "").replace('/', '.'))
                    .sorted().toList();
        }
        List<String> unregistered = generated.stream().filter(name -> !registered(name)).toList();

        assertFalse(generated.isEmpty(), "the models are generated into " + GENERATED);
        assertEquals(List.of(), unregistered);
    }

    private static boolean registered(String className) {
        try {
            return Class.forName(className).isAnnotationPresent(RegisterForReflection.class);
        } catch (ClassNotFoundException e) {
            throw new AssertionError(className + " is generated but not compiled", e);
        }
    }
}
