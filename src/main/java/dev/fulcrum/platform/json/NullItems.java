package dev.fulcrum.platform.json;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.Module;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.type.ArrayType;
import com.fasterxml.jackson.databind.type.CollectionType;

/**
 * The one rule for null items: no list or array of a request body ({@link RequestJson}) may hold {@code null}, at any
 * depth, unless its items are untyped JSON values ({@code Object}: a call's inputs, a tool's schema), of which
 * {@code null} is one. A null item is refused at its index as a value of the item's type (a 422 of the interface,
 * {@code "Input should be a valid string"}, {@code string_type}, or {@code dict_type} for objects), as pydantic refuses
 * {@code None} in a {@code list[str]}.
 */
final class NullItems {

    private NullItems() {
    }

    /** The module of the request body mapper. */
    static Module module() {
        SimpleModule module = new SimpleModule("fulcrum-null-items");
        module.setDeserializerModifier(new BeanDeserializerModifier() {
            @Override
            public JsonDeserializer<?> modifyCollectionDeserializer(DeserializationConfig config, CollectionType type,
                    BeanDescription description, JsonDeserializer<?> deserializer) {
                return typed(type.getContentType()) ? new NoNullItems(deserializer, type.getContentType())
                        : deserializer;
            }

            @Override
            public JsonDeserializer<?> modifyArrayDeserializer(DeserializationConfig config, ArrayType type,
                    BeanDescription description, JsonDeserializer<?> deserializer) {
                return typed(type.getContentType()) && !type.getContentType().isPrimitive()
                        ? new NoNullItems(deserializer, type.getContentType())
                        : deserializer;
            }

        });
        return module;
    }

    /**
     * Whether the items of a list have a type of their own: untyped items ({@code Object}) are JSON values, of which
     * {@code null} is one (trees read it as a null node); a list of anything else may not hold a null item.
     */
    private static boolean typed(JavaType item) {
        return !item.hasRawClass(Object.class);
    }

    /** A list or array of a request body: a null item is refused at its index, as a value of the item's type. */
    private static final class NoNullItems extends DelegatingDeserializer {
        private final JavaType item;

        NoNullItems(JsonDeserializer<?> delegate, JavaType item) {
            super(delegate);
            this.item = item;
        }

        @Override
        protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> delegate) {
            return new NoNullItems(delegate, item);
        }

        @Override
        public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            Object value = super.deserialize(p, ctxt);
            int index = 0;
            for (Object each : value instanceof Object[] array ? Arrays.asList(array)
                    : value instanceof Iterable<?> items ? items : List.of()) {
                if (each == null) {
                    MismatchedInputException refused = MismatchedInputException.from(p, item.getRawClass(),
                            "A list may not hold null items");
                    refused.prependPath(new JsonMappingException.Reference(null, index));
                    throw refused;
                }
                index++;
            }
            return value;
        }
    }

}
