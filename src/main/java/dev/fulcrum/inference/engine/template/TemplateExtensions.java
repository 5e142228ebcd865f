package dev.fulcrum.inference.engine.template;

import java.time.LocalDateTime;
import java.time.format.TextStyle;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.hubspot.jinjava.el.ext.NamedParameter;
import com.hubspot.jinjava.interpret.Context;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import com.hubspot.jinjava.objects.collections.PyMap;

/**
 * What transformers adds to its Jinja2 environment for chat templates: {@code raise_exception}, {@code strftime_now},
 * {@code dict} and its own {@code tojson}.
 */
final class TemplateExtensions {

    /** What {@code raise_exception(message)} throws; Jinjava records it as an error of the render. */
    static final class Raised extends RuntimeException {
        Raised(String message) {
            super(message, null, false, false);
        }
    }

    /** The render's local time, for {@code strftime_now}: bound under a name no template can write. */
    static final String NOW = "strftime_now()";

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
        throw new Raised(PythonValues.str(message));
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
        JinjavaInterpreter interpreter = JinjavaInterpreter.getCurrent();
        Object now = interpreter == null ? null : interpreter.getContext().get(NOW);
        return strftime(now instanceof LocalDateTime ? (LocalDateTime) now : LocalDateTime.now(), format);
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
}
