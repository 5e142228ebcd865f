package dev.fulcrum.inference.engine.llama;

import java.math.BigDecimal;
import java.time.LocalDateTime;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.hubspot.jinjava.el.ext.NamedParameter;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import com.hubspot.jinjava.objects.collections.PyList;
import com.hubspot.jinjava.objects.collections.PyMap;

/**
 * What transformers adds to its Jinja2 environment for chat templates ({@code raise_exception}, {@code strftime_now},
 * {@code dict}, its own {@code tojson}), and Jinja2's built-ins that Jinjava lacks or has otherwise: {@code trim}
 * (Python's {@code str.strip}), {@code default}, {@code items}, {@code dictsort}, {@code min}, {@code max},
 * {@code sum}, the {@code iterable} test (true of strings).
 */
final class TemplateExtensions {

    /** What {@code raise_exception(message)} throws; Jinjava records it as an error of the render. */
    static final class Raised extends RuntimeException {
        Raised(String message) {
            super(message, null, false, false);
        }
    }

    private TemplateExtensions() {
    }

    static void register(Context globals) {
        globals.registerFunction(new ELFunctionDefinition("", "raise_exception", TemplateExtensions.class,
                "raiseException", Object.class));
        globals.registerFunction(
                new ELFunctionDefinition("", "strftime_now", TemplateExtensions.class, "strftimeNow", String.class));
        globals.registerFunction(
                new ELFunctionDefinition("", "dict", TemplateExtensions.class, "dict", Object[].class));
        globals.registerFilter(new ToJson());
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
    }

    /** The {@link Raised} among {@code error}'s causes, if any. */
    static Raised raised(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof Raised) {
                return (Raised) cause;
            }
        }
        return null;
    }

    public static Object raiseException(Object message) {
        throw new Raised(String.valueOf(message));
    }

    /** transformers' {@code dict(...)} global: {@code dict(a=1)}, {@code dict(other, b=2)}. */
    public static Map<String, Object> dict(Object... parameters) {
        Map<String, Object> dict = new LinkedHashMap<>();
        for (Object parameter : parameters) {
            if (parameter instanceof NamedParameter) {
                dict.put(((NamedParameter) parameter).getName(), ((NamedParameter) parameter).getValue());
            } else if (parameter instanceof Map) {
                ((Map<?, ?>) parameter).forEach((key, value) -> dict.put(String.valueOf(key), value));
            }
        }
        return new PyMap(dict);
    }

    public static String strftimeNow(String format) {
        return strftime(LocalDateTime.now(), format);
    }

    /** C's {@code strftime} in the C locale, with glibc's {@code %-d} (no padding), as Python on Linux has it. */
    static String strftime(LocalDateTime time, String format) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                out.append(c);
                continue;
            }
            char directive = format.charAt(++i);
            boolean pad = true;
            if (directive == '-' && i + 1 < format.length()) {
                pad = false;
                directive = format.charAt(++i);
            }
            String field = field(time, directive, pad);
            out.append(field != null ? field : "%" + (pad ? "" : "-") + directive);
        }
        return out.toString();
    }

    private static String field(LocalDateTime time, char directive, boolean pad) {
        int hour12 = time.getHour() % 12 == 0 ? 12 : time.getHour() % 12;
        return switch (directive) {
            case 'a' -> time.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH);
            case 'A' -> time.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH);
            case 'b', 'h' -> time.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH);
            case 'B' -> time.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH);
            case 'd' -> number(time.getDayOfMonth(), 2, pad);
            case 'e' -> pad ? String.format("%2d", time.getDayOfMonth()) : String.valueOf(time.getDayOfMonth());
            case 'm' -> number(time.getMonthValue(), 2, pad);
            case 'y' -> number(time.getYear() % 100, 2, pad);
            case 'Y' -> String.valueOf(time.getYear());
            case 'H' -> number(time.getHour(), 2, pad);
            case 'I' -> number(hour12, 2, pad);
            case 'M' -> number(time.getMinute(), 2, pad);
            case 'S' -> number(time.getSecond(), 2, pad);
            case 'p' -> time.getHour() < 12 ? "AM" : "PM";
            case 'j' -> number(time.getDayOfYear(), 3, pad);
            case 'f' -> number(time.getNano() / 1000, 6, true);
            case '%' -> "%";
            default -> null;
        };
    }

    private static String number(int value, int width, boolean pad) {
        return pad ? String.format("%0" + width + "d", value) : String.valueOf(value);
    }

    /**
     * {@code tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False)}: transformers replaces
     * Jinja2's filter (which escapes HTML characters) with {@code json.dumps}, and so does this one Jinjava's.
     */
    static final class ToJson implements Filter {

        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object ensureAscii = argument(args, kwargs, 0, "ensure_ascii");
            Object indent = argument(args, kwargs, 1, "indent");
            Object separators = argument(args, kwargs, 2, "separators");
            Object sortKeys = argument(args, kwargs, 3, "sort_keys");
            String indentText = indent == null ? null
                    : indent instanceof Number ? " ".repeat(Math.max(0, ((Number) indent).intValue()))
                            : indent.toString();
            List<String> separatorPair = null;
            if (separators instanceof List && ((List<?>) separators).size() == 2) {
                separatorPair = List.of(((List<?>) separators).get(0).toString(),
                        ((List<?>) separators).get(1).toString());
            }
            return new PythonJson(indentText, separatorPair, Boolean.TRUE.equals(ensureAscii),
                    Boolean.TRUE.equals(sortKeys)).write(var);
        }

        @Override
        public Object filter(Object var, JinjavaInterpreter interpreter, String... args) {
            return filter(var, interpreter, new Object[0], Map.of());
        }

        private static Object argument(Object[] args, Map<String, Object> kwargs, int position, String name) {
            return args.length > position ? args[position] : kwargs.get(name);
        }
    }

    /**
     * Jinja2's {@code iterable} test: strings are iterable in Python (Llama 3.x prints a string tool result as JSON).
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
