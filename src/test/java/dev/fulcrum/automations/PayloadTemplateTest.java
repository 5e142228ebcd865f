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

import dev.fulcrum.platform.ApiException;

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
        assertEquals(422, e.status());
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
            assertEquals(422, e.status());
        }
    }

    @Test
    void anyJsonValueIsAPayload() throws Exception {
        assertEquals("\"hi there\"", PayloadTemplate.parse("\"hi $WHO\"").render(Map.of("WHO", "there")));
        assertEquals("[1,\"x\"]", PayloadTemplate.parse("[1, \"${v}\"]").render(Map.of("v", "x")));
        assertEquals(JSON.readTree("{\"a\":{\"b\":[]}}"), render("{\"a\": {\"b\": []}}", Map.of()));
    }
}
