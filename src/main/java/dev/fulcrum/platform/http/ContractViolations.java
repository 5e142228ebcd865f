package dev.fulcrum.platform.http;

import java.lang.annotation.Annotation;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.validation.ConstraintViolation;
import jakarta.validation.ConstraintViolationException;
import jakarta.validation.ElementKind;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import jakarta.ws.rs.FormParam;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;

import org.jboss.resteasy.reactive.server.SimpleResourceInfo;

import com.fasterxml.jackson.annotation.JsonProperty;

import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The constraints of the contract a request broke, as the generated interfaces carry them ({@code @Pattern},
 * {@code @Size}, {@code @NotNull}, {@code @Min}, {@code @Max}), turned into violations located as FastAPI locates them:
 * {@code ["path", name]}, {@code ["query", name]}, {@code ["body", property, index, ...]} with the JSON names of the
 * properties. The messages are the platform's own, the same whichever interface was called, or those a pattern of the
 * contract gives in words ({@code x-pattern-message}).
 */
final class ContractViolations {

    /** The name rule of the contract: letters, digits, {@code _ . -}, starting with a letter or digit. */
    private static final Pattern NAME_RULE = Pattern.compile("\\^?\\[A-Za-z0-9]\\[A-Za-z0-9_.-]\\{0,(\\d+)}\\$?");

    private ContractViolations() {
    }

    /** The violations of request values, in parameter order; empty when one concerns a return value. */
    static List<Violation> of(ConstraintViolationException e, SimpleResourceInfo resource) {
        List<Located> located = new ArrayList<>();
        for (ConstraintViolation<?> v : e.getConstraintViolations()) {
            Located l = locate(v, resource);
            if (l == null) {
                return List.of();
            }
            located.add(l);
        }
        located.sort(Comparator.comparingInt(Located::parameter).thenComparing(l -> l.violation().loc().toString()));
        return located.stream().map(Located::violation).toList();
    }

    private record Located(int parameter, Violation violation) {
    }

    private static Located locate(ConstraintViolation<?> v, SimpleResourceInfo resource) {
        List<Object> loc = new ArrayList<>();
        int parameter = -1;
        Annotation[] annotations = {};
        Type type = null;
        jakarta.validation.Path.MethodNode called = null;
        for (jakarta.validation.Path.Node node : v.getPropertyPath()) {
            ElementKind kind = node.getKind();
            if (kind == ElementKind.RETURN_VALUE || kind == ElementKind.CROSS_PARAMETER) {
                return null;
            }
            if (kind == ElementKind.METHOD) {
                called = node.as(jakarta.validation.Path.MethodNode.class);
                continue;
            }
            if (kind == ElementKind.CONSTRUCTOR || kind == ElementKind.BEAN) {
                continue;
            }
            if (kind == ElementKind.PARAMETER) {
                parameter = node.as(jakarta.validation.Path.ParameterNode.class).getParameterIndex();
                Method method = method(resource, v.getRootBeanClass(), called);
                if (method == null || parameter >= method.getParameterCount()) {
                    return null;
                }
                annotations = method.getParameterAnnotations()[parameter];
                type = method.getGenericParameterTypes()[parameter];
                loc.addAll(source(annotations));
                continue;
            }
            if (node.isInIterable() && node.getIndex() != null) {
                loc.add(node.getIndex());
                type = element(type);
            }
            if (kind == ElementKind.PROPERTY) {
                Class<?> owner = raw(type);
                Field field = field(owner, node.getName());
                Method getter = getter(owner, node.getName());
                loc.add(jsonName(field, getter, node.getName()));
                annotations = getter != null ? getter.getAnnotations() : new Annotation[0];
                type = field != null ? field.getGenericType()
                        : getter != null ? getter.getGenericReturnType() : Object.class;
            }
        }
        if (parameter < 0) {
            return null;
        }
        return new Located(parameter, message(v, annotations, loc));
    }

    /** Where a parameter's value comes from: its path, query or header name, or the body. */
    private static List<Object> source(Annotation[] annotations) {
        for (Annotation a : annotations) {
            if (a instanceof PathParam p) {
                return List.of("path", p.value());
            }
            if (a instanceof QueryParam q) {
                return List.of("query", q.value());
            }
            if (a instanceof HeaderParam h) {
                return List.of("header", h.value());
            }
            if (a instanceof FormParam f) {
                return List.of("body", f.value());
            }
            if (a.annotationType().getName().equals("org.jboss.resteasy.reactive.RestForm")) {
                return List.of("body");
            }
        }
        return List.of("body");
    }

    /**
     * The method the violation is of, as the generated interface declares it (with the parameters' annotations). It is
     * the matched resource's own, unless a resource (a console page) called another interface's operation in process:
     * then the violation names that operation, which is found on the interfaces of the bean it was called on.
     */
    private static Method method(SimpleResourceInfo resource, Class<?> bean,
            jakarta.validation.Path.MethodNode called) {
        if (called != null && (resource == null || !called.getName().equals(resource.getMethodName())
                || !List.of(called.getParameterTypes()).equals(List.of(resource.parameterTypes())))) {
            Class<?>[] types = called.getParameterTypes().toArray(Class<?>[]::new);
            for (Class<?> c = bean; c != null && c != Object.class; c = c.getSuperclass()) {
                for (Class<?> declared : c.getInterfaces()) {
                    try {
                        return declared.getMethod(called.getName(), types);
                    } catch (NoSuchMethodException e) {
                        // another interface of the bean declares it
                    }
                }
            }
            return null;
        }
        if (resource == null) {
            return null;
        }
        for (Class<?> declared : resource.getResourceClass().getInterfaces()) {
            try {
                return declared.getMethod(resource.getMethodName(), resource.parameterTypes());
            } catch (NoSuchMethodException e) {
                // another interface of the resource declares it
            }
        }
        try {
            return resource.getResourceClass().getMethod(resource.getMethodName(), resource.parameterTypes());
        } catch (NoSuchMethodException none) {
            return null;
        }
    }

    private static Violation message(ConstraintViolation<?> v, Annotation[] element, List<Object> loc) {
        Annotation constraint = v.getConstraintDescriptor().getAnnotation();
        if (constraint instanceof NotNull) {
            return new Violation(loc, "Field required", "missing");
        }
        if (constraint instanceof jakarta.validation.constraints.Pattern p) {
            if (!p.message().startsWith("{")) {
                // the contract's own words for the rule (x-pattern-message)
                return new Violation(loc, p.message(), "string_pattern_mismatch");
            }
            Matcher name = NAME_RULE.matcher(p.regexp());
            if (name.matches()) {
                return new Violation(loc,
                        "Must be 1 to " + (Integer.parseInt(name.group(1)) + 1)
                                + " letters, digits, '_', '.' or '-', starting with a letter or digit",
                        "string_pattern_mismatch");
            }
            return new Violation(loc, "String should match pattern '" + p.regexp() + "'", "string_pattern_mismatch");
        }
        if (constraint instanceof Size s) {
            boolean text = v.getInvalidValue() instanceof CharSequence;
            if (size(v.getInvalidValue()) > s.max()) {
                return new Violation(loc, "Must be at most " + count(s.max(), text),
                        text ? "string_too_long" : "too_long");
            }
            return new Violation(loc, "Must be at least " + count(s.min(), text),
                    text ? "string_too_short" : "too_short");
        }
        String low = bound(element, true);
        String high = bound(element, false);
        boolean lower = constraint instanceof Min || constraint instanceof DecimalMin;
        boolean upper = constraint instanceof Max || constraint instanceof DecimalMax;
        if ((lower || upper) && low != null && high != null) {
            return new Violation(loc, "Must be between " + low + " and " + high, "less_than_equal");
        }
        if (lower) {
            return new Violation(loc, "Must be " + low + " or more", "greater_than_equal");
        }
        if (upper) {
            return new Violation(loc, "Must be " + high + " or less", "less_than_equal");
        }
        return new Violation(loc, v.getMessage(), "value_error");
    }

    private static String count(int n, boolean text) {
        return n + (text ? n == 1 ? " character" : " characters" : n == 1 ? " item" : " items");
    }

    private static int size(Object value) {
        if (value instanceof CharSequence text) {
            return text.length();
        }
        if (value instanceof java.util.Collection<?> c) {
            return c.size();
        }
        if (value instanceof java.util.Map<?, ?> m) {
            return m.size();
        }
        return value != null && value.getClass().isArray() ? java.lang.reflect.Array.getLength(value) : 0;
    }

    /** The lower or upper bound an element declares, if any. */
    private static String bound(Annotation[] element, boolean lower) {
        for (Annotation a : element) {
            if (lower && a instanceof Min m) {
                return String.valueOf(m.value());
            }
            if (lower && a instanceof DecimalMin m) {
                return m.value();
            }
            if (!lower && a instanceof Max m) {
                return String.valueOf(m.value());
            }
            if (!lower && a instanceof DecimalMax m) {
                return m.value();
            }
        }
        return null;
    }

    private static String jsonName(Field field, Method getter, String name) {
        JsonProperty property = getter != null ? getter.getAnnotation(JsonProperty.class) : null;
        if ((property == null || property.value().isEmpty()) && field != null) {
            property = field.getAnnotation(JsonProperty.class);
        }
        return property != null && !property.value().isEmpty() ? property.value() : name;
    }

    private static Field field(Class<?> owner, String name) {
        for (Class<?> c = owner; c != null && c != Object.class; c = c.getSuperclass()) {
            try {
                return c.getDeclaredField(name);
            } catch (NoSuchFieldException e) {
                // a superclass may declare it
            }
        }
        return null;
    }

    private static Method getter(Class<?> owner, String name) {
        if (owner == null || name == null || name.isEmpty()) {
            return null;
        }
        String suffix = Character.toUpperCase(name.charAt(0)) + name.substring(1);
        for (String prefix : List.of("get", "is")) {
            try {
                return owner.getMethod(prefix + suffix);
            } catch (NoSuchMethodException e) {
                // try the next accessor form
            }
        }
        return null;
    }

    /** The element type of a list (or the type itself). */
    private static Type element(Type type) {
        if (type instanceof ParameterizedType p && p.getActualTypeArguments().length == 1) {
            return p.getActualTypeArguments()[0];
        }
        return type;
    }

    private static Class<?> raw(Type type) {
        if (type instanceof Class<?> c) {
            return c;
        }
        if (type instanceof ParameterizedType p && p.getRawType() instanceof Class<?> c) {
            return c;
        }
        return Object.class;
    }
}
