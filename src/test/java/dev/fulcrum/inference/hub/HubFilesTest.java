package dev.fulcrum.inference.hub;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;

/** Which files a name pulls (llama.cpp's choice), names as written, and a Hub that cannot be reached. */
class HubFilesTest {

    private static HubFile file(String path) {
        return new HubFile(path, 10, "0".repeat(64));
    }

    private static List<String> choose(String name, String... paths) {
        return HubFiles.choose(Arrays.stream(paths).map(HubFilesTest::file).toList(), HubName.parse(name), "main")
                .stream().map(HubFile::path).toList();
    }

    @Test
    void theTagElseQ4KMElseQ8ElseTheFirstNeverAProjector() {
        String[] repo = { "README.md", "mmproj-M-Q4_K_M.gguf", "M-Q2_K.gguf", "M-Q4_K_M.gguf", "M-Q4_K_S.gguf",
                "M-Q8_0.gguf", "imatrix.gguf" };
        assertEquals(List.of("M-Q4_K_M.gguf"), choose("hf.co/o/r", repo));
        assertEquals(List.of("M-Q4_K_S.gguf"), choose("hf.co/o/r:q4_k_s", repo));
        assertEquals(List.of("M-Q8_0.gguf"), choose("hf.co/o/r", "mmproj-Q4_K_M.gguf", "M-Q8_0.gguf", "M-F16.gguf"));
        assertEquals(List.of("M-F16.gguf"), choose("hf.co/o/r", "M-F16.gguf", "M-Q5_0.gguf"));
        // an exact quantisation token before a name that merely holds the tag
        assertEquals(List.of("M-Q4_K.gguf"), choose("hf.co/o/r:Q4_K", "M-Q4_K_M.gguf", "M-Q4_K.gguf"));
        HubException missing = assertThrows(HubException.class, () -> choose("hf.co/o/r:Q3_K_L", repo));
        assertEquals(HubException.Reason.NOT_FOUND, missing.reason());
        assertTrue(missing.getMessage().endsWith("its tags: Q2_K, Q4_K_M, Q4_K_S, Q8_0"), missing.getMessage());
        assertEquals(HubException.Reason.NOT_FOUND,
                assertThrows(HubException.class, () -> choose("hf.co/o/r", "README.md", "mmproj-f16.gguf")).reason());
    }

    @Test
    void aSplitGgufIsPulledWhole() {
        assertEquals(
                List.of("Q8_0/M-Q8_0-00001-of-00003.gguf", "Q8_0/M-Q8_0-00002-of-00003.gguf",
                        "Q8_0/M-Q8_0-00003-of-00003.gguf"),
                choose("hf.co/o/r:Q8_0", "Q8_0/M-Q8_0-00002-of-00003.gguf", "Q8_0/M-Q8_0-00003-of-00003.gguf",
                        "Q8_0/M-Q8_0-00001-of-00003.gguf", "M-Q4_K_M.gguf"));
        assertEquals(HubException.Reason.NOT_FOUND,
                assertThrows(HubException.class, () -> choose("hf.co/o/r:Q8_0", "M-Q8_0-00001-of-00002.gguf"))
                        .reason());
    }

    @Test
    void namesAreWrittenAsOllamaAndLlamaCppWriteThem() {
        assertEquals(new HubName("bartowski/SmolLM2-135M-Instruct-GGUF", "Q4_K_M"),
                HubName.parse("hf.co/bartowski/SmolLM2-135M-Instruct-GGUF:Q4_K_M"));
        assertEquals(new HubName("o/r", null), HubName.parse("huggingface.co/o/r"));
        assertNull(HubName.parse("o/r"));
        assertNull(HubName.parse("hf.co/o"));
        assertNull(HubName.parse("hf.co/o/r/x"));
        assertNull(HubName.parse("hf.co/o/../r"));
        assertNull(HubName.parse("hf.co/o/r:"));
    }

    @Test
    void aHubThatCannotBeReachedIsNamed() {
        HubHttp http = new HubHttp("http://127.0.0.1:9", null, Duration.ofSeconds(2), Duration.ofSeconds(2), 1,
                Duration.ofMillis(10), Duration.ofMillis(10));
        HubClient client = new HubClient(http, new ObjectMapper());
        try {
            HubException e = assertThrows(HubException.class, () -> client.plan(HubName.parse("hf.co/o/r"), "main"));
            assertEquals(HubException.Reason.UNREACHABLE, e.reason());
            assertTrue(e.getMessage().startsWith("The Hub cannot be reached at http://127.0.0.1:9 "), e.getMessage());
        } finally {
            http.close();
        }
    }
}
