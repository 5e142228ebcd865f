package dev.fulcrum.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The layers of {@code inference} as {@code docs/architecture.md} draws them, read from the import lines: the shared
 * contracts import none of the parts, the catalog reaches engines only through its {@code Engine} interface, engines
 * never import the gateway, the gateway never imports an engine, and {@code training} and {@code tinker} know the
 * catalog, never an engine or the gateway (the Tinker API samples through {@code TokenSampler}, a contract).
 */
class InferenceLayersTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/fulcrum");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?dev\\.fulcrum\\.([\\w.]+)\\.[A-Z]\\w*",
            Pattern.MULTILINE);

    /** What the classes of {@code folder} (directly in it, or below it when {@code below}) import from Fulcrum. */
    private static List<String> imports(String folder, boolean below) throws IOException {
        Path root = SOURCES.resolve(folder);
        assertTrue(Files.isDirectory(root), root + " is a folder");
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = below ? Files.walk(root) : Files.list(root)) {
            for (Path source : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                Matcher imported = IMPORT.matcher(Files.readString(source));
                while (imported.find()) {
                    found.add(SOURCES.relativize(source) + " -> " + imported.group(1));
                }
            }
        }
        return found;
    }

    private static void assertNone(List<String> imports, String forbidden) {
        Pattern pattern = Pattern.compile(" -> (" + forbidden + ")(\\.|$)");
        assertEquals(List.of(), imports.stream().filter(line -> pattern.matcher(line).find()).toList());
    }

    @Test
    void theContractsImportNoneOfTheParts() throws IOException {
        assertNone(imports("inference", false), "inference\\.(gateway|catalog|engine)");
    }

    @Test
    void theCatalogKnowsNoEngineAndNoDoor() throws IOException {
        assertNone(imports("inference/catalog", true), "inference\\.(gateway|engine)");
    }

    @Test
    void enginesAndTheGatewayDoNotImportEachOther() throws IOException {
        assertNone(imports("inference/engine", true), "inference\\.gateway");
        assertNone(imports("inference/gateway", true), "inference\\.engine");
    }

    @Test
    void theTemplateInterpreterImportsNoPartAndIsEnteredThroughChatTemplateOnly() throws IOException {
        assertNone(imports("inference/engine/template", true), "inference");
        Pattern entry = Pattern.compile("^import dev\\.fulcrum\\.inference\\.engine\\.template\\.(\\w+);",
                Pattern.MULTILINE);
        List<String> entered = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path source : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                Matcher imported = entry.matcher(Files.readString(source));
                while (imported.find()) {
                    entered.add(imported.group(1));
                }
            }
        }
        assertFalse(entered.isEmpty(), "the GGUF engine renders its prompts through it");
        assertEquals(List.of("ChatTemplate"), entered.stream().distinct().toList());
    }

    @Test
    void trainingKnowsTheCatalogOnly() throws IOException {
        List<String> training = imports("training", true);
        assertNone(training, "inference\\.(gateway|engine)");
        assertTrue(training.stream().anyMatch(line -> line.endsWith("-> inference.catalog")), training::toString);
    }

    @Test
    void tinkerKnowsTheContractsAndTheCatalogOnly() throws IOException {
        List<String> tinker = imports("tinker", true);
        assertNone(tinker, "inference\\.(gateway|engine)");
        assertTrue(tinker.stream().anyMatch(line -> line.endsWith("-> inference.catalog")), tinker::toString);
    }
}
