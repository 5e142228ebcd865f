package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.datasets.Digests;
import dev.fulcrum.platform.json.CanonicalJson;

/** Vectors computed with CPython's json.dumps(row, sort_keys=True) and Weave's digest functions. */
class CanonicalJsonTest {

    private final ObjectMapper mapper = new ObjectMapper();

    private String canonical(String json) throws Exception {
        return CanonicalJson.write(mapper.readTree(json));
    }

    @Test
    void theSpecificationsCheckVector() throws Exception {
        String text = canonical("{\"question\":\"What is 2+2?\",\"answer\":\"4\"}");
        assertEquals("{\"answer\": \"4\", \"question\": \"What is 2+2?\"}", text);
        assertEquals("xITJu7rKjJZV9qHNYp3dVJMwTDrphJ2NplHe3vKdANQ", Digests.ofText(text));
    }

    @Test
    void nestedValuesUnicodeEscapesAndBigIntegers() throws Exception {
        String text = canonical("{\"b\":[1,2.5,1e-7,1e16,123456789012345678901234567890],"
                + "\"a\":{\"z\":null,\"y\":true,\"\u00e9\":\"\u00fc\uD83D\uDE00\u007f\\n\\\"\\\\\"}}");
        assertEquals("{\"a\": {\"y\": true, \"z\": null, \"\\u00e9\": \"\\u00fc\\ud83d\\ude00\\u007f\\n\\\"\\\\\"}, "
                + "\"b\": [1, 2.5, 1e-07, 1e+16, 123456789012345678901234567890]}", text);
        assertEquals("HjXrXXW5NhnZBJLYuBt3zQ0iGl8P8J5jRs0y0IxwwC8", Digests.ofText(text));
    }

    @Test
    void floatsInPythonsReprForm() throws Exception {
        String text = canonical("{\"f\":0.1,\"g\":-0.0,\"h\":100.0,\"i\":1e22,\"j\":1.5e-5,\"k\":123456789.125}");
        assertEquals("{\"f\": 0.1, \"g\": -0.0, \"h\": 100.0, \"i\": 1e+22, \"j\": 1.5e-05, \"k\": 123456789.125}",
                text);
        assertEquals("oTkDBfZXX6dCUxhCJmq3SJQfeSYhSQfppACxKxMmeLY", Digests.ofText(text));
    }

    @Test
    void pythonFloatBoundaries() {
        assertEquals("0.0001", CanonicalJson.pythonFloat(0.0001));
        assertEquals("1e-05", CanonicalJson.pythonFloat(0.00001));
        assertEquals("1000000000000000.0", CanonicalJson.pythonFloat(1e15));
        assertEquals("1e+16", CanonicalJson.pythonFloat(1e16));
        assertEquals("1.7976931348623157e+308", CanonicalJson.pythonFloat(Double.MAX_VALUE));
        assertEquals("5e-324", CanonicalJson.pythonFloat(Double.MIN_VALUE));
        assertEquals("-2.5", CanonicalJson.pythonFloat(-2.5));
    }

    @Test
    void keysSortByCodePointAsPythonDoes() throws Exception {
        // U+FF01 sorts before U+1F600 by code point, after it by UTF-16 unit
        assertEquals("{\"\\uff01\": 1, \"\\ud83d\\ude00\": 2}", canonical("{\"\uD83D\uDE00\":2,\"\uFF01\":1}"));
    }

    @Test
    void tableDigestHashesTheRowDigestsInOrder() {
        assertEquals("9e98a02bda047bf7c38c7e5ceae4bf69878fd57c914432b3be3acd64071c85af",
                Digests.ofTable(List.of("xITJu7rKjJZV9qHNYp3dVJMwTDrphJ2NplHe3vKdANQ",
                        "HjXrXXW5NhnZBJLYuBt3zQ0iGl8P8J5jRs0y0IxwwC8", "oTkDBfZXX6dCUxhCJmq3SJQfeSYhSQfppACxKxMmeLY")));
    }
}
