package dev.fulcrum.inference.engine.upstream;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

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

    /**
     * The outline answers only what Jackson's parser answers: documents made by mutating usual ones (bytes replaced,
     * inserted, removed, cut off, escapes and multi-byte characters put in names and strings) are read by both; where
     * the outline gives an answer, it is the parser's, and the parser refuses none of those documents.
     */
    @Test
    void theOutlineAnswersWhatJacksonsParserAnswers() throws IOException {
        List<String> seeds = List.of(
                "{\"id\":\"c-1\",\"object\":\"chat.completion\",\"created\":1700000000,\"model\":\"echo\","
                        + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
                        + "\"content\":\"Hello ü 🚀 \\\"q\\\" \\u00e9\\n\"},\"finish_reason\":\"stop\","
                        + "\"logprobs\":null}],"
                        + "\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19,"
                        + "\"details\":{\"a\":[1,-2.5e3,true,false,null,{}]}}}",
                "{\"model\": \"bench-echo\", \"messages\": [{\"role\": \"user\", \"content\": \"Say hello.\"}],"
                        + " \"max_tokens\": 16}",
                " {\n\t\"usage\" : { \"completion_tokens\" : 0 , \"prompt_tokens\" : -0 } ,\r\n \"model\" : \"\" } ",
                "{\"model\":\"m\",\"usage\":{\"prompt_tokens\":123456789,\"completion_tokens\":1.0},\"x\":[[[[]]]]}");
        byte[] alphabet = "{}[]:,\"\\ \t\n0123456789-+.eEtrufalsnmodelusage_u\u00e9\ud83d\ude80\u0000\u001f"
                .getBytes(StandardCharsets.UTF_8);
        Random random = new Random(24);
        List<byte[]> documents = new ArrayList<>();
        for (String seed : seeds) {
            byte[] bytes = seed.getBytes(StandardCharsets.UTF_8);
            documents.add(bytes);
            for (int i = 0; i < 3000; i++) {
                byte[] mutated = bytes.clone();
                for (int edits = 1 + random.nextInt(3); edits > 0 && mutated.length > 0; edits--) {
                    int at = random.nextInt(mutated.length);
                    byte b = random.nextInt(8) == 0 ? (byte) random.nextInt(256)
                            : alphabet[random.nextInt(alphabet.length)];
                    switch (random.nextInt(4)) {
                        case 0 -> mutated[at] = b;
                        case 1 -> mutated = splice(mutated, at, 0, new byte[] { b });
                        case 2 -> mutated = splice(mutated, at, 1, new byte[0]);
                        default -> mutated = java.util.Arrays.copyOf(mutated, at);
                    }
                }
                documents.add(mutated);
            }
        }
        int outlined = 0;
        for (byte[] document : documents) {
            TopLevel fast = TopLevel.Outline.of(document);
            if (fast == null) {
                continue;
            }
            outlined++;
            String text = new String(document, StandardCharsets.UTF_8);
            TopLevel parsed = assertDoesNotThrow(() -> TopLevel.parsed(json.getFactory(), document), text);
            assertEquals(parsed, fast, text);
            assertEquals(fast, TopLevel.scan(json.getFactory(), document), text);
        }
        assertTrue(outlined > 1000, "the outline read only " + outlined + " documents");
        for (String seed : seeds) {
            assertNotNull(TopLevel.Outline.of(seed.getBytes(StandardCharsets.UTF_8)), seed);
        }
    }

    @Test
    void theOutlineLeavesWhatItIsNotSureOfToTheParser() throws IOException {
        for (String unsure : List.of("{\"mod\\u0065l\":\"a\"}",
                "{\"model\":\"a\",\"usage\":{\"prompt_tokens\":2147483647}}", "\ufeff{\"model\":\"a\"}",
                "{\"model\":\"a\",\"usage\":{\"prompt_tokens\":{\"a\":1}}}", "{\"model\":\"a\",\"x\":01}",
                "{\"model\":\"a\",\"x\":\"\u0001\"}", "{\"model\":\"a\",\"x\":tru}")) {
            byte[] bytes = unsure.getBytes(StandardCharsets.UTF_8);
            assertNull(TopLevel.Outline.of(bytes), unsure);
        }
        byte[] trailingByte = "{\"model\":\"a\"}\u0000".getBytes(StandardCharsets.UTF_8);
        trailingByte[trailingByte.length - 1] = (byte) 0xff;
        assertNull(TopLevel.Outline.of(trailingByte));
        assertThrows(IOException.class, () -> TopLevel.scan(json.getFactory(), trailingByte));
        TopLevel escapedName = scan("{\"mod\\u0065l\":\"a\",\"usage\":{\"prompt_tokens\":2147483647}}");
        assertEquals(2147483647, escapedName.promptTokens());
        assertThrows(IOException.class, () -> scan("{\"model\":\"a\",\"x\":01}"));
        TopLevel emptyName = TopLevel.Outline.of("{\"\":1,\"model\":\"a\"}".getBytes(StandardCharsets.UTF_8));
        assertEquals(new TopLevel(14, 17, -1, 0), emptyName);
    }

    private static byte[] splice(byte[] bytes, int at, int remove, byte[] insert) {
        byte[] out = new byte[bytes.length - remove + insert.length];
        System.arraycopy(bytes, 0, out, 0, at);
        System.arraycopy(insert, 0, out, at, insert.length);
        System.arraycopy(bytes, at + remove, out, at + insert.length, bytes.length - at - remove);
        return out;
    }
}
