package dev.fulcrum.platform.json;

import java.io.IOException;

import jakarta.inject.Singleton;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.deser.std.NumberDeserializers;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.type.LogicalType;

import io.quarkus.jackson.ObjectMapperCustomizer;

/**
 * How every JSON text Fulcrum reads is bounded and typed, for the application's {@link ObjectMapper} (and with it the
 * request bodies, Vert.x's JSON codec and the inference gateway's scanner) and for every mapper the code makes itself
 * ({@link #configure}):
 * <ul>
 * <li>at most {@value #MAX_NESTING_DEPTH} nested arrays and objects, strings of at most {@value #MAX_STRING_LENGTH}
 * characters, numbers of at most {@value #MAX_NUMBER_LENGTH} characters, field names of at most
 * {@value #MAX_NAME_LENGTH} characters (the whole body is bounded by
 * {@link dev.fulcrum.platform.http.RequestBodyLimits}); over a bound the request is a validation error of its
 * interface;</li>
 * <li>no scalar coercion: a number or a boolean is not a string, and a string is not a number or a boolean (an integer
 * still is a valid floating point number), and an integer field takes no fraction ({@code 1.5} is not read as 1).</li>
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
        mapper.registerModule(WHOLE_NUMBERS);
        return mapper;
    }

    /**
     * An integer field takes a number without a fractional part ({@code 2}, and {@code 2.0} as Python writes a float),
     * never a fraction: Jackson would cut {@code 1.5} to 1 without a word (pydantic refuses it too).
     */
    private static final SimpleModule WHOLE_NUMBERS = new SimpleModule("whole-numbers")
            .addDeserializer(Integer.class, new Whole<>(Integer.class))
            .addDeserializer(int.class, new Whole<>(int.class)).addDeserializer(Long.class, new Whole<>(Long.class))
            .addDeserializer(long.class, new Whole<>(long.class));

    private static void refuseFraction(JsonParser p, Class<?> target) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NUMBER_FLOAT) {
            double value = p.getDoubleValue();
            if (value != Math.rint(value) || Double.isInfinite(value)) {
                throw InvalidFormatException.from(p,
                        "Input should be a valid integer, got a number with a fractional part", p.getText(), target);
            }
        }
    }

    /** Jackson's own deserializer of the integer type, after a fraction is refused. */
    private static final class Whole<T> extends StdDeserializer<T> {

        private final JsonDeserializer<T> numbers;

        @SuppressWarnings("unchecked")
        Whole(Class<T> type) {
            super(type);
            numbers = (JsonDeserializer<T>) NumberDeserializers.find(type, type.getName());
        }

        @Override
        public T deserialize(JsonParser p, DeserializationContext context) throws IOException {
            refuseFraction(p, handledType());
            return numbers.deserialize(p, context);
        }

        @Override
        public T getNullValue(DeserializationContext context) throws JsonMappingException {
            return numbers.getNullValue(context);
        }

        @Override
        public Object getEmptyValue(DeserializationContext context) throws JsonMappingException {
            return numbers.getEmptyValue(context);
        }

        @Override
        public LogicalType logicalType() {
            return LogicalType.Integer;
        }
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
