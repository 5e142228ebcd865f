package dev.fulcrum.inference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The gateway's byte-level model replacement: only the top-level model string changes, every other byte stays, and
 * anything unusual is left to the tree (null).
 */
class TopLevelTest {

    private final ObjectMapper json = new ObjectMapper();

    private TopLevel scan(String text) throws IOException {
        return TopLevel.scan(json.getFactory(), text.getBytes(StandardCharsets.UTF_8));
    }

    private String replaced(String text, String model) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        TopLevel scanned = TopLevel.scan(json.getFactory(), bytes);
        assertNotNull(scanned, text);
        return scanned.withModel(bytes, model).toString(StandardCharsets.UTF_8);
    }

    @Test
    void onlyTheTopLevelModelIsReplacedAndEveryOtherByteStays() throws IOException {
        String answer = "{\"id\":\"c-1\",\"choices\":[{\"message\":{\"content\":\"ünïcödé 🚀 \\\"model\\\"\","
                + "\"model\":\"nested\"}}],  \"model\" :  \"upstream/é-7B\" , \"usage\":{\"prompt_tokens\":12,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":3},\"completion_tokens\":7,\"total_tokens\":19}}\n";
        assertEquals(answer.replace("\"upstream/é-7B\"", "\"team/ours\""), replaced(answer, "team/ours"));
    }

    @Test
    void aModelIdIsWrittenAsAJsonString() throws IOException {
        String out = replaced("{\"model\":\"m\"}", "we\"ird\\ ü\n");
        JsonNode tree = json.readTree(out);
        assertEquals("we\"ird\\ ü\n", tree.get("model").asText());
    }

    @Test
    void usageCountsAreReadWhenPromptTokensIsAnInteger() throws IOException {
        TopLevel full = scan("{\"model\":\"m\",\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":9}}");
        assertTrue(full.hasUsage());
        assertEquals(5, full.promptTokens());
        assertEquals(9, full.completionTokens());
        assertEquals(0, scan("{\"model\":\"m\",\"usage\":{\"prompt_tokens\":5}}").completionTokens());
        assertFalse(scan("{\"model\":\"m\"}").hasUsage());
        assertFalse(scan("{\"model\":\"m\",\"usage\":null}").hasUsage());
        assertFalse(scan("{\"model\":\"m\",\"usage\":{\"completion_tokens\":9}}").hasUsage());
        assertFalse(scan("{\"model\":\"m\",\"usage\":{\"prompt_tokens\":\"5\"}}").hasUsage());
        assertFalse(scan("{\"model\":\"m\",\"usage\":{\"prompt_tokens\":99999999999}}").hasUsage());
    }

    @Test
    void unusualDocumentsAreLeftToTheTree() throws IOException {
        assertNull(scan("{\"id\":\"no model\"}"));
        assertNull(scan("{\"model\":\"a\",\"model\":\"b\"}"));
        assertNull(scan("{\"model\":7}"));
        assertNull(scan("{\"model\":\"a\",\"usage\":{\"prompt_tokens\":1},\"usage\":{\"prompt_tokens\":2}}"));
        assertNull(scan("[{\"model\":\"a\"}]"));
        assertNull(scan("{\"model\":\"a\"} {\"model\":\"b\"}"));
    }

    @Test
    void malformedJsonIsAnError() {
        assertThrows(IOException.class, () -> scan("{\"model\":\"a\","));
        assertThrows(IOException.class, () -> scan("{\"model\":\"a\",\"x\":[1,}"));
    }
}
