package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Every model generated from openapi/*.yaml is registered for reflection, so that a native executable reads and writes
 * it: a schema added to a contract without its model in {@link NativeReflection} fails here.
 */
class NativeReflectionTest {

    private static final Path GENERATED = Path.of("target", "generated-sources", "openapi", "src", "gen", "java");

    @Test
    void everyGeneratedModelIsRegisteredForReflection() throws IOException {
        Set<String> generated;
        try (Stream<Path> files = Files.walk(GENERATED)) {
            generated = files.filter(file -> file.getParent().endsWith(Path.of("api", "model")))
                    .map(file -> GENERATED.relativize(file).toString().replaceAll("\\.java$", "").replace('/', '.'))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
        Set<String> registered = Arrays
                .stream(NativeReflection.class.getAnnotation(RegisterForReflection.class).targets()).map(Class::getName)
                .filter(name -> name.contains(".api.model.")).collect(Collectors.toCollection(TreeSet::new));

        assertFalse(generated.isEmpty(), "the models are generated into " + GENERATED);
        assertEquals(generated, registered);
    }
}
