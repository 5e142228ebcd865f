package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import dev.fulcrum.platform.json.JsonSchemas;

class JsonSchemasTest {

    private static final String WEATHER = """
            {"type": "object", "properties": {"city": {"type": "string", "minLength": 2},
             "unit": {"enum": ["c", "f"]}, "days": {"type": "integer", "minimum": 1, "maximum": 7}},
             "required": ["city"], "additionalProperties": false}""";

    @Test
    void argumentsMatchTheirSchemaByEveryKeyword() {
        assertTrue(JsonSchemas.matches("{\"city\": \"Paris\", \"unit\": \"c\", \"days\": 3}", WEATHER));
        assertFalse(JsonSchemas.matches("{\"unit\": \"c\"}", WEATHER), "required");
        assertFalse(JsonSchemas.matches("{\"city\": \"P\"}", WEATHER), "minLength");
        assertFalse(JsonSchemas.matches("{\"city\": \"Paris\", \"unit\": \"k\"}", WEATHER), "enum");
        assertFalse(JsonSchemas.matches("{\"city\": \"Paris\", \"days\": 9}", WEATHER), "maximum");
        assertFalse(JsonSchemas.matches("{\"city\": \"Paris\", \"days\": 1.5}", WEATHER), "integer");
        assertFalse(JsonSchemas.matches("{\"city\": \"Paris\", \"wind\": true}", WEATHER), "additionalProperties");
        assertTrue(JsonSchemas.matches("{\"a\": 1}", "true"));
        assertFalse(JsonSchemas.matches("{\"a\": 1}", "false"));
    }

    @Test
    void aSchemaThatCannotBeReadMatchesNothing() {
        assertFalse(JsonSchemas.matches("{}", "{\"type\": "));
        assertFalse(JsonSchemas.matches("{}", "{\"type\": \"no-such-type\"}"));
    }

    @Test
    void nothingIsFetched() {
        assertFalse(JsonSchemas.matches("{}", "{\"$ref\": \"http://127.0.0.1:9/schema.json\"}"));
        assertFalse(JsonSchemas.matches("{}", "{\"$ref\": \"classpath:application.properties\"}"));
        assertTrue(JsonSchemas.matches("{\"a\": \"x\"}", """
                {"$defs": {"s": {"type": "string"}}, "properties": {"a": {"$ref": "#/$defs/s"}}}"""));
    }

    @Test
    void patternsRunInLinearTimeAndRefusedOnesMatchNothing() {
        String catastrophic = "{\"type\": \"string\", \"pattern\": \"^(a+)+$\"}";
        assertTimeoutPreemptively(Duration.ofSeconds(5),
                () -> assertFalse(JsonSchemas.matches("\"" + "a".repeat(40) + "b\"", catastrophic)));
        assertTrue(JsonSchemas.matches("\"aaa\"", catastrophic));
        assertFalse(JsonSchemas.matches("\"x\"", "{\"pattern\": \"((a{1000}){1000}){1000}\"}"));
    }

    @Test
    void deeplyNestedSchemasEndWithoutBringingTheThreadDown() {
        String schema = "{\"items\": ".repeat(900) + "{\"type\": \"string\"}" + "}".repeat(900);
        String value = "[".repeat(900) + "\"x\"" + "]".repeat(900);
        assertTimeoutPreemptively(Duration.ofSeconds(20), () -> JsonSchemas.matches(value, schema));
    }
}
