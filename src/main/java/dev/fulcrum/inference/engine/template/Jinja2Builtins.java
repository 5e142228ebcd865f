package dev.fulcrum.inference.engine.template;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.objects.collections.PyList;

/**
 * Jinja2's built-in filters and tests that Jinjava lacks or has otherwise: {@code trim} (Python's {@code str.strip}),
 * {@code default}, {@code items}, {@code dictsort}, {@code sort}, {@code min}, {@code max}, {@code sum}, the tests
 * {@code iterable} and {@code sequence} (true of strings), {@code number} (true of booleans) and the truth
 * {@code select} tests by.
 */
final class Jinja2Builtins {

    private Jinja2Builtins() {
    }

    static void register(Context globals) {
        globals.registerFilter(new Items());
        globals.registerFilter(new Default("default"));
        globals.registerFilter(new Default("d"));
        globals.registerFilter(new DictSort());
        globals.registerFilter(new Extreme("min", -1));
        globals.registerFilter(new Extreme("max", 1));
        globals.registerFilter(new Sum());
        globals.registerFilter(new Trim());
        globals.registerExpTest(new Iterable());
        globals.registerExpTest(new Truthy());
        globals.registerExpTest(new Sequence());
        globals.registerExpTest(new IsNumber());
        globals.registerFilter(new Sort());
    }

    /**
     * Jinja2's {@code iterable} test: strings are iterable in Python (Llama 3.x prints a string tool result as JSON),
     * and so is an undefined value (Hermes 3 writes {@code Union[]} for a schema without a type).
     */
    static final class Iterable implements ExpTest {

        @Override
        public String getName() {
            return "iterable";
        }

        @Override
        public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
            // null is also Jinja2's undefined, which iterates as empty
            return var == null || var instanceof CharSequence || var instanceof java.lang.Iterable || var instanceof Map
                    || var.getClass().isArray();
        }
    }

    /** Jinja2's {@code sequence} test: strings and mappings are sequences in Python too. */
    static final class Sequence implements ExpTest {

        @Override
        public String getName() {
            return "sequence";
        }

        @Override
        public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
            return var instanceof CharSequence || var instanceof Collection || var instanceof Map
                    || (var != null && var.getClass().isArray());
        }
    }

    /** Jinja2's {@code number} test: Python's booleans are numbers. */
    static final class IsNumber implements ExpTest {

        @Override
        public String getName() {
            return "number";
        }

        @Override
        public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
            return var instanceof Number || var instanceof Boolean;
        }
    }

    /** Jinja2's {@code sort(reverse=False, case_sensitive=False, attribute=None)}; Jinjava's ignores the keywords. */
    static final class Sort implements Filter {

        @Override
        public String getName() {
            return "sort";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            boolean reverse = PythonValues.truthy(args.length > 0 ? args[0] : kwargs.get("reverse"));
            boolean caseSensitive = PythonValues.truthy(args.length > 1 ? args[1] : kwargs.get("case_sensitive"));
            Object attribute = args.length > 2 ? args[2] : kwargs.get("attribute");
            List<Object> items = new ArrayList<>();
            if (var instanceof Map) {
                items.addAll(((Map<?, ?>) var).keySet());
            } else if (var instanceof java.lang.Iterable) {
                ((java.lang.Iterable<?>) var).forEach(items::add);
            }
            Comparator<Object> order = (a, b) -> compare(attribute(a, attribute), attribute(b, attribute),
                    caseSensitive);
            items.sort(reverse ? order.reversed() : order);
            return new PyList(items);
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, args, Map.of());
        }

        /** Jinja2's attribute path: {@code 'a.b'} or {@code 'a.0'}. */
        private static Object attribute(Object item, Object path) {
            if (path == null) {
                return item;
            }
            Object value = item;
            for (String part : path.toString().split("\\.")) {
                if (value instanceof Map) {
                    value = ((Map<?, ?>) value).get(part);
                } else if (value instanceof List && part.matches("[0-9]+")) {
                    int index = Integer.parseInt(part);
                    value = index < ((List<?>) value).size() ? ((List<?>) value).get(index) : null;
                } else {
                    return null;
                }
            }
            return value;
        }
    }

    /**
     * Jinja2's {@code default(value, default_value='', boolean=False)}: Jinjava's turns the default into a string
     * ({@code default(0)} is {@code '0'}) and needs an argument.
     */
    static final class Default implements Filter {
        private final String name;

        Default(String name) {
            this.name = name;
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object fallback = args.length > 0 ? args[0] : kwargs.getOrDefault("default_value", "");
            boolean onFalse = PythonValues.truthy(args.length > 1 ? args[1] : kwargs.get("boolean"));
            return (onFalse ? !PythonValues.truthy(var) : var == null) ? fallback : var;
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, args, Map.of());
        }
    }

    /** The test {@code select()} and {@code reject()} apply without one: Python's truth. */
    static final class Truthy implements ExpTest {

        @Override
        public String getName() {
            return "truthy";
        }

        @Override
        public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
            return PythonValues.truthy(var);
        }
    }

    /** Jinja2's {@code items} filter: a mapping's key and value pairs, for {@code for k, v in d | items}. */
    static final class Items implements Filter {

        @Override
        public String getName() {
            return "items";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            List<Object> pairs = new ArrayList<>();
            if (var instanceof Map) {
                ((Map<?, ?>) var)
                        .forEach((key, value) -> pairs.add(new PyList(new ArrayList<>(Arrays.asList(key, value)))));
            }
            return new PyList(pairs);
        }
    }

    /** Jinja2's {@code dictsort}: (key, value) pairs by key, case-insensitively unless asked. */
    static final class DictSort implements Filter {

        @Override
        public String getName() {
            return "dictsort";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            boolean caseSensitive = Boolean.TRUE.equals(args.length > 0 ? args[0] : kwargs.get("case_sensitive"));
            boolean byValue = "value".equals(args.length > 1 ? args[1] : kwargs.get("by"));
            boolean reverse = Boolean.TRUE.equals(args.length > 2 ? args[2] : kwargs.get("reverse"));
            @SuppressWarnings("unchecked")
            List<List<Object>> pairs = (List<List<Object>>) (List<?>) new Items().filter(var, interpreter);
            Comparator<List<Object>> order = Comparator.comparing(pair -> pair.get(byValue ? 1 : 0),
                    (a, b) -> compare(a, b, caseSensitive));
            pairs.sort(reverse ? order.reversed() : order);
            return pairs;
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, args, Map.of());
        }
    }

    /** Jinja2's {@code min} and {@code max}: strings compared case-insensitively unless asked. */
    static final class Extreme implements Filter {
        private final String name;
        private final int sign;

        Extreme(String name, int sign) {
            this.name = name;
            this.sign = sign;
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            boolean caseSensitive = Boolean.TRUE.equals(args.length > 0 ? args[0] : kwargs.get("case_sensitive"));
            Object best = null;
            for (Object item : var instanceof java.lang.Iterable ? (java.lang.Iterable<?>) var : List.of()) {
                if (best == null || sign * compare(item, best, caseSensitive) > 0) {
                    best = item;
                }
            }
            return best;
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, args, Map.of());
        }
    }

    /** Jinja2's {@code sum}: whole numbers stay whole, as in Python. */
    static final class Sum implements Filter {

        @Override
        public String getName() {
            return "sum";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            long whole = 0;
            double total = 0;
            boolean fraction = false;
            for (Object item : var instanceof java.lang.Iterable ? (java.lang.Iterable<?>) var : List.of()) {
                if (item instanceof Double || item instanceof Float || item instanceof BigDecimal) {
                    fraction = true;
                }
                whole += ((Number) item).longValue();
                total += ((Number) item).doubleValue();
            }
            return fraction ? (Object) total : (Object) whole;
        }
    }

    private static int compare(Object a, Object b, boolean caseSensitive) {
        if (a instanceof Number && b instanceof Number) {
            return Double.compare(((Number) a).doubleValue(), ((Number) b).doubleValue());
        }
        String left = String.valueOf(a);
        String right = String.valueOf(b);
        return caseSensitive ? left.compareTo(right)
                : left.toLowerCase(Locale.ROOT).compareTo(right.toLowerCase(Locale.ROOT));
    }

    /** Jinja2's {@code trim(value, chars=None)}: Python's {@code str.strip}, which also strips Unicode spaces. */
    static final class Trim implements Filter {

        @Override
        public String getName() {
            return "trim";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object chars = args.length > 0 ? args[0] : kwargs.get("chars");
            return PythonStrings.strip(var == null ? "" : var.toString(), chars == null ? null : chars.toString(), true,
                    true);
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, args, Map.of());
        }
    }
}
