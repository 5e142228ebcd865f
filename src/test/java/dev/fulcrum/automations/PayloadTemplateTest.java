package dev.fulcrum.automations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.json.JsonInput;

class PayloadTemplateTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static JsonNode render(String template, Map<String, String> values) throws Exception {
        return JSON.readTree(PayloadTemplate.parse(template).render(values));
    }

    @Test
    void findsBothReferenceFormsInStringsOnly() {
        PayloadTemplate template = PayloadTemplate.parse("""
                {"event_type": "${event_type}", "auth": "token $TOKEN!", "n": 3,
                 "nested": {"list": ["${artifact_metadata.my key}", "$ not a var", "$lower", "${ACCESS_TOKEN}"]},
                 "${not_a_key_variable}": true}""");
        assertEquals(List.of("event_type", "TOKEN", "artifact_metadata.my key", "ACCESS_TOKEN"),
                List.copyOf(template.variables()));
    }

    @Test
    void aWholeStringVariableStaysAString() throws Exception {
        JsonNode out = render("{\"n\": \"${count}\", \"flag\": \"${flag}\"}", Map.of("count", "42", "flag", "true"));
        assertTrue(out.get("n").isTextual());
        assertEquals("42", out.get("n").textValue());
        assertEquals("true", out.get("flag").textValue());
    }

    @Test
    void valuesCannotBreakOutOfTheirString() throws Exception {
        String[] attacks = { "\", \"injected\": \"yes", "\\", "\\\"}, \"x\": {\"", "}}]]", "line\nbreak\r\n\t",
                "\u0000\u001f", "unicode \u2028\u2029 \uD83D\uDE00 é", "${TOKEN}", "$TOKEN", "</script>" };
        for (String attack : attacks) {
            JsonNode out = render("{\"tag\": \"v-${tag}-end\", \"meta\": [\"$SECRET\"]}",
                    Map.of("tag", attack, "SECRET", attack, "TOKEN", "must-not-appear"));
            assertEquals(2, out.size(), "no field was added for " + attack);
            assertEquals("v-" + attack + "-end", out.get("tag").textValue());
            assertEquals(attack, out.get("meta").get(0).textValue());
            assertEquals(1, out.get("meta").size());
        }
    }

    @Test
    void keysAndNonStringValuesAreLiteral() throws Exception {
        JsonNode out = render("{\"${k}\": 1.5, \"b\": null, \"c\": [true, {\"d\": \"$X\"}]}", Map.of("X", "x"));
        assertEquals(1.5, out.get("${k}").doubleValue());
        assertTrue(out.get("b").isNull());
        assertEquals("x", out.get("c").get(1).get("d").textValue());
    }

    @Test
    void aSecretNameRunsAsFarAsItCan() throws Exception {
        JsonNode out = render("{\"a\": \"$TOKEN_2-x ${TOKEN}y\"}", Map.of("TOKEN_2", "one", "TOKEN", "two"));
        assertEquals("one-x twoy", out.get("a").textValue());
    }

    @Test
    void missingValuesAreListed() {
        PayloadTemplate template = PayloadTemplate.parse("{\"a\": \"$B ${c} ${d}\"}");
        ApiException e = assertThrows(ApiException.class, () -> template.render(Map.of("c", "1")));
        assertEquals(ApiException.Kind.INVALID, e.kind());
        assertTrue(e.getMessage().contains("B, d"), e.getMessage());
        ApiException unknown = assertThrows(ApiException.class,
                () -> template.requireAvailable(Set.of("B"), "body", "payload"));
        assertTrue(unknown.getMessage().endsWith("c, d"), unknown.getMessage());
        assertEquals("payload", unknown.violations().get(0).field());
    }

    @Test
    void textThatIsNotJsonIsRefused() {
        for (String text : new String[] { "", "   ", "{\"a\": ", "{\"a\": \"${x}\"} trailing", "${x}", "{a: 1}" }) {
            ApiException e = assertThrows(ApiException.class, () -> PayloadTemplate.parse(text), text);
            assertEquals(ApiException.Kind.INVALID, e.kind());
        }
    }

    @Test
    void anyJsonValueIsAPayload() throws Exception {
        assertEquals("\"hi there\"", PayloadTemplate.parse("\"hi $WHO\"").render(Map.of("WHO", "there")));
        assertEquals("[1,\"x\"]", PayloadTemplate.parse("[1, \"${v}\"]").render(Map.of("v", "x")));
        assertEquals(JSON.readTree("{\"a\":{\"b\":[]}}"), render("{\"a\": {\"b\": []}}", Map.of()));
    }

    @Test
    void aPayloadNestedTooDeeplyIsRefusedNotACrash() {
        for (int depth : new int[] { 3_000, JsonInput.MAX_NESTING_DEPTH + 1 }) {
            String deep = "[".repeat(depth) + "]".repeat(depth);
            ApiException e = assertThrows(ApiException.class, () -> PayloadTemplate.parse(deep));
            assertEquals(ApiException.Kind.INVALID, e.kind());
            assertEquals("payload_json", e.violations().get(0).type());
            assertTrue(e.getMessage().contains("nesting depth"), e.getMessage());
        }
        String deepest = "[".repeat(JsonInput.MAX_NESTING_DEPTH) + "]".repeat(JsonInput.MAX_NESTING_DEPTH);
        assertEquals(deepest, PayloadTemplate.parse(deepest).render(Map.of()));
    }

    @Test
    void numbersKeepTheirExactText() {
        String numbers = "[1.50,1234567890.123456789012345678901234567890,12345678901234567890123456789012345678901,"
                + "1e5,-0,2E-400,0.1]";
        assertEquals(numbers, PayloadTemplate.parse(numbers).render(Map.of()));
        assertEquals("{\"n\":100.0,\"s\":\"x\"}",
                PayloadTemplate.parse("{\"n\": 100.0, \"s\": \"${v}\"}").render(Map.of("v", "x")));
    }

    @Test
    void aNumberBeyondTheRangeOfADoubleIsRefused() {
        for (String text : new String[] { "{\"a\": 1e400}", "[-1E+309]", "{\"a\": {\"b\": [1.8e308]}}" }) {
            ApiException e = assertThrows(ApiException.class, () -> PayloadTemplate.parse(text), text);
            assertEquals(ApiException.Kind.INVALID, e.kind());
            assertEquals("finite_number", e.violations().get(0).type());
            assertEquals("payload", e.violations().get(0).field());
        }
    }
}
