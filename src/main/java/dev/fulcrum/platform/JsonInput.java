package dev.fulcrum.platform;

import jakarta.inject.Singleton;

import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.type.LogicalType;

import io.quarkus.jackson.ObjectMapperCustomizer;

/**
 * How every JSON text Fulcrum reads is bounded and typed, for the application's {@link ObjectMapper} (and with it the
 * request bodies, Vert.x's JSON codec and the inference gateway's scanner) and for every mapper the code makes itself
 * ({@link #configure}):
 * <ul>
 * <li>at most {@value #MAX_NESTING_DEPTH} nested arrays and objects, strings of at most {@value #MAX_STRING_LENGTH}
 * characters, numbers of at most {@value #MAX_NUMBER_LENGTH} characters, field names of at most
 * {@value #MAX_NAME_LENGTH} characters (the whole body is bounded by {@link RequestBodyLimits}); over a bound the
 * request is a validation error of its interface;</li>
 * <li>no scalar coercion: a number or a boolean is not a string, and a string is not a number or a boolean (an integer
 * still is a valid floating point number).</li>
 * </ul>
 */
@Singleton
public class JsonInput implements ObjectMapperCustomizer {

    /** Arrays and objects inside each other; Jackson's own default (1,000) lets a parser recurse deeper than needed. */
    public static final int MAX_NESTING_DEPTH = 200;
    /** Characters of one string value (Jackson's default). */
    public static final int MAX_STRING_LENGTH = 20_000_000;
    /** Characters of one number (Jackson's default). */
    public static final int MAX_NUMBER_LENGTH = 1_000;
    /** Characters of one field name (Jackson's default). */
    public static final int MAX_NAME_LENGTH = 50_000;

    public static final StreamReadConstraints CONSTRAINTS = StreamReadConstraints.builder()
            .maxNestingDepth(MAX_NESTING_DEPTH).maxStringLength(MAX_STRING_LENGTH).maxNumberLength(MAX_NUMBER_LENGTH)
            .maxNameLength(MAX_NAME_LENGTH).build();

    @Override
    public void customize(ObjectMapper mapper) {
        configure(mapper);
    }

    /** Applies the constraints and the coercion rules to {@code mapper}; returns it. */
    public static ObjectMapper configure(ObjectMapper mapper) {
        mapper.getFactory().setStreamReadConstraints(CONSTRAINTS);
        mapper.coercionConfigFor(LogicalType.Textual).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail);
        for (LogicalType scalar : new LogicalType[] { LogicalType.Integer, LogicalType.Float, LogicalType.Boolean }) {
            mapper.coercionConfigFor(scalar).setCoercion(CoercionInputShape.String, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.EmptyString, CoercionAction.Fail);
        }
        mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
        return mapper;
    }

    /** JSON text cannot hold NaN or infinities; a number too large for a double would be stored as one. */
    public static boolean isFinite(JsonNode value) {
        if (value.isFloatingPointNumber() && !Double.isFinite(value.doubleValue())) {
            return false;
        }
        for (JsonNode child : value) {
            if (!isFinite(child)) {
                return false;
            }
        }
        return true;
    }
}
