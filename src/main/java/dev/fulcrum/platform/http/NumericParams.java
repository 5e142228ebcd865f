package dev.fulcrum.platform.http;

import java.lang.annotation.Annotation;
import java.lang.reflect.Type;
import java.util.List;
import java.util.Map;

import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.ext.ParamConverter;
import jakarta.ws.rs.ext.ParamConverterProvider;
import jakarta.ws.rs.ext.Provider;

import dev.fulcrum.platform.errors.ApiException;

/**
 * Converts integer path and query parameters so that a value that is not a number is a validation error naming the
 * parameter (JAX-RS would answer a bare 404).
 */
@Provider
public class NumericParams implements ParamConverterProvider {

    /** A parameter value that did not convert; passes through RESTEasy untouched as a WebApplicationException. */
    public static class InvalidParam extends WebApplicationException {
        final String value;

        InvalidParam(String value) {
            super(422);
            this.value = value;
        }

        /**
         * RESTEasy Reactive does not hand parameter annotations to converters, so the parameter is named by finding the
         * one that carries the bad value.
         */
        ApiException.Violation violation(MultivaluedMap<String, String> path, MultivaluedMap<String, String> query) {
            String where = "query";
            String parameter = carrying(query);
            if (parameter == null) {
                where = "path";
                parameter = carrying(path);
            }
            return ApiException.Violation.of("Input should be a valid integer, unable to parse string as an integer",
                    "int_parsing", where, parameter == null ? "value" : parameter);
        }

        private String carrying(MultivaluedMap<String, String> parameters) {
            for (Map.Entry<String, List<String>> entry : parameters.entrySet()) {
                if (entry.getValue().contains(value)) {
                    return entry.getKey();
                }
            }
            return null;
        }
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> ParamConverter<T> getConverter(Class<T> rawType, Type genericType, Annotation[] annotations) {
        if (rawType == Integer.class) {
            return (ParamConverter<T>) new Converter<>(Integer::valueOf);
        }
        if (rawType == Long.class) {
            return (ParamConverter<T>) new Converter<>(Long::valueOf);
        }
        return null;
    }

    private record Converter<N extends Number>(java.util.function.Function<String, N> parse)
            implements ParamConverter<N> {

        @Override
        public N fromString(String value) {
            if (value == null) {
                return null;
            }
            try {
                return parse.apply(value.trim());
            } catch (NumberFormatException e) {
                throw new InvalidParam(value);
            }
        }

        @Override
        public String toString(N value) {
            return value == null ? null : value.toString();
        }
    }
}
