package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;

/**
 * The served /q/openapi merges every document of openapi/ into one; a component name that two documents define
 * differently would silently lose one definition there.
 */
class ContractDocumentsTest {

    @Test
    void componentsSharedBetweenDocumentsAreIdentical() throws IOException {
        YAMLMapper yaml = new YAMLMapper();
        Map<String, JsonNode> seen = new HashMap<>();
        Map<String, Path> where = new HashMap<>();
        List<String> clashes = new ArrayList<>();
        int documents = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(Path.of("openapi"), "*.yaml")) {
            for (Path file : files) {
                documents++;
                JsonNode components = yaml.readTree(file.toFile()).path("components");
                for (Iterator<Map.Entry<String, JsonNode>> kinds = components.fields(); kinds.hasNext();) {
                    Map.Entry<String, JsonNode> kind = kinds.next();
                    for (Iterator<Map.Entry<String, JsonNode>> it = kind.getValue().fields(); it.hasNext();) {
                        Map.Entry<String, JsonNode> component = it.next();
                        String key = kind.getKey() + "/" + component.getKey();
                        JsonNode earlier = seen.putIfAbsent(key, component.getValue());
                        if (earlier == null) {
                            where.put(key, file);
                        } else if (!earlier.equals(component.getValue())) {
                            clashes.add(key + " differs between " + where.get(key) + " and " + file);
                        }
                    }
                }
            }
        }
        assertTrue(documents >= 3, "the contract documents are read");
        assertEquals(List.of(), clashes);
    }
}
