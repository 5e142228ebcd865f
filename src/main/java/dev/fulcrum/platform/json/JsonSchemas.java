package dev.fulcrum.platform.json;

import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.SpecificationVersion;
import com.networknt.schema.regex.RegularExpression;

/**
 * JSON Schema where a schema is checked at run time (the contracts' own validation is the build's and the tests'):
 * <a href="https://github.com/networknt/json-schema-validator">networknt's validator</a>, draft 2020-12 unless a schema
 * says otherwise. Schemas come from clients, so none is fetched ({@code $ref} outside the schema does not resolve and
 * the schema does not match), none is kept, and {@code pattern} runs through {@link RegularExpressions}' rule (RE2:
 * linear time, bounded size; a pattern it refuses matches nothing).
 */
public final class JsonSchemas {

    private static final RegularExpression NOTHING = text -> false;

    private static final SchemaRegistry REGISTRY = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12,
            builder -> builder.schemaCacheEnabled(false).schemaLoader(loader -> loader.block(iri -> true))
                    .schemaRegistryConfig(SchemaRegistryConfig.builder()
                            .regularExpressionFactory(JsonSchemas::regularExpression).build()));

    private JsonSchemas() {
    }

    /**
     * Whether the JSON {@code value} matches the JSON Schema {@code schema}; a schema that cannot be read matches
     * nothing.
     */
    public static boolean matches(String value, String schema) {
        try {
            Schema compiled = REGISTRY.getSchema(schema, InputFormat.JSON);
            return compiled.validate(value, InputFormat.JSON).isEmpty();
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static RegularExpression regularExpression(String regex) {
        if (RegularExpressions.problem(regex) != null) {
            return NOTHING;
        }
        var pattern = RegularExpressions.pattern(regex);
        return text -> pattern.matcher(text).find();
    }
}
